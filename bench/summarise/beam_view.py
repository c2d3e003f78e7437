"""The summary's BEAM section: per ability and arm, the offline measures and the judge's scores.

Applies to runs whose records carry BEAM scores (`rubric_reach_offline`, or a judgement
with `scores.rubric` from `judge=beam_official`). Every figure is aggregated as BEAM's
`report_results.py` aggregates its scores: the mean over a conversation's questions of
one ability, then the mean over conversations (equal to the plain mean when every
conversation has as many questions of the ability, as the published tiers do).

Offline columns (no LLM; they bound what a reader could score, not what a judge would):
`reach` = mean `rubric_reach_offline`; for event ordering `τ_norm` = (τ_b + 1)/2 of the
word-overlap alignment (`event_order_tau_b_offline`); for abstention `abstained` = share of
answers that decline.

Judge columns (per judge id, the mean over its runs `<id>#<k>` per question first):
`upstream` = BEAM's published figure — the rubric mean with upstream's `int()` cast
(a 0.5 item counts 0), and for event ordering the normalised Kendall τ_norm, which is
what `report_results.py` reports for that ability; `kept 0.5` = the rubric mean with
every 0.5 kept (the ports' reading); `EO score` = τ_norm × F1, `compute_metrics.py`'s
`final_score`. Questions whose τ_b is undefined (a constant ranking) are left out of the
τ figures and counted (`undef.`); upstream's mean would be NaN there. Standard library only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from bench.records import Judgement, QuestionRecord
from bench.scoring.judge_runs import split_run_id

EVENT_ORDERING = "event_ordering"
ABSTENTION = "abstention"
OFFLINE_KEYS = ("reach", "tau_norm_offline", "abstained")
JUDGE_KEYS = ("upstream", "rubric", "kept", "tau_norm", "eo_score")


@dataclass
class Cell:
    """One (arm, ability) row: values per key, grouped by conversation."""

    n: int = 0
    """Answered (`ok`) questions."""
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """key -> conversation id -> values."""
    undefined: dict[str, int] = field(default_factory=dict)
    """key -> questions left out because the value is undefined (τ_b of a constant ranking)."""

    def add(self, key: str, conversation: str, value: float | None) -> None:
        """Add one question's value (None: undefined, counted)."""
        if value is None:
            self.undefined[key] = self.undefined.get(key, 0) + 1
            return
        self.values.setdefault(key, {}).setdefault(conversation, []).append(float(value))

    def mean(self, key: str) -> float | None:
        """Mean over conversations of each conversation's mean (BEAM's aggregation)."""
        groups = [v for v in self.values.get(key, {}).values() if v]
        return sum(sum(g) / len(g) for g in groups) / len(groups) if groups else None

    def count(self, key: str) -> int:
        """Questions with a value for `key`."""
        return sum(len(v) for v in self.values.get(key, {}).values())


Table = dict[str, dict[str, Cell]]
"""arm -> ability -> cell."""


def _tau_norm(tau: Any) -> float | None:
    return None if tau is None else (float(tau) + 1) / 2


