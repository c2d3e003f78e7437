"""Cost per correct answer, per arm, with paired intervals. Standard library only.

Over the scored questions whose result counts (status `ok`, binary outcome), with t_i
the cost of question i (tokens, or money) and c_i = 1 when it was answered correctly:

    R = Σ t_i / Σ c_i                                     cost per correct answer
    u_i = (t_i − R·c_i) / c̄                               linearised ratio (delta method)
    R ± z₀.₉₇₅ · sd(u) / √n                               95% interval of R

and for two arms A, B on the questions both answered (paired: the same questions),

    z_i = (t_Ai − R_A·c_Ai) / c̄_A − (t_Bi − R_B·c_Bi) / c̄_B
    (R_A − R_B) ± z₀.₉₇₅ · sd(z) / √n                    95% paired interval of the difference

(sd with divisor n − 1). The delta method is the standard large-sample interval of a
ratio of means; pairing puts the per-question covariance of the two arms into sd(z),
so the difference's interval is narrower than two separate intervals would suggest.

Tokens: the answering call's prompt + completion tokens (`usage`) when the run's
results report them, else the context the arm assembled (`context_tokens`, what an
offline run measures); the view names which. Money: usage priced with the answerer's
`price_prompt_per_1k` / `price_completion_per_1k` from run.json, when both are set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from bench.runmeta import RunMeta
from bench.summarise.stats import Z_95
from bench.types import Usage

USAGE = "answering tokens (prompt + completion)"
CONTEXT = "context tokens"


@dataclass(frozen=True)
class CostRow:
    """One arm's (or one pair's difference of) cost per correct answer."""

    name: str
    """The arm, or `A − B` for a pair."""
    unit: str
    """`tokens` or `money`."""
    n: int
    """Questions used."""
    value: float | None
    """Cost per correct answer (or the difference A − B); None when nothing was correct."""
    ci: tuple[float, float] | None
    """95% interval (delta method; paired for differences); None when undefined."""


@dataclass
class CostView:
    """Per-arm and paired cost per correct answer, on the scored questions."""

    measure: str
    """What a token count is here (`USAGE` or `CONTEXT`)."""
    arms: list[CostRow] = field(default_factory=list)
    """One row per arm and unit."""
    pairs: list[CostRow] = field(default_factory=list)
    """One row per pair of arms and unit: the difference A − B."""


Costs = dict[int, tuple[float, bool]]
"""Record position -> (cost, correct) of one arm."""
Seen = list[tuple[int, int | None, Usage | None, bool]]
"""(position, context tokens, usage, correct) of an arm's counting results on scored
questions, as the summariser's one pass collects them (`scan.ArmScan.costs`)."""


def cost_view(seen: dict[str, Seen], meta: RunMeta | None) -> CostView | None:
    """The view of every arm's scored results; None when no arm reports a cost."""
    use_usage = any(
        usage.prompt_tokens or usage.completion_tokens
        for rows in seen.values()
        for _, _, usage, _ in rows
        if usage
    )
    view = CostView(measure=USAGE if use_usage else CONTEXT)
    units: list[tuple[str, tuple[float, float] | None]] = [("tokens", None)]
    prices = _prices(meta) if use_usage else None
    if prices is not None:
        units.append(("money", prices))
    for unit, price in units:
        table = {a: _costs(rows, use_usage, price) for a, rows in seen.items()}
        table = {a: c for a, c in table.items() if c}
        view.arms += [_arm_row(a, unit, c) for a, c in table.items()]
        view.pairs += [_pair_row(a, b, unit, table[a], table[b]) for a, b in combinations(table, 2)]
    return view if view.arms else None


def _costs(rows: Seen, use_usage: bool, price: tuple[float, float] | None) -> Costs:
    """Position -> (cost, correct): tokens (usage or context), or money at `price`."""
    out: Costs = {}
    if not use_usage:
        for position, context, _, correct in rows:
            if context is not None:
                out[position] = (float(context), correct)
        return out
    for position, _, usage, correct in rows:
        prompt = usage.prompt_tokens if usage else 0
        completion = usage.completion_tokens if usage else 0
        if prompt or completion:
            spent = prompt * price[0] + completion * price[1] if price else prompt + completion
            out[position] = (spent / 1000.0 if price else float(spent), correct)
    return out


