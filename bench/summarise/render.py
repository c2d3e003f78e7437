"""Renderers of a Summary: Markdown tables (stdout and SUMMARY.md); JSON in render_json.py.

Renderers only format; every number comes from `bench.summarise.model.Summary`.
"""

from __future__ import annotations

from bench.runmeta import RunMeta
from bench.summarise import clustered_view as cv
from bench.summarise.added import added_sections
from bench.summarise.errata import render_errata
from bench.summarise.judge_header import judges_text
from bench.summarise.model import (
    LABEL_SCHEMES,
    SMALL_N,
    PairedTest,
    PairRow,
    Summary,
)
from bench.summarise.reach import render_reach
from bench.summarise.stats import Rate

_DASH = "—"


def _pct(value: float | None) -> str:
    return _DASH if value is None else f"{100 * value:.1f}%"


def _ci(rate: Rate) -> str:
    ci = rate.ci
    return _DASH if ci is None else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _num(value: float | None, digits: int = 1) -> str:
    return _DASH if value is None else f"{value:.{digits}f}"


def _rate(rate: Rate | None) -> str:
    return _DASH if rate is None or rate.n == 0 else f"{_pct(rate.value)} ({rate.k}/{rate.n})"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def group_name(s: Summary, key: str) -> str:
    """Integer (or type), label and question count, e.g. `1 multi-hop (n=282)`."""
    label = s.group_labels[key]
    name = f"{key} {label}" if key.isdigit() else label
    return f"{name} (n={s.group_sizes[key]})"


def _arm_table(s: Summary) -> str:
    header = ["arm" + s.flags.judge_mark(), "acc scored", "95% CI", "n", "acc all", "95% CI", "n"]
    header += ["F1 scored", "excluded", "abstains (answerable)", "ctx tokens"]
    rows = []
    for arm in s.arms.values():
        sc, al = arm.accuracy["scored"], arm.accuracy["all"]
        excluded = ", ".join(f"{k} {v}" for k, v in sorted(arm.excluded["all"].items())) or "0"
        rows.append(
            [s.flags.arm_label(arm.name), _pct(sc.value), _ci(sc), str(sc.n), _pct(al.value)]
            + [_ci(al), str(al.n), _num(arm.f1["scored"], 3), excluded]
            + [_rate(arm.abstention_answerable), _num(arm.context_tokens_mean, 0)]
        )
    return _table(header, rows)


def _latency_table(s: Summary) -> str:
    keys = ["p50", "p75", "p90", "p99", "mean"]
    rows = [[a.name] + [_num(a.latency_ms.get(k)) for k in keys] for a in s.arms.values()]
    rows += [
        [f"{a.name}: retrieval"] + [_num(a.retrieve_ms.get(k)) for k in keys]
        for a in s.arms.values()
        if a.retrieve_ms
    ]
    return _table(["arm (latency ms)", *keys], rows)


def _group_table(s: Summary) -> str:
    rows = []
    for key in s.group_labels:
        cells = [group_name(s, key)]
        for arm in s.arms.values():
            g = arm.groups[key]
            cells.append(f"{_pct(g.accuracy.value)} (n={g.accuracy.n}) F1 {_num(g.f1, 3)}")
        rows.append(cells)
    kind = ("category" if s.locomo_style else "question type") + s.flags.judge_mark()
    return _table([kind, *(s.flags.arm_label(a) for a in s.arms)], rows)


def _adversarial_table(s: Summary) -> str | None:
    arms = [a for a in s.arms.values() if a.adversarial_abstention is not None]
    if not arms:
        return None
    header = ["arm", "abstention accuracy (cat. 5)", "trap-hit rate", "abstains on 1–4"]
    rows = [
        [s.flags.arm_label(a.name), _rate(a.adversarial_abstention), _rate(a.trap_hits)]
        + [_rate(a.abstention_answerable)]
        for a in arms
    ]
    return _table(header, rows)


def _stale_table(s: Summary) -> str | None:
    arms = [a for a in s.arms.values() if a.stale is not None]
    if not arms:
        return None
    return _table(["arm", "stale fact in context"], [[a.name, _rate(a.stale)] for a in arms])


def _miss_table(s: Summary) -> str | None:
    """Retrieval miss = no evidence turn retrieved; reader miss = evidence retrieved."""
    rows = [
        [arm, group_name(s, key), str(cell["retrieval"]), str(cell["reader"])]
        for arm, by_group in s.misses.items()
        for key in s.group_labels
        if (cell := by_group.get(key))
    ]
    if not rows:
        return None
    return _table(["arm", "group", "retrieval misses", "reader misses"], rows)


def power_note(t: PairedTest) -> str:
    """`no discordant pairs` for a 0/0 split (nothing to test), `underpowered` when too small."""
    if t.a_only + t.b_only == 0:
        return "no discordant pairs"
    return "underpowered" if t.underpowered else ""


def _test_cells(t: PairedTest) -> list[str]:
    note = power_note(t)
    mde = _DASH if t.mde is None else f"{100 * t.mde:.1f} pts"
    return [str(t.n), str(t.a_only), str(t.b_only), *cv.p_cells(t), mde, note]


