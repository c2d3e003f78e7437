"""The comparable export (`summarise --format comparable`): one leaderboard-style entry per arm.

Shape (per arm, inside `{"format": "armbench-comparable/1", "submissions": [...]}`)::

    {"metadata": {"benchmark", "arm", "answerer_model", "judge_model", "provider",
                  "top_k", "outcome", "scale", "label_scheme", "run_name",
                  "flags": {"degraded", "arm": [{"kind", "detail"}], "judge": [...]},
                  "publishable": bool, "reasons": [{"code", "sentence", "arms"}]},
     "accuracy": {"overall": 67.1, "overall_all": 60.2, "n": 1540,
                  "by_question_type": {"multi-hop": 55.3, ...}},
     "evaluations": [{"question_id", "category", "question_type", "question", "gold",
                      "answer", "status", "correct", "f1", "cluster"}, ...]}

and beside `submissions`, `"clustering"` (the cluster key, K, the bootstrap's seed and B)
and `"paired"`: every pair of arms on the scored set, per question (`p`, `p_holm`) and
clustered (`clustered`: the `--json` object, bench/summarise/clustered.py), so that a
leaderboard can show both. `cluster` is the question's cluster (the unit that owns a
store: its conversation, or a stitched haystack's host).

Accuracies are percentages of the results that count (errors excluded); `overall` is
the scored set (LoCoMo categories 1–4, every question elsewhere). `flags` carries the
run's flags (bench.summarise.flags) that touch this entry: the arm's own (extraction
degraded) and the primary judge's (self-judging, degenerate, lenient); `degraded` is
true when either list is non-empty. `outcome` and `scale` are the arm's own (a merged
run's arms may differ); `publishable` and `reasons` are the verdict for this arm
(bench.summarise.claims), and the export's top level carries the run's `verdict`.
Standard library only.
"""

from __future__ import annotations

from typing import Any

from bench.records import QuestionRecord
from bench.runmeta import RunMeta
from bench.summarise.clustered import cluster_ids
from bench.summarise.clustered_view import clustering_json, pair_json
from bench.summarise.model import Summary
from bench.summarise.scales import judge_base, record_facts, rule_judge

FORMAT = "armbench-comparable/1"


def _percent(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _judge_model(meta: RunMeta, outcome: str) -> str:
    """The model of the judge the rule reads (`judge:<id>`, `majority:<id>`), or `none (rule)`."""
    base = rule_judge(outcome)
    if base is None:
        return f"none ({outcome})"
    for judge in meta.judges:
        if judge_base(judge.judge_id) == base:
            return judge.model or "unknown"
    return "unknown"


def _flags(summary: Summary, arm: str) -> dict[str, Any]:
    """The arm's flags and the primary judge's, as plain data."""
    arm_flags = [{"kind": f.kind, "detail": f.detail} for f in summary.flags.arms.get(arm, ())]
    judge_flags = [{"kind": f.kind, "detail": f.detail} for f in summary.flags.primary]
    return {"degraded": bool(arm_flags or judge_flags), "arm": arm_flags, "judge": judge_flags}


def _evaluation(record: QuestionRecord, arm: str, qtype: str, cluster: str) -> dict[str, Any]:
    res = record.arms.get(arm)
    return {
        "question_id": record.question_id,
        "category": record.category,
        "question_type": qtype,
        "question": record.question,
        "gold": record.gold,
        "answer": None if res is None else res.answer,
        "status": "missing" if res is None else res.status,
        "correct": None if res is None else res.correct,
        "f1": None if res is None else res.scores.get("f1"),
        "cluster": cluster,
    }


def _entry(
    summary: Summary, records: list[QuestionRecord], arm: str, rule: str, clusters: list[str]
) -> dict[str, Any]:
    meta = summary.meta or RunMeta()
    provider = meta.provider
    stats = summary.arms[arm]
    answerers = {
        str(r.arms[arm].answerer) for r in records if arm in r.arms and r.arms[arm].answerer
    }
    answerer = provider.answerer_model or (", ".join(sorted(answerers)) or "unknown")
    labels = summary.group_labels

    def qtype(record: QuestionRecord) -> str:
        key = record.question_type if not summary.locomo_style and record.question_type else None
        return key or labels.get(str(record.category), str(record.category))

    return {
        "metadata": {
            "benchmark": summary.dataset,
            "arm": arm,
            "answerer_model": answerer,
            "judge_model": _judge_model(meta, rule),
            "provider": provider.name or "unknown",
            "top_k": meta.arm_option(arm, "top_k"),
            "outcome": rule,
            "scale": summary.flags.scales.get(arm, rule),
            "label_scheme": summary.labels,
            "run_name": meta.run_name or "unknown",
            "flags": _flags(summary, arm),
            "publishable": summary.verdict.arm_publishable(arm),
            "reasons": [r.to_json() for r in summary.verdict.arm_reasons(arm)],
        },
        "accuracy": {
            "overall": _percent(stats.accuracy["scored"].value),
            "overall_all": _percent(stats.accuracy["all"].value),
            "n": stats.accuracy["scored"].n,
            "by_question_type": {
                labels[k]: _percent(g.accuracy.value) for k, g in stats.groups.items()
            },
        },
        "evaluations": [
            _evaluation(r, arm, qtype(r), c) for r, c in zip(records, clusters, strict=True)
        ],
    }


def comparable_export(summary: Summary, records: list[QuestionRecord]) -> dict[str, Any]:
    """Every arm of the run in the leaderboard shape described in the module docstring."""
    clusters, _ = cluster_ids([r.conversation_id for r in records])
    facts = record_facts(records)
    rules = {a: facts.rule(a) if a in facts.rules else summary.outcome for a in summary.arms}
    return {
        "format": FORMAT,
        "verdict": summary.verdict.to_json(),
        "submissions": [_entry(summary, records, a, rules[a], clusters) for a in summary.arms],
        "clustering": clustering_json(summary),
        "paired": [
            {"a": r.a, "b": r.b, "set": r.set, "n": r.pooled.n, "p": r.pooled.p}
            | {"p_holm": r.pooled.p_holm, "clustered": pair_json(r.pooled)}
            for r in summary.pairs
            if r.set == "scored"
        ],
    }