def _prices(meta: RunMeta | None) -> tuple[float, float] | None:
    """(prompt, completion) price per 1k tokens of the answerer, when both are set."""
    answerer = meta.config_value("provider", "answerer") if meta else None
    if not isinstance(answerer, dict):
        return None
    pp, pc = answerer.get("price_prompt_per_1k"), answerer.get("price_completion_per_1k")
    if isinstance(pp, int | float) and isinstance(pc, int | float):
        return float(pp), float(pc)
    return None


_Ratio = tuple[float, float, list[float]]
"""(R, c̄, residuals t_i − R·c_i in row order) of one arm on some questions."""


def _ratio(costs: list[tuple[float, bool]]) -> _Ratio | None:
    """R, c̄ and the residuals of the rows; None when no answer was correct.

    u_i of the module docstring is residual_i / c̄; the residuals sum to 0.
    """
    n = len(costs)
    correct = sum(c for _, c in costs)
    if not correct:
        return None
    ratio = sum(t for t, _ in costs) / correct
    return ratio, correct / n, [t - ratio if c else t for t, c in costs]


def _half_width(sum_sq: float, n: int) -> float:
    """z₀.₉₇₅ · sd / √n of terms with mean 0 and Σ term² = `sum_sq` (sd divisor n − 1)."""
    return Z_95 * math.sqrt(sum_sq / (n - 1)) / math.sqrt(n)


def _arm_row(arm: str, unit: str, costs: Costs) -> CostRow:
    n = len(costs)
    got = _ratio(list(costs.values()))
    if got is None or n < 2:
        return CostRow(arm, unit, n, got[0] if got else None, None)
    ratio, c_bar, residuals = got
    half = _half_width(sum(r * r for r in residuals) / (c_bar * c_bar), n)
    return CostRow(arm, unit, n, ratio, (ratio - half, ratio + half))


def _pair_row(a: str, b: str, unit: str, ca: Costs, cb: Costs) -> CostRow:
    """The difference R_A − R_B on the questions both arms have, with its paired interval.

    Positions are in record order in both tables (the scan's order), so when both arms
    counted the same questions their rows align as they are.
    """
    if ca.keys() == cb.keys():
        n = len(ca)
        ra, rb = _ratio(list(ca.values())), _ratio(list(cb.values()))
    else:
        shared = [q for q in ca if q in cb]
        n = len(shared)
        ra, rb = _ratio([ca[q] for q in shared]), _ratio([cb[q] for q in shared])
    name = f"{a} − {b}"
    if ra is None or rb is None or n < 2:
        return CostRow(name, unit, n, None, None)
    diff = ra[0] - rb[0]
    wa, wb = 1.0 / ra[1], 1.0 / rb[1]
    sum_sq = sum((x * wa - y * wb) ** 2 for x, y in zip(ra[2], rb[2], strict=True))
    half = _half_width(sum_sq, n)
    return CostRow(name, unit, n, diff, (diff - half, diff + half))


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if unit == "tokens" else f"{value:.4f}"


def render_cost(view: CostView | None) -> list[str]:
    """The Markdown section: per arm, then paired differences."""
    if view is None:
        return []
    lines = ["", f"## Cost per correct answer ({view.measure}; scored; 95% CI, delta method)", ""]
    lines += ["| arm / pair | unit | n | per correct | 95% CI |", "|---|---|---|---|---|"]
    for row in [*view.arms, *view.pairs]:
        ci = (
            "—" if row.ci is None else f"[{_fmt(row.ci[0], row.unit)}, {_fmt(row.ci[1], row.unit)}]"
        )
        lines.append(f"| {row.name} | {row.unit} | {row.n} | {_fmt(row.value, row.unit)} | {ci} |")
    return lines


def cost_json(view: CostView | None) -> dict[str, Any] | None:
    """The JSON form (`--json`: key `cost_per_correct`)."""
    from dataclasses import asdict

    return None if view is None else asdict(view)
