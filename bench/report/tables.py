"""The report's HTML tables: accuracy, abstention, reachability, misses, paired comparisons."""

from __future__ import annotations

import html
from typing import Any

from bench.report.explorer import EXPLORER_NAME
from bench.summarise.clustered import generalises
from bench.summarise.model import SETS, PairedTest, PairRow, Summary
from bench.summarise.render import group_name, power_note
from bench.summarise.stats import Rate

SET_TITLES = {"scored": "categories 1–4", "all": "all questions"}


def meta_text(value: Any) -> str:
    """A metadata value as text; an en dash when run.json does not say."""
    return "–" if value is None or value == "" else str(value)


def pct(rate: Rate | None) -> str:
    """`41.2% [38.7, 43.8] (k/n)`, or an en dash when n = 0."""
    if rate is None or rate.value is None or rate.ci is None:
        return "–"
    lo, hi = rate.ci
    return f"{100 * rate.value:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] ({rate.k}/{rate.n})"


def shown_sets(summary: Summary) -> tuple[str, ...]:
    """Both denominators for LoCoMo-style runs; one when they are the same questions."""
    return SETS if summary.locomo_style else ("all",)


def accuracy_table(summary: Summary) -> str:
    """Accuracy with Wilson 95% intervals per arm on each denominator, and errors."""
    sets = shown_sets(summary)
    head = f"<th>arm{html.escape(summary.flags.judge_mark())}</th>" + "".join(
        f"<th>accuracy, {SET_TITLES[s]} (n={summary.n_questions[s]})</th>" for s in sets
    )
    body = "".join(
        f"<tr><td>{html.escape(summary.flags.arm_label(name))}</td>"
        + "".join(f"<td>{pct(arm.accuracy[s])}</td>" for s in sets)
        + f"<td>{arm.excluded.get('all', {}).get('error', 0)}</td></tr>"
        for name, arm in summary.arms.items()
    )
    return (
        f"<h2>Accuracy (outcome <code>{html.escape(summary.outcome)}</code>, Wilson 95%)</h2>"
        f"<table><tr>{head}<th>errors (excluded)</th></tr>{body}</table>"
    )


def abstention_table(summary: Summary) -> str:
    """LoCoMo category 5 (abstention accuracy, trap hits) and abstention where answerable."""
    if not summary.locomo_style:
        return ""
    body = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{pct(arm.adversarial_abstention)}</td>"
        f"<td>{pct(arm.trap_hits)}</td><td>{pct(arm.abstention_answerable)}</td></tr>"
        for name, arm in ((summary.flags.arm_label(n), a) for n, a in summary.arms.items())
    )
    return (
        "<h2>Adversarial questions (category 5) and abstention</h2><table><tr><th>arm</th>"
        "<th>abstained on category 5 (correct)</th><th>fell for the trap</th>"
        "<th>abstained on categories 1–4</th></tr>" + body + "</table>"
    )


def pair_title(row: PairRow, summary: Summary) -> str:
    """`A vs B (set)`, with the arms' flags."""
    return f"{summary.flags.pair_name(row.a, row.b)} ({SET_TITLES.get(row.set, row.set)})"


def pair_rows(summary: Summary) -> list[PairRow]:
    """The pairs on the sets the report shows."""
    sets = shown_sets(summary)
    return [row for row in summary.pairs if row.set in sets]


def p_text(t: PairedTest) -> str:
    """`p = raw, Holm adjusted; clustered p = …, Holm … (K = …)`, or `no discordant pairs`.

    The per-question p generalises to these questions, the clustered p (exact sign-flip
    over conversations, bench/summarise/clustered.py) to conversations like these.
    """
    if t.a_only + t.b_only == 0:
        return "no discordant pairs"
    holm = "–" if t.p_holm is None else f"{t.p_holm:.3g}"
    text = f"p = {t.p:.3g}, Holm {holm}"
    c = t.clustered
    if c is None:
        return text
    c_holm = "–" if c.p_holm is None else f"{c.p_holm:.3g}"
    return f"{text}; clustered p = {c.p:.3g}, Holm {c_holm} (K = {c.k})"


def _clustered_cells(t: PairedTest) -> str:
    """Clustered p, its Holm p, the cluster bootstrap 95% CI of B − A and the design effect."""
    c = t.clustered
    if c is None:
        return "<td>–</td>" * 4
    holm = "–" if c.p_holm is None else f"{c.p_holm:.3g}"
    ci = "–" if c.ci95 is None else f"[{100 * c.ci95[0]:+.1f}, {100 * c.ci95[1]:+.1f}] pts"
    deff = "–" if c.deff is None else f"{c.deff:.2f}"
    return f"<td>{c.p:.3g} (K = {c.k})</td><td>{holm}</td><td>{ci}</td><td>{deff}</td>"


