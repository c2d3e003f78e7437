"""The http arm's optional answer endpoint, end to end against the reference server.

With `arm_options.http.service_answer=true` the service answers every question itself
(the reference server with the harness's offline reader over its own retrieval), the
records say `answer_path: service`, and the answer is fetched with the retrieval, so
`phase=evaluate` still makes zero calls to the service.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.support.e2e_support import load_records, run_cli, strip_timings
from tests.support.live_server import reference_server

ON = "arm_options.http.service_answer=true"


def _args(url: str, out: Path) -> list[str]:
    return ["dataset=smoke", f"out={out}", "progress=false", f"arm_options.http.base_url={url}"]


def _calls(url: str) -> dict[str, int]:
    return dict(httpx.get(f"{url}/v1/stats", timeout=120).json()["calls"])


@pytest.mark.slow
def test_service_answers_are_recorded_as_such_and_evaluate_calls_nothing(tmp_path: Path) -> None:
    arms = "arms=[neuromorphic,http]"
    with reference_server(tmp_path / "data") as url:
        harness = run_cli(arms, *_args(url, tmp_path / "harness"))
        assert harness.returncode == 0, harness.stderr[-2000:]
        assert "answer" not in _calls(url)  # off by default
        whole = run_cli(arms, *_args(url, tmp_path / "all"), ON)
        assert whole.returncode == 0, whole.stderr[-2000:]
        assert _calls(url)["answer"] == 16 + 1  # every question, plus the start-up probe

        predicted = run_cli(arms, *_args(url, tmp_path / "split"), ON, "phase=predict")
        assert predicted.returncode == 0, predicted.stderr[-2000:]
        before = _calls(url)
        evaluated = run_cli(arms, *_args(url, tmp_path / "split"), ON, "phase=evaluate")
        assert evaluated.returncode == 0, evaluated.stderr[-2000:]
        assert _calls(url) == before

        suite = run_cli(
            "suite.path=datasets/fixtures/suites/smoke.json",
            "arms=[http]",
            ON,
            "suite.answer=true",
            f"arm_options.http.base_url={url}",
            f"out={tmp_path / 'suite'}",
            "progress=false",
            module="bench.suite",
        )
        assert suite.returncode == 0, suite.stderr[-2000:]

    plain, served = load_records(tmp_path / "harness"), load_records(tmp_path / "all")
    assert len(served) == 16
    for qid, record in served.items():
        http, engine = record["arms"]["http"], record["arms"]["neuromorphic"]
        assert http["answer_path"] == "service"
        assert http["answerer"] == "service:offline-extractive"
        assert http["usage"] == {"prompt_tokens": 0, "completion_tokens": 0}
        assert "answer_path" not in engine  # in-process arms: the harness, as before
        assert plain[qid]["arms"]["http"]["answer_path"] == "harness"
        # The reference server reads its own context with the same offline reader
        # the harness would use, so the answers agree with the harness's.
        assert http["answer"] == plain[qid]["arms"]["http"]["answer"]
        assert http["retrieved_ids"] == engine["retrieved_ids"]
    split = load_records(tmp_path / "split")
    assert {q: strip_timings(r) for q, r in split.items()} == {
        q: strip_timings(r) for q, r in served.items()
    }
    card = json.loads((tmp_path / "suite" / "comparable" / "http.json").read_text())
    assert card["metadata"]["answer_path"] == "service"
    answers = {e["answer"] for e in card["evaluations"]}
    assert answers and answers != {None}