def _judge_scores(judgements: dict[str, Judgement]) -> dict[str, list[dict[str, Any]]]:
    """Base judge id -> the `scores` of its runs that hold BEAM rubric scores."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for jid, judgement in judgements.items():
        scores = judgement.scores
        if judgement.status == "ok" and isinstance(scores, dict) and "rubric" in scores:
            found[split_run_id(jid)[0]].append(scores)
    return found


def _run_mean(runs: list[dict[str, Any]], pick: Callable[[dict[str, Any]], Any]) -> float | None:
    values = [pick(r) for r in runs]
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _add_judged(cell: Cell, conv: str, ability: str, runs: list[dict[str, Any]]) -> None:
    cell.n += 1
    cell.add("rubric", conv, _run_mean(runs, lambda s: s.get("rubric")))
    cell.add("kept", conv, _run_mean(runs, lambda s: s.get("rubric_kept")))
    if ability == EVENT_ORDERING:
        tau = _run_mean(runs, lambda s: _tau_norm(s.get("event_order_tau_b")))
        cell.add("tau_norm", conv, tau)
        cell.add("eo_score", conv, _run_mean(runs, lambda s: s.get("event_order_score")))
        cell.add("upstream", conv, tau)
    else:
        cell.add("upstream", conv, _run_mean(runs, lambda s: s.get("rubric")))


def _add_offline(cell: Cell, conv: str, ability: str, scores: dict[str, Any]) -> None:
    cell.n += 1
    cell.add("reach", conv, scores["rubric_reach_offline"])
    if ability == EVENT_ORDERING:
        cell.add("tau_norm_offline", conv, _tau_norm(scores.get("event_order_tau_b_offline")))
    if ability == ABSTENTION:
        cell.add("abstained", conv, float(bool(scores.get("abstained"))))


def beam_tables(
    records: Iterable[QuestionRecord], arms: list[str]
) -> tuple[Table, dict[str, Table]]:
    """The offline table and one table per BEAM-scoring judge (base id)."""
    offline: Table = {a: {} for a in arms}
    judged: dict[str, Table] = {}
    for record in records:
        ability, conv = record.question_type or "", record.conversation_id
        for arm in arms:
            result = record.arms.get(arm)
            if result is None or result.status != "ok":
                continue
            if "rubric_reach_offline" in result.scores:
                _add_offline(offline[arm].setdefault(ability, Cell()), conv, ability, result.scores)
            for base, runs in _judge_scores(result.judgements).items():
                table = judged.setdefault(base, {a: {} for a in arms})
                _add_judged(table[arm].setdefault(ability, Cell()), conv, ability, runs)
    return offline, judged


def _fmt(cell: Cell, key: str) -> str:
    value = cell.mean(key)
    text = "—" if value is None else f"{value:.3f}"
    undefined = cell.undefined.get(key, 0)
    return f"{text} ({undefined} undef.)" if undefined else text


def _rows(table: Table, keys: tuple[str, ...], relevant: dict[str, str]) -> list[str]:
    """Ability-major rows, then per arm `all (mean)`: the mean of the per-ability figures."""
    lines = []
    abilities = sorted({a for cells in table.values() for a in cells})
    for ability in abilities:
        for arm, cells in table.items():
            if ability in cells:
                cell = cells[ability]
                shown = [_fmt(cell, k) if relevant.get(k, ability) == ability else "" for k in keys]
                lines.append(f"| {ability} | {arm} | {cell.n} | " + " | ".join(shown) + " |")
    for arm, cells in table.items():
        overall = [_mean_of(cells.values(), k) if k not in relevant else "" for k in keys]
        n = sum(c.n for c in cells.values())
        lines.append(
            f"| all (mean of {len(cells)} abilities) | {arm} | {n} | " + " | ".join(overall) + " |"
        )
    return lines


def _mean_of(cells: Iterable[Cell], key: str) -> str:
    values = [m for c in cells if (m := c.mean(key)) is not None]
    return f"{sum(values) / len(values):.3f}" if values else "—"


def render_beam(offline: Table, judged: dict[str, Table]) -> list[str]:
    """Markdown: the offline table, then one table per judge."""
    out = [
        "",
        "## BEAM per ability",
        "",
        "Offline (no LLM; bounds, not scores): rubric reach, event-order τ_norm (word-overlap "
        "alignment), abstention rate on abstention questions.",
        "",
        "| ability | arm | n | rubric reach | EO τ_norm | abstained |",
        "|---|---|---|---|---|---|",
    ]
    relevant = {"tau_norm_offline": EVENT_ORDERING, "abstained": ABSTENTION}
    out += _rows(offline, OFFLINE_KEYS, relevant)
    for base, table in sorted(judged.items()):
        out += [
            "",
            f"Judge `{base}`: upstream = BEAM's reported figure (rubric mean with 0.5 cast to 0; "
            "event ordering: τ_norm); kept 0.5 = rubric mean with 0.5 kept.",
            "",
            "| ability | arm | n | upstream | rubric 0.5→0 | rubric 0.5 kept | EO τ_norm "
            "| EO score |",
            "|---|---|---|---|---|---|---|---|",
        ]
        only_eo = {"tau_norm": EVENT_ORDERING, "eo_score": EVENT_ORDERING}
        out += _rows(table, JUDGE_KEYS, only_eo)
    return out


def beam_json(offline: Table, judged: dict[str, Table]) -> dict[str, object]:
    """The same figures for --json: {offline|judge:<id>: {arm: {ability: {key: mean, n}}}}."""

    def dump(table: Table, keys: tuple[str, ...]) -> dict[str, object]:
        return {
            arm: {
                ability: {
                    "n": c.n,
                    **{k: c.mean(k) for k in keys if c.count(k)},
                    "undefined": c.undefined,
                }
                for ability, c in sorted(abilities.items())
            }
            for arm, abilities in table.items()
        }

    data: dict[str, object] = {"offline": dump(offline, OFFLINE_KEYS)}
    data.update({f"judge:{base}": dump(t, JUDGE_KEYS) for base, t in sorted(judged.items())})
    return data


def beam_section(
    records: list[QuestionRecord], arms: list[str]
) -> tuple[list[str], dict[str, object]]:
    """Markdown lines and JSON of the BEAM section; empty when the run has no BEAM scores.

    Only BEAM questions carry a rubric, so a run without one is not walked result by result.
    """
    if all(record.rubric is None for record in records):
        return [], {}
    offline, judged = beam_tables(records, arms)
    if not any(offline.values()) and not judged:
        return [], {}
    return render_beam(offline, judged), beam_json(offline, judged)