def pairs_table(summary: Summary) -> str:
    """Every arm pair, pooled: n, both/neither, a_only/b_only, exact and Holm p, MDE."""
    head = (
        "<tr><th>A vs B</th><th>set</th><th>n</th><th>both</th><th>neither</th>"
        "<th>A only</th><th>B only</th><th>McNemar p</th><th>Holm p</th><th>clustered p</th>"
        "<th>clustered Holm p</th><th>B − A 95% CI (clusters)</th><th>deff</th><th>MDE</th></tr>"
    )
    body = []
    for row in pair_rows(summary):
        t = row.pooled
        holm = "–" if t.p_holm is None else f"{t.p_holm:.3g}"
        mde = "–" if t.mde is None else f"{100 * t.mde:.1f} pts"
        flag = f" ({note})" if (note := power_note(t)) else ""
        body.append(
            f"<tr><td>{html.escape(summary.flags.pair_name(row.a, row.b))}</td><td>{row.set}</td>"
            f"<td>{t.n}</td><td>{t.both}</td><td>{t.neither}</td><td>{t.a_only}</td>"
            f"<td>{t.b_only}</td><td>{t.p:.3g}</td><td>{holm}</td>{_clustered_cells(t)}"
            f"<td>{mde}{flag}</td></tr>"
        )
    if not body:
        return ""
    question, cluster = generalises(summary.clusters)
    note = f"<p>Clustered by {html.escape(summary.cluster_key)}. {question} {cluster}</p>"
    return "<h2>Paired comparisons</h2><table>" + head + "".join(body) + "</table>" + note


def _share(value: float | None) -> str:
    """`41.2%`, or an en dash when the arm has no such figure."""
    return "–" if value is None else f"{100 * value:.1f}%"


def reach_table(summary: Summary) -> str:
    """Accuracy beside evidence recall and gold-token recall (`bench.summarise.reach`)."""
    if not summary.reach:
        return ""
    body = "".join(
        f"<tr><td>{html.escape(summary.flags.arm_label(r.name))}</td>"
        f"<td>{_share(r.accuracy.value)} (n={r.accuracy.n})</td>"
        f"<td>{_share(r.evidence_recall)}</td><td>{_share(r.gold_token_recall)}</td></tr>"
        for r in summary.reach
    )
    return (
        "<h2>Reachability beside accuracy (questions with a gold answer)</h2><table><tr>"
        "<th>arm</th><th>accuracy</th><th>evidence recall</th><th>gold-token recall</th></tr>"
        + body
        + "</table><p>Evidence recall: share of the evidence turns among the retrieved ids "
        "(– for an arm that lists none, e.g. the whole transcript). Gold-token recall: share "
        "of the gold answer's tokens found in the context.</p>"
    )


def miss_table(summary: Summary) -> str:
    """Wrong answers per arm and group: retrieval misses / reader misses, and the totals."""
    if not summary.misses:
        return ""
    groups = [g for g in summary.group_labels if any(g in m for m in summary.misses.values())]
    head = "".join(f"<th>{html.escape(group_name(summary, g))}</th>" for g in groups)
    body = []
    for arm, by_group in summary.misses.items():
        cells = [by_group.get(g, {}) for g in groups]
        total = (sum(c.get("retrieval", 0) for c in cells), sum(c.get("reader", 0) for c in cells))
        body.append(
            f"<tr><td>{html.escape(summary.flags.arm_label(arm))}</td>"
            + "".join(f"<td>{c.get('retrieval', 0)} / {c.get('reader', 0)}</td>" for c in cells)
            + f"<td>{total[0]} / {total[1]}</td></tr>"
        )
    return (
        "<h2>Wrong answers: retrieval miss / reader miss</h2><table><tr><th>arm</th>"
        + head
        + "<th>all</th></tr>"
        + "".join(body)
        + "</table><p>Retrieval miss: no evidence turn reached the context; reader miss: the "
        "evidence was there and the answer was still wrong. Arms that list no retrieved ids "
        "are not shown.</p>"
    )


def explorer_link() -> str:
    """The link to the run's failure explorer, written beside the report."""
    return (
        f'<p class="links">Question by question: <a href="{EXPLORER_NAME}">{EXPLORER_NAME}</a>'
        " (answers, verdicts, retrieved evidence; filters by category, arm and miss kind)</p>"
    )
