"""Paired equivalence: two one-sided tests (TOST) on a paired difference of accuracy.

A difference test can only fail to find a difference; "arm B is within δ of arm A" is
a claim of its own, tested here on the same paired counts the McNemar rows use. With
n questions both arms answered, `a_only` right only for A and `b_only` right only for B:

    d  = (b_only − a_only) / n                            paired difference B − A
    se = √( ((a_only + b_only)/n − d²) / n )              Wald SE of a paired difference
    p₁ = 1 − Φ((d + δ) / se)      H₀₁: d ≤ −δ
    p₂ = 1 − Φ((δ − d) / se)      H₀₂: d ≥ +δ
    p  = max(p₁, p₂);  equivalent at α = 0.05  ⇔  p < α  ⇔  the 90% interval d ± z₀.₉₅·se
                                                           lies inside (−δ, +δ)

The normal approximation (the Wald form for paired proportions, as in Liu et al.,
Stat. Med. 2002) is used rather than an exact test: exact unconditional tests of a
paired margin need a nuisance-parameter search, while with the few hundred to
thousands of questions a benchmark pairs on the approximation is close, and it is
standard-library arithmetic. It is unreliable with few discordant pairs, so the row
says so below `MIN_DISCORDANT`; with none, se = 0 and no test is made (p is None).
The margin δ is the user's (`--margin`, points; default 2).
"""

from __future__ import annotations

import math
from typing import Any

from bench.summarise.model import EquivalenceRow, PairRow

DEFAULT_MARGIN = 0.02
"""δ: 2 accuracy points."""
Z_90 = 1.6448536269514722
"""The one-sided 95% normal quantile (`NormalDist().inv_cdf(0.95)`), as a literal."""
MIN_DISCORDANT = 10
"""Below this many discordant pairs the normal approximation is flagged."""


def _phi(x: float) -> float:
    """The standard normal CDF."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def tost(a_only: int, b_only: int, n: int, margin: float) -> tuple[float, float | None, float]:
    """(d, p, se) of the paired TOST above; p is None when se = 0 or n = 0."""
    if n <= 0:
        return 0.0, None, 0.0
    d = (b_only - a_only) / n
    var = ((a_only + b_only) / n - d * d) / n
    se = math.sqrt(var) if var > 0 else 0.0
    if se == 0.0:
        return d, None, 0.0
    p1 = 1.0 - _phi((d + margin) / se)
    p2 = 1.0 - _phi((margin - d) / se)
    return d, max(p1, p2), se


def equivalence_rows(
    rows: list[PairRow], margin: float, sets: tuple[str, ...]
) -> list[EquivalenceRow]:
    """TOST of every row's pooled test on the named sets."""
    out = []
    for row in rows:
        if row.set not in sets:
            continue
        t = row.pooled
        d, p, se = tost(t.a_only, t.b_only, t.n, margin)
        discordant = t.a_only + t.b_only
        note = (
            "no discordant pairs"
            if not discordant
            else ("few discordant pairs" if discordant < MIN_DISCORDANT else "")
        )
        ci = (d - Z_90 * se, d + Z_90 * se) if se else None
        equivalent = p is not None and p < 0.05
        out.append(EquivalenceRow(row.a, row.b, row.set, t.n, d, ci, p, margin, equivalent, note))
    return out


def render_equivalence(view: list[EquivalenceRow]) -> list[str]:
    """The Markdown section (one row per pair)."""
    if not view:
        return []
    margin = 100 * view[0].margin
    lines = [
        "",
        f"## Equivalence (TOST, margin ±{margin:g} pts, α = 0.05; paired on question_id)",
        "",
        "| A | B | set | n | B − A | 90% CI | p (TOST) | within ±δ | |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in view:
        ci = "—" if r.ci90 is None else f"[{100 * r.ci90[0]:+.1f}, {100 * r.ci90[1]:+.1f}]"
        p = "—" if r.p is None else (f"{r.p:.4f}" if r.p >= 1e-4 else f"{r.p:.1e}")
        verdict = "yes" if r.equivalent else "no"
        lines.append(
            f"| {r.a} | {r.b} | {r.set} | {r.n} | {100 * r.diff:+.1f} pts | {ci} | {p} | "
            f"{verdict} | {r.note} |"
        )
    return lines


def equivalence_json(view: list[EquivalenceRow]) -> list[dict[str, Any]]:
    """The JSON form (`--json`: key `equivalence`)."""
    from dataclasses import asdict

    return [asdict(r) for r in view]
