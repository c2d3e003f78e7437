"""Judge runs: ids, cache versions and the majority outcome."""

from __future__ import annotations

import pytest

from bench.records import Judgement
from bench.scoring.judge_runs import (
    check_runs,
    group_verdict,
    run_ids,
    run_version,
    split_run_id,
)


def _j(jid: str, status: str = "ok", verdict: bool | None = True) -> Judgement:
    return Judgement(jid, status, verdict)  # type: ignore[arg-type]


def test_ids_and_versions() -> None:
    assert run_ids("j", 1) == ["j"]
    assert run_ids("j", 3) == ["j#1", "j#2", "j#3"]
    assert [run_version("v@abc", k) for k in (1, 2)] == ["v@abc", "v@abc#run2"]
    assert split_run_id("mem0#12") == ("mem0", 12)
    assert split_run_id("plain") == ("plain", None)
    assert split_run_id("odd#x") == ("odd#x", None)
    assert check_runs("j", 3) is None
    assert "odd number" in (check_runs("j", 2) or "")
    assert "odd number" in (check_runs("j", 0) or "")


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ({"j#1": _j("j#1"), "j#2": _j("j#2", verdict=False), "j#3": _j("j#3")}, True),
        ({"j#1": _j("j#1", "error", None), "j#2": _j("j#2"), "j#3": _j("j#3")}, True),
        (
            {"j#1": _j("j#1", "error", None), "j#2": _j("j#2"), "j#3": _j("j#3", verdict=False)},
            None,
        ),
        ({"j#1": _j("j#1")}, None),  # one of three runs stored: no majority yet
    ],
)
def test_majority_over_the_configured_runs(stored: dict, expected: bool | None) -> None:
    assert group_verdict(stored, "j", ["j#1", "j#2", "j#3"]) is expected


def test_stale_verdicts_of_another_run_count_do_not_vote() -> None:
    stored = {"j": _j("j", verdict=False), "j#1": _j("j#1"), "j#2": _j("j#2"), "j#3": _j("j#3")}
    assert group_verdict(stored, "j", ["j"]) is False
    assert group_verdict(stored, "j", ["j#1", "j#2", "j#3"]) is True
    assert group_verdict({"j": _j("j", "skipped", None)}, "j") is None
