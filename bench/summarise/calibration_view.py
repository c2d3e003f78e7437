"""Judge calibration tables, and the calibration of a run's own judge beside its accuracy.

`calibration.json` (written by `python -m bench.calibrate`) lists judges and cells
`{judge, set, truth, group, n, accepted, no_verdict, rate, ci}`. A run finds its
judge's calibration in `<run dir>/calibration.json` (calibrate with
`calibrate.out=<run dir>`, which also reuses the run's response cache): the run's
outcome rule names the judge — `f1>=t` is matched by name, `judge:<id>` by the judge's
model and prompt SHA-256 from run.json (so a calibration of the same judge made
elsewhere and copied in counts, and one of another model does not). A run with an
LLM judge and no matching calibration says so. Standard library only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.runmeta import RunMeta
from bench.scoring.rules import Outcome
from bench.summarise.model import group_label
from bench.untrusted import read_json

CALIBRATION_FILE = "calibration.json"
FORMAT = "armbench-calibration/1"
ALL = "all"
LENIENT_LOWER_BOUND = 0.2
"""A run's judge is flagged lenient when a calibration set of known-wrong answers shows it
accepting them with the 95% interval's lower end at or above this share: at least one wrong
answer in five passes, beyond sampling noise (issue 32)."""
STRICT_UPPER_BOUND = 0.8
"""A run's judge is *strict* when the gold answers' acceptance interval ends below this share:
it rejects at least one right answer in five, beyond sampling noise (the mirror of lenient)."""


def _cell_text(cell: dict[str, Any]) -> str:
    n, rate, ci = cell.get("n") or 0, cell.get("rate"), cell.get("ci")
    if not n or rate is None or not ci:
        return "—"
    return f"{100 * rate:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}] ({n})"


def _label(group: str, locomo_style: bool) -> str:
    return ALL if group == ALL else group_label(group, locomo_style=locomo_style)


def render_judge_table(cells: list[dict[str, Any]], locomo_style: bool = True) -> list[str]:
    """One judge's cells: a row per set, a column per group; each `rate [95% CI] (n)`."""
    groups = list(dict.fromkeys(c["group"] for c in cells))
    groups = [ALL, *sorted(g for g in groups if g != ALL)]
    sets = list(dict.fromkeys((c["set"], c["truth"]) for c in cells))
    header = ["set (truth)", *(_label(g, locomo_style) for g in groups)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, truth in sets:
        row = {c["group"]: c for c in cells if c["set"] == name}
        cells_text = [_cell_text(row[g]) if g in row else "—" for g in groups]
        lines.append(f"| {name} ({truth}) | " + " | ".join(cells_text) + " |")
    return lines


def render_calibration(data: dict[str, Any], locomo_style: bool = True) -> list[str]:
    """Every judge's table, each titled with the judge's name and model."""
    out: list[str] = []
    for judge in data.get("judges", []):
        cells = [c for c in data.get("cells", []) if c.get("judge") == judge.get("name")]
        if not cells:
            continue
        model = judge.get("model")
        about = f" ({model}, prompt {str(judge.get('prompt_hash') or '')[:12]})" if model else ""
        out += ["", f"### {judge.get('name')}{about}", ""]
        out += render_judge_table(cells, locomo_style)
    return out


def read_calibration(path: Path) -> dict[str, Any] | None:
    """The parsed calibration file, or None when absent or not in the format."""
    try:
        data = read_json(path)
    except ValueError:  # UntrustedJSONError: absent, unreadable or not JSON
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def _run_judge(meta: RunMeta | None, outcome: str) -> tuple[str, dict[str, Any] | None]:
    """The run's judge: (name, {model, prompt_hash}) for an LLM judge, (rule, None) else."""
    rule = Outcome.parse(outcome)
    if rule is None or rule.judge_id is None:
        return outcome, None
    for judge in meta.judges if meta else []:
        if judge.judge_id == rule.judge_id:
            return rule.judge_id, {"model": judge.model, "prompt_hash": judge.prompt_hash}
    return rule.judge_id, {"model": None, "prompt_hash": None}


def _sentences(cells: list[dict[str, Any]], locomo_style: bool) -> list[str]:
    out = []
    for cell in cells:
        if cell["truth"] != "wrong" or cell["group"] == ALL or not cell.get("ci"):
            continue
        lo, hi = (round(100 * v) for v in cell["ci"])
        out.append(
            f"this judge accepted {100 * cell['rate']:.0f}% [{lo}, {hi}] of {cell['set']} "
            f"wrong answers on {_label(cell['group'], locomo_style)} questions (n={cell['n']})"
        )
    return out


def calibration_cells(run_dir: Path, meta: RunMeta | None, outcome: str) -> dict[str, Any]:
    """`{judge, cells}`: the run's judge and its calibration cells (None when it has none)."""
    name, key = _run_judge(meta, outcome)
    data = read_calibration(run_dir / CALIBRATION_FILE)
    matched = _match(data, name, key)
    cells = None
    if matched is not None and data is not None:
        cells = [c for c in data.get("cells", []) if c.get("judge") == matched.get("name")]
    return {"judge": name, "cells": cells}


def lenient_judges(run_dir: Path, meta: RunMeta | None, outcome: str) -> dict[str, str]:
    """`{judge: why}` when the run's judge's calibration finds it lenient, else `{}`.

    Lenient: on some set of known-wrong answers (all groups), the false-accept rate's 95%
    interval starts at `LENIENT_LOWER_BOUND` or above. The reason names the worst set.
    """
    found = calibration_cells(run_dir, meta, outcome)
    worst: tuple[float, str] | None = None
    for cell in found["cells"] or []:
        ci, rate = cell.get("ci"), cell.get("rate")
        if cell.get("truth") != "wrong" or cell.get("group") != ALL:
            continue
        if not (isinstance(ci, list) and len(ci) == 2 and isinstance(rate, int | float)):
            continue
        low, high = ci
        lenient = isinstance(low, int | float) and low >= LENIENT_LOWER_BOUND
        if not lenient or (worst is not None and rate <= worst[0]):
            continue
        why = (
            f"accepts {100 * rate:.0f}% [{100 * low:.0f}, {100 * high:.0f}] of known-wrong "
            f"answers ({cell.get('set')}, n={cell.get('n')}; {CALIBRATION_FILE})"
        )
        worst = (float(rate), why)
    return {found["judge"]: worst[1]} if worst else {}


def _match(
    data: dict[str, Any] | None, name: str, key: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The calibration's entry for the run's judge: by name (a rule), else model and hash."""
    for judge in (data or {}).get("judges", []):
        if key is None and judge.get("name") == name:
            return dict(judge)
        if key is not None and (judge.get("model"), judge.get("prompt_hash")) == (
            key["model"],
            key["prompt_hash"],
        ):
            return dict(judge)
    return None


def calibration_section(
    run_dir: Path, meta: RunMeta | None, outcome: str, locomo_style: bool
) -> list[str]:
    """The run's judge's calibration table and false-accept sentences, or why there is none."""
    name, key = _run_judge(meta, outcome)
    data = read_calibration(run_dir / CALIBRATION_FILE)
    if data is None and key is None:
        return []  # an offline rule with no calibration file: nothing to say
    matched = _match(data, name, key)
    title = ["", "## Judge calibration", ""]
    if matched is None or data is None:
        return [
            *title,
            f"judge {name} has no calibration in {CALIBRATION_FILE}: how lenient it is is "
            f"unmeasured (python -m bench.calibrate ... calibrate.out={run_dir})",
        ]
    cells = [c for c in data.get("cells", []) if c.get("judge") == matched.get("name")]
    intro = f"{name}: acceptance per answer set of known truth (rate [Wilson 95%] (n))."
    lines = [*title, intro, "", *render_judge_table(cells, locomo_style), ""]
    return lines + [f"- {s}" for s in _sentences(cells, locomo_style)]


def _pooled(cells: list[dict[str, Any]], truth: str) -> tuple[int, int] | None:
    """(accepted, n) over every `all`-group cell of one truth; None when there is none."""
    ok: list[tuple[int, int]] = []
    for cell in cells:
        a, n = cell.get("accepted"), cell.get("n")
        if cell.get("truth") != truth or cell.get("group") != ALL:
            continue
        if isinstance(a, int) and isinstance(n, int) and 0 <= a <= n:
            ok.append((a, n))
    total = sum(n for _, n in ok)
    return (sum(a for a, _ in ok), total) if total else None


def calibration_problems(run_dir: Path, meta: RunMeta | None, outcome: str) -> dict[str, str]:
    """Code -> sentence of what the run's judge's calibration says against it, else `{}`.

    - `judge-uncalibrated`: an LLM judge with no matching calibration in `calibration.json`.
    - `judge-uninformative`: the Wilson 95% intervals of the gold answers' acceptance and
      of the known-wrong answers' acceptance (every wrong set pooled) overlap, so the
      calibration cannot show that the judge accepts right answers more often than wrong
      ones (non-overlapping 95% intervals imply a difference; overlap is the conservative
      reading of "not clearly more often").
    - `judge-strict`: the gold acceptance interval ends below `STRICT_UPPER_BOUND`.

    An offline rule (`f1>=t`) with no calibration on file is not flagged here: it is no
    judge, and the outcome rule itself is a reason of its own.
    """
    found = calibration_cells(run_dir, meta, outcome)
    cells, judge = found["cells"], found["judge"]
    rule = Outcome.parse(outcome)
    if cells is None:
        if rule is not None and rule.f1_threshold is not None:
            return {}
        return {
            "judge-uncalibrated": f"judge {judge} has no calibration in {CALIBRATION_FILE}: "
            "how often it accepts wrong answers is unmeasured"
        }
    return _interval_problems(judge, cells)


def _interval_problems(judge: str, cells: list[dict[str, Any]]) -> dict[str, str]:
    """`judge-uninformative` and `judge-strict` from the pooled gold and wrong cells."""
    from bench.summarise.stats import wilson_interval

    out: dict[str, str] = {}
    gold, wrong = _pooled(cells, "right"), _pooled(cells, "wrong")
    gold_ci = wilson_interval(*gold) if gold else None
    wrong_ci = wilson_interval(*wrong) if wrong else None
    if gold and gold_ci and wrong and wrong_ci and gold_ci[0] <= wrong_ci[1]:
        out["judge-uninformative"] = (
            f"judge {judge} accepted {_share(gold)} of gold answers and {_share(wrong)} of "
            "known-wrong ones: the Wilson 95% intervals overlap, it cannot tell right from wrong"
        )
    if gold and gold_ci and gold_ci[1] < STRICT_UPPER_BOUND:
        out["judge-strict"] = (
            f"judge {judge} accepted only {_share(gold)} of gold answers (95% interval below "
            f"{100 * STRICT_UPPER_BOUND:.0f}%): it rejects right answers"
        )
    return out


def _share(counts: tuple[int, int]) -> str:
    """`37.5% (3/8)`."""
    return f"{100 * counts[0] / counts[1]:.1f}% ({counts[0]}/{counts[1]})"