def _pair_table(s: Summary, rows: list[PairRow], baseline: bool) -> str:
    """Pooled rows for each set, then each group once (groups are the same tests in both sets)."""
    head = s.flags.mark_first(["arm", "set / group"] if baseline else ["A", "B", "set / group"])
    sides = ["lost", "gained"] if baseline else ["A only", "B only"]
    header = [*head, "n", *sides, *cv.P_HEADER, "MDE", ""]
    lines = []
    by_pair: dict[tuple[str, str], list[PairRow]] = {}
    for row in rows:
        by_pair.setdefault((row.a, row.b), []).append(row)
    for (a, b), pair_rows in by_pair.items():
        ident = s.flags.pair_cells(a, b, baseline)
        shown = [r for r in pair_rows if not (s.sets_identical and r.set == "all")]
        lines += [[*ident, f"{r.set} (pooled)", *_test_cells(r.pooled)] for r in shown]
        widest = max(pair_rows, key=lambda r: len(r.groups))
        for key, test in widest.groups.items():
            lines.append([*ident, group_name(s, key), *_test_cells(test)])
    return _table(header, lines)


def _kappa_table(s: Summary) -> str | None:
    rows = [[k.a, k.b, str(k.n), _num(k.kappa, 3)] for k in s.kappas]
    return _table(["rater A", "rater B", "n", "Cohen's κ"], rows) if rows else None


def _title(s: Summary) -> list[str]:
    n_all, n_sc = s.n_questions["all"], s.n_questions["scored"]
    sets = (
        f"scored = categories 1–4 ({n_sc}), all = {n_all}"
        if s.locomo_style
        else f"every question scored ({n_all})"
    )
    return [
        f"# Summary of {s.run_dir}{s.flags.title_mark()}",
        *(f"> - **{line}**" for line in s.flags.headline()),
        *s.verdict.markdown(),
        "",
        f"dataset {s.dataset} · {sets} · outcome `{s.outcome}`"
        + (f" · labels {s.labels}" if s.locomo_style else ""),
    ]


def _sections(s: Summary) -> list[str]:
    out = ["", *(f"> note: {n}" for n in s.notes)] if s.notes else []
    out += ["", "## Accuracy per arm", "", _arm_table(s)]
    out += render_reach(s.reach, s.flags.arm_label)
    out += ["", _latency_table(s), "", "## Per " + ("category" if s.locomo_style else "type")]
    out += ["", _group_table(s)]
    for title, table in (
        ("## Adversarial (category 5)", _adversarial_table(s)),
        ("## Superseded facts", _stale_table(s)),
    ):
        if table:
            out += ["", title, "", table]
    misses = _miss_table(s)
    if misses:
        out += ["", "## Wrong answers: retrieval miss vs reader miss", "", misses]
    if s.pairs:
        out += ["", "## Paired comparisons (exact McNemar; paired on question_id)", ""]
        out += [_pair_table(s, s.pairs, baseline=False), *cv.render_clustered(s, s.pairs, False)]
    if s.baseline is not None:
        how = f"each arm vs {s.baseline_arm}" if s.baseline_arm else "same arm"
        out += ["", f"## Against baseline {s.baseline_dir} ({how}, paired on question_id)"]
        out += ["", _pair_table(s, s.baseline, baseline=True)]
        out += cv.render_clustered(s, s.baseline, baseline=True)
    out += added_sections(s)
    out += s.judge_views
    if s.errata is not None:
        out += render_errata(s.errata, s.group_labels)
    if s.repeats is not None:  # the repeats module is imported only for runs with repeats
        from bench.summarise.repeats import render_repeats

        out += render_repeats(s.repeats)
    kappa = _kappa_table(s)
    if kappa:
        out += ["", "## Judge agreement", "", kappa]
    out += [
        "",
        f"MDE: smallest accuracy difference the exact test calls significant (p < 0.05) "
        f"with the discordant pairs observed; underpowered: n < {SMALL_N} or no MDE.",
    ]
    return out


def render_text(s: Summary) -> str:
    """The console summary: title, notes and every table, as Markdown."""
    return "\n".join([*_title(s), *_sections(s)]) + "\n"


def _metadata(s: Summary) -> list[str]:
    meta = s.meta or RunMeta()
    provider, dataset, prov = meta.provider, meta.dataset, meta.provenance
    judge_text = judges_text(meta.judges)
    labels = ", ".join(f"{k} {v}" for k, v in LABEL_SCHEMES[s.labels].items())
    items = [
        ("run", f"{_or(meta.run_name)} (created {_or(meta.created_at)})"),
        ("dataset", f"{_or(dataset.name, s.dataset)} sha256 {_or(dataset.sha256)}"),
        ("provider", _or(provider.name)),
        ("answerer model", _or(provider.answerer_model)),
        ("extractor model", _or(provider.extractor_model)),
        ("embedder model", _or(provider.embedder_model)),
        ("judges", judge_text or ("none" if s.meta is not None else "unknown")),
        ("outcome rule", s.outcome),
        ("label scheme", f"{s.labels} ({labels})" if s.locomo_style else s.labels),
        ("git", f"{_or(prov.git_commit)} dirty={_or(prov.git_dirty)}"),
    ]
    return ["", "## Run", "", *(f"- {k}: {v}" for k, v in items)]


def _or(value: object, default: str = "unknown") -> str:
    """`value` as text, or `default` when run.json did not say."""
    return default if value is None else str(value)


def render_markdown(s: Summary) -> str:
    """SUMMARY.md: the same tables plus the run's metadata."""
    return "\n".join([*_title(s), *_metadata(s), *_sections(s)]) + "\n"
