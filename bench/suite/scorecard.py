"""Per-arm diagnostics and the comparable shape, from the ranked lists of a suite run.

Means are over queries (macro averages); abstention queries have no relevant ids and
are left out of the retrieval means but still count for forbidden hits and latency.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from bench.suite import metrics as m
from bench.suite.runner import ArmRun, Retrieved

RETRIEVAL = {
    "recall": m.recall_at,
    "precision": m.precision_at,
    "mrr": m.mrr_at,
    "ndcg": m.ndcg_at,
    "hit": m.hit_at,
}


def query_key(row: Retrieved, many_suites: bool) -> str:
    """The query id in run files and reports (`<suite>/<id>` when several suites ran)."""
    return f"{row.suite}/{row.query.query_id}" if many_suites else row.query.query_id


def diagnostics(run: ArmRun, cutoffs: list[int]) -> dict[str, Any]:
    """`retrieval.byK`, `safety.forbiddenHitRateAtK`, `latency` and (if any) `answer`."""
    by_k = {
        str(k): {
            name: m.mean(fn(r.ranked, r.query.relevance, k) for r in run.rows)
            for name, fn in RETRIEVAL.items()
        }
        for k in cutoffs
    }
    forbidden = {
        str(k): m.mean(m.forbidden_hit_at(r.ranked, r.query.forbidden, k) for r in run.rows)
        for k in cutoffs
    }
    block: dict[str, Any] = {
        "queries": len(run.rows),
        "scored_queries": sum(1 for r in run.rows if r.query.relevance),
        "retrieval": {"byK": by_k},
        "safety": {"forbiddenHitRateAtK": forbidden},
        "latency": {"unit": "ms", **m.latency_summary([r.retrieve_ms for r in run.rows])},
        "ingest_s": round(run.ingest_s, 3),
    }
    if any(r.answers for r in run.rows):
        block["answer"] = {str(k): _answer_means(run.rows, k) for k in cutoffs}
    return block


def _answer_means(rows: tuple[Retrieved, ...], k: int) -> dict[str, float | None]:
    scores = [r.answers[k][1] for r in rows if r.answers]
    return {
        "exactMatch": m.mean(float(s["em"]) for s in scores),
        "tokenF1": m.mean(float(s["f1"]) for s in scores),
        "accuracy": m.mean(float(s["correct"]) for s in scores),
    }


def comparable(
    run: ArmRun, cutoffs: list[int], meta: dict[str, Any], diag: dict[str, Any], many: bool
) -> dict[str, Any]:
    """The comparable shape: metadata, metrics_by_cutoff, evaluations, diagnostics.

    Accuracy is a percentage (0-100) of correct answers at each cutoff; without an
    answerer it is None and the retrieval diagnostics carry the comparison.
    """
    return {
        "metadata": {
            **meta,
            "arm": run.arm,
            "top_k": max(cutoffs),
            "top_k_cutoffs": cutoffs,
            "write_path": run.write_path or meta.get("write_path"),
            "answer_path": run.answer_path,
        },
        "metrics_by_cutoff": {f"top_{k}": _cutoff_block(run.rows, k) for k in cutoffs},
        "evaluations": [_evaluation(r, cutoffs, many) for r in run.rows],
        "diagnostics": diag,
    }


def _cutoff_block(rows: tuple[Retrieved, ...], k: int) -> dict[str, Any]:
    by_type: dict[str, list[Retrieved]] = defaultdict(list)
    for r in rows:
        by_type[r.query.question_type or "all"].append(r)
    return {
        "overall": _accuracy(rows, k),
        "by_question_type": {t: _accuracy(tuple(rs), k) for t, rs in sorted(by_type.items())},
    }


def _accuracy(rows: tuple[Retrieved, ...], k: int) -> dict[str, Any]:
    answered = [r.answers[k][1]["correct"] for r in rows if r.answers]
    accuracy = 100.0 * sum(map(bool, answered)) / len(answered) if answered else None
    return {
        "accuracy": accuracy,
        "n": len(rows),
        "recall": m.mean(m.recall_at(r.ranked, r.query.relevance, k) for r in rows),
    }


def _evaluation(row: Retrieved, cutoffs: list[int], many: bool) -> dict[str, Any]:
    rank = {doc: i for i, doc in enumerate(row.ranked, start=1)}
    deepest = max(cutoffs)
    answer = row.answers[deepest] if row.answers else None
    return {
        "query_id": query_key(row, many),
        "question_type": row.query.question_type,
        "abstention": row.query.abstention,
        "expected_answer": row.query.expected_answer,
        "answer": answer[0] if answer else None,
        "score": answer[1]["f1"] if answer else None,
        "correct": answer[1]["correct"] if answer else None,
        "relevant_ranks": {d: rank.get(d) for d in row.query.relevant},
        "relevant_hits": [d for d in row.query.relevant if d in rank],
        "forbidden_hits": [d for d in row.query.forbidden if d in rank],
        "retrieve_ms": round(row.retrieve_ms, 3),
    }
