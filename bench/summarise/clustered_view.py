"""The clustered side of the paired tables: columns, the interval table and JSON (stdlib only).

Numbers come from `PairedTest.clustered` (bench/summarise/clustered.py); this module
only formats them beside the per-question tests.
"""

from __future__ import annotations

from typing import Any

from bench.summarise.clustered import REPLICATES, SEED, clustered_json, generalises, min_p
from bench.summarise.model import PairedTest, PairRow, Summary

_DASH = "—"


def p_text(value: float | None) -> str:
    """A p-value as the paired tables print it (4 decimals, or 1 significant digit if tiny)."""
    return _DASH if value is None else (f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}")


P_HEADER = ("p (exact)", "p (Holm)", "p (clustered)", "p (cl. Holm)")
"""The p-value columns of the paired tables (`p_cells`)."""


def p_cells(t: PairedTest) -> list[str]:
    """Per-question p and its Holm adjustment, then the clustered p and its Holm adjustment."""
    c = t.clustered
    clustered = [_DASH, _DASH] if c is None else [p_text(c.p), p_text(c.p_holm)]
    return [p_text(t.p), p_text(t.p_holm), *clustered]


def _points(value: float | None) -> str:
    return _DASH if value is None else f"{100 * value:+.1f} pts"


def _interval(ci: tuple[float, float] | None) -> str:
    return _DASH if ci is None else f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def _num(value: float | None, digits: int) -> str:
    return _DASH if value is None else f"{value:.{digits}f}"


def render_clustered(s: Summary, rows: list[PairRow], baseline: bool) -> list[str]:
    """The pooled rows with clusters as the sample: B − A, bootstrap CI, deff, both p-values."""
    tested = [r for r in rows if r.pooled.clustered is not None]
    tested = [r for r in tested if not (s.sets_identical and r.set == "all")]
    if not tested:
        return []
    head = ["arm", "baseline arm"] if baseline else ["A", "B"]
    header = [*head, "set", "n", "K", "B − A", "95% CI (cluster bootstrap)", "deff", "n_eff"]
    header += ["p (per question)", "p (clustered)", "p (clustered, Holm)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in tested:
        t, c = r.pooled, r.pooled.clustered
        assert c is not None
        ident = [r.b, r.a] if baseline else [r.a, r.b]
        cells = [*ident, r.set, str(t.n), str(c.k), _points(c.diff), _interval(c.ci95)]
        cells += [_num(c.deff, 2), _num(c.n_eff, 0), p_text(t.p), p_text(c.p), p_text(c.p_holm)]
        lines.append("| " + " | ".join(cells) + " |")
    question, cluster = generalises(s.clusters)
    return [
        "",
        f"Clustered by {s.cluster_key} (K = {s.clusters}; the unit that owns a store): "
        f"exact sign-flip test over clusters, cluster bootstrap (seed {SEED}, "
        f"B = {REPLICATES}), deff = cluster-robust variance / per-question variance.",
        "",
        *lines,
        "",
        f"{question} {cluster}",
    ]


def pair_json(t: PairedTest) -> dict[str, Any] | None:
    """The `clustered` object of a paired test in `--json`; None when clusters are unknown."""
    return clustered_json(t.clustered)


def clustering_json(s: Summary) -> dict[str, Any]:
    """The `clustering` object of `--json`: the cluster key, K, the bootstrap and the sentences."""
    question, cluster = generalises(s.clusters)
    return {
        "key": s.cluster_key,
        "k": s.clusters,
        "p_min": min_p(s.clusters),
        "bootstrap": {"seed": SEED, "b": REPLICATES},
        "generalises": {"question": question, "cluster": cluster},
    }
