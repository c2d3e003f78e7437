"""Results from another namespace are an `error`, never a score (issue 40, defects 7 and 12).

A service that answers every search from another project (an earlier run's namespace
of the same conversations, or items written without this run's markers) used to give
`ok` records with `correct` set. Every marker now carries a tag of the run's nonce and
the unit, so such an item is a retrieval-health error naming the marker, and the run's
closing line names the rule actually broken, not a hidden cap.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from arms.http import HttpArm, HttpConfig
from arms.live_markers import unit_marker
from arms.live_replies import CrossNamespaceError
from bench.arm import ArmServices
from bench.loaders.locomo import load_locomo
from bench.scoring import retrieval_health as rh
from bench.tokens import TokenCounter
from tests.support.e2e_support import ROOT, last_line, load_records, run_cli
from tests.support.hostile_service import HostileService

SMOKE = ROOT / "datasets/fixtures/smoke_locomo.json"
EARLIER = "f" * 32
"""The nonce of an earlier run whose namespace the service answers from."""


def copy_of_smoke(tagged: bool) -> list[dict[str, Any]]:
    """Every smoke turn as another project's item: an earlier run's markers, or bare ids."""
    return [
        {
            "text": f"{t.speaker}: {t.text}",
            "bench": unit_marker(c.conversation_id, t.dia_id, EARLIER) if tagged else t.dia_id,
        }
        for c in load_locomo(SMOKE, "smoke").conversations
        for t in c.turns()
    ]


@pytest.mark.parametrize("tagged", [True, False])
def test_an_item_of_another_runs_namespace_is_a_health_error(tmp_path: Path, tagged: bool) -> None:
    conv = load_locomo(SMOKE, "smoke").conversations[0]
    with HostileService() as service:
        service.add_project("earlier", copy_of_smoke(tagged))
        services = ArmServices(cast(Any, None), TokenCounter(), tmp_path, tmp_path)
        arm = HttpArm("http", HttpConfig(base_url=service.url, probe=False), services)
        arm.ingest(conv)
        assert arm.retrieve(conv.questions[0]).items  # its own namespace: scored
        service.mode.foreign = "earlier"
        with pytest.raises(CrossNamespaceError) as caught:
            arm.retrieve(conv.questions[0])
        arm.close()
    first = copy_of_smoke(tagged)[0]["bench"]
    assert f"returned an item marked {first!r}, not this unit's of this run" in str(caught.value)


@pytest.mark.slow  # a smoke run against the hostile service (~10 s)
def test_a_service_answering_from_another_project_scores_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with HostileService() as service:
        service.add_project("earlier", copy_of_smoke(tagged=False))
        service.mode.foreign = "earlier"
        done = run_cli(
            "dataset=smoke",
            f"out={out}",
            "progress=false",
            "arms=[http]",
            f"arm_options.http.base_url={service.url}",
            "arm_options.http.probe=false",
        )
    assert done.returncode == 1, done.stderr[-2000:]
    results = [r["arms"]["http"] for r in load_records(out).values()]
    assert len(results) == 16 and {r["status"] for r in results} == {"error"}
    assert all("returned an item marked 'D" in r["error"] for r in results)
    assert all(r.get("correct") is None for r in results)
    table = rh.table_from_json(json.loads((out / "run.json").read_text())["retrieval_health"])
    assert all(got.broken() == ["failed"] for got in table["http"].values())
    line = last_line(done.stderr)
    assert "hidden cap" not in done.stderr and "Traceback" not in done.stderr
    assert line.startswith("error: ") and "16 arm results in `error`" in line
    assert "retrieval degraded for 2 arm/unit pair(s) (over 10% of queries failed" in done.stderr
