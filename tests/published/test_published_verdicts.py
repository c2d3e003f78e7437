"""One reader for published verdicts: calibrate and import refuse the same files (issue 40,
defect 6; and, defect 12, row ids with a leading zero or non-ASCII digits).

Before, `bench.calibrate calibrate.answers=FILE` read verdicts its own way: `"yes"`, `1`,
`null` or a list counted as not accepted (a published 60% became 40%), a duplicated row
counted twice and a `metadata.num_runs` disagreeing with the judgments passed, where
`bench.published` import refuses each. Both now read with
`bench.published.evermemos.read_evermemos` and match with `bench.published.match`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.calibrate.cli import main as calibrate_main
from bench.paths import PROJECT_ROOT
from bench.published.cli import main as published_main

SMOKE = PROJECT_ROOT / "datasets" / "fixtures" / "smoke_locomo.json"
ANSWERS = PROJECT_ROOT / "datasets" / "fixtures" / "smoke_eval_results.json"


def _verdict(value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["detailed_results"]["locomo_exp_user_0"][0]["llm_judgments"]["judgment_2"] = value

    return edit


def _duplicate(data: dict[str, Any]) -> None:
    rows = data["detailed_results"]["locomo_exp_user_0"]
    rows.append(copy.deepcopy(rows[0]))


def _row_id(value: str) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["detailed_results"]["locomo_exp_user_0"][0]["question_id"] = value

    return edit


def _num_runs(data: dict[str, Any]) -> None:
    data["metadata"] = {"num_runs": 2, "judge_model": "gpt-4o-mini"}


HOSTILE: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "yes": (_verdict("yes"), "judgment_2 is not true or false"),
    "one": (_verdict(1), "judgment_2 is not true or false"),
    "null": (_verdict(None), "judgment_2 is not true or false"),
    "list": (_verdict([True]), "judgment_2 is not true or false"),
    "duplicated row": (_duplicate, "one row per question"),
    "num_runs": (_num_runs, "metadata.num_runs is 2 but rows carry 3 judgments"),
    "leading zero": (_row_id("locomo_0_qa00"), "'locomo_0_qa00' is not locomo_0_qa<j>"),
    "arabic-indic digit": (_row_id("locomo_0_qa\u0660"), "is not locomo_0_qa<j>"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_calibrate_and_import_refuse_the_same_file_in_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, expected = HOSTILE[case]
    data = json.loads(ANSWERS.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "calibration"
    rc = calibrate_main(["dataset=smoke", f"calibrate.answers={path}", f"calibrate.out={out}"])
    calibrate_err = capsys.readouterr().err
    imported = tmp_path / "imported"
    argv = [
        str(path),
        "--format",
        "evermemos",
        "--out",
        str(imported),
        "--arm",
        "x",
        "--judge-model",
        "j",
    ]
    assert published_main([*argv, "--dataset", str(SMOKE)]) == 2
    import_err = capsys.readouterr().err
    assert rc == 2 and not (out / "calibration.json").exists() and not imported.exists()
    for err in (calibrate_err, import_err):
        assert err.startswith("error: ") and err.count("\n") == 1 and expected in err, err


def test_the_committed_answer_file_still_calibrates(tmp_path: Path) -> None:
    out = tmp_path / "calibration"
    rc = calibrate_main(["dataset=smoke", f"calibrate.answers={ANSWERS}", f"calibrate.out={out}"])
    assert rc == 0 and (out / "calibration.json").is_file()
