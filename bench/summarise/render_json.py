"""The `bench.summarise --json` contract: a Summary as plain JSON (docs/interfaces.md).

Renderers only format; every number comes from `bench.summarise.model.Summary`.
"""

from __future__ import annotations

from bench.summarise import clustered_view as cv
from bench.summarise.added import added_json
from bench.summarise.errata import errata_json
from bench.summarise.model import SMALL_N, ArmStats, GroupStats, PairedTest, PairRow, Summary
from bench.summarise.stats import Rate


def _rate_json(rate: Rate | None) -> dict[str, object] | None:
    if rate is None:
        return None
    ci = rate.ci
    return {"k": rate.k, "n": rate.n, "rate": rate.value, "ci": list(ci) if ci else None}


def _group_json(g: GroupStats) -> dict[str, object]:
    ci = g.accuracy.ci
    return {
        "label": g.label,
        "n_questions": g.n_questions,
        "n": g.accuracy.n,
        "acc": g.accuracy.value,
        "ci": list(ci) if ci else None,
        "f1": g.f1,
        "excluded": g.excluded,
    }


def _arm_json(a: ArmStats) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in ("all", "scored"):
        rate = a.accuracy[name]
        ci = rate.ci
        out[f"n_{name}"] = rate.n
        out[f"correct_{name}"] = rate.k
        out[f"acc_{name}"] = rate.value
        out[f"ci_{name}"] = list(ci) if ci else None
        out[f"f1_{name}"] = a.f1[name]
        out[f"excluded_{name}"] = a.excluded[name]
    out["errors"] = a.excluded["all"].get("error", 0)
    out["context_tokens_mean"] = a.context_tokens_mean
    out["latency_ms"] = dict(a.latency_ms)
    if a.retrieve_ms:
        out["retrieve_ms"] = dict(a.retrieve_ms)
    out["by_category"] = {k: _group_json(g) for k, g in a.groups.items()}
    out["abstention_rate_answerable"] = _rate_json(a.abstention_answerable)
    out["adversarial"] = None
    if a.adversarial_abstention is not None:
        out["adversarial"] = {
            "abstention_acc": _rate_json(a.adversarial_abstention),
            "trap_hit_rate": _rate_json(a.trap_hits),
        }
    out["stale_rate"] = _rate_json(a.stale)
    return out


def _test_json(t: PairedTest, baseline: bool) -> dict[str, object]:
    if baseline:
        sides = {"gained": t.b_only, "lost": t.a_only}
    else:
        sides = {"a_only": t.a_only, "b_only": t.b_only}
    return {
        "n": t.n,
        **sides,
        "both": t.both,
        "neither": t.neither,
        "p": t.p,
        "p_holm": t.p_holm,
        "mde": t.mde,
        "underpowered": t.underpowered,
        "clustered": cv.pair_json(t),
    }


def _row_json(row: PairRow, baseline: bool) -> dict[str, object]:
    ident = {"arm": row.b} if baseline else {"a": row.a, "b": row.b}
    if baseline and row.a != row.b:
        ident["baseline_arm"] = row.a
    body = _test_json(row.pooled, baseline)
    groups = {k: _test_json(t, baseline) for k, t in row.groups.items()}
    return {**ident, "set": row.set, **body, "by_category": groups}


def summary_to_json(s: Summary) -> dict[str, object]:
    """The `bench.summarise --json` contract (docs/interfaces.md) plus extra keys."""
    out: dict[str, object] = {
        "run_dir": s.run_dir,
        "dataset": s.dataset,
        "outcome": s.outcome,
        "f1_threshold": s.f1_threshold,
        "labels": s.labels,
        "group_kind": "category" if s.locomo_style else "question_type",
        "n_questions": dict(s.n_questions),
        "categories": {k: {"label": v, "n": s.group_sizes[k]} for k, v in s.group_labels.items()},
        "arms": {name: _arm_json(a) for name, a in s.arms.items()},
        "pairs": [_row_json(r, baseline=False) for r in s.pairs],
        "kappa": [{"a": k.a, "b": k.b, "n": k.n, "kappa": k.kappa} for k in s.kappas],
        "notes": list(s.notes),
        "small_n": s.n_questions["scored"] < SMALL_N,
        "misses": s.misses,
        "clustering": cv.clustering_json(s),
    }
    if s.errata is not None:
        out["errata"] = errata_json(s.errata)
    out.update({"flags": s.flags.to_json()} if s.flags else {})  # only when flagged
    out["verdict"] = s.verdict.to_json()
    if s.reach:
        out["reachability"] = {
            r.name: {"evidence_recall": r.evidence_recall, "gold_token_recall": r.gold_token_recall}
            for r in s.reach
        }
    if s.repeats is not None:
        from bench.summarise.repeats import repeats_json

        out["repeats"] = repeats_json(s.repeats)
    if s.baseline is not None:
        out["baseline_dir"] = s.baseline_dir
        out["baseline"] = [_row_json(r, baseline=True) for r in s.baseline]
    out.update(added_json(s))
    out.update(s.judge_json)
    return out
