"""The typed Summary of a loaded run (and its baseline): one pass, then every view.

`summarise_records` reads as the summary's story: identify the dataset and its groups,
scan every result once (`scan.py`), pair the arms (`pairing.py`), then add the views
(errata, reachability, judges, repeats, baseline, equivalence, cost) and the notes.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

from bench.runmeta import RunMeta
from bench.scoring.rules import DEFAULT_F1_THRESHOLD, threshold_from_outcome
from bench.summarise.budgets import budget_view, coverage_rows
from bench.summarise.calibration_view import lenient_judges
from bench.summarise.claims import compute_verdict
from bench.summarise.cost import cost_view
from bench.summarise.equivalence import DEFAULT_MARGIN, equivalence_rows
from bench.summarise.errata import errata_view
from bench.summarise.flags import compute_flags
from bench.summarise.judge_views import judge_sections
from bench.summarise.load import LoadedRun, SummaryError, load_run
from bench.summarise.model import LABEL_SCHEMES, SETS, PairRow, Summary, group_label, kappa_rows
from bench.summarise.notes import cap_notes, closing_notes
from bench.summarise.pairing import (
    AUDIT_CLEAN,
    Layout,
    Outcomes,
    apply_holm,
    audit_clean,
    layout_of,
    moved,
    pair_rows,
    paired,
)
from bench.summarise.reach import reach_view
from bench.summarise.scales import arm_scales, record_facts
from bench.summarise.scan import RunScan, arm_names, arm_stats, scan_records


def dataset_name(run: LoadedRun) -> str:
    """The run's dataset name: run.json's, else the first record's."""
    if run.meta and run.meta.dataset.name:
        return run.meta.dataset.name
    return run.records[0].dataset if run.records else "unknown"


def is_locomo_style(run: LoadedRun, dataset: str) -> bool:
    """LoCoMo categories apply unless the dataset is LongMemEval or records carry a type."""
    if dataset.lower().startswith("longmemeval"):
        return False
    return not any(r.question_type for r in run.records)


def _outcome(rules: set[str | None], meta: RunMeta | None, notes: list[str]) -> str:
    """The rule behind `correct`, read from the records; run.json must agree with it.

    `rules`: the outcome rules of the `ok` results (`RunScan.outcomes`).
    """
    named = sorted(name for name in rules if name)
    declared = meta.outcome if meta else None
    if len(named) > 1:
        notes.append(f"records use several outcome rules: {', '.join(named)}")
        return "mixed: " + ", ".join(named)
    if named and isinstance(declared, str) and declared and declared != named[0]:
        notes.append(f"run.json says outcome {declared} but the records use {named[0]}")
    if named:
        return named[0]
    return declared if isinstance(declared, str) and declared else "unknown"


def _threshold(run: LoadedRun, outcome: str) -> float:
    value = run.meta.config_value("scoring", "f1_threshold") if run.meta else None
    if isinstance(value, int | float):
        return float(value)
    return threshold_from_outcome(outcome) or DEFAULT_F1_THRESHOLD


def _scan(run: LoadedRun, locomo_style: bool) -> tuple[Layout, list[str], RunScan]:
    """The run's layout, its arm names and its one pass over the records."""
    layout = layout_of(run, locomo_style)
    names = arm_names(run.records, list(run.meta.arms) if run.meta else [])
    groups = layout.set_groups["all"]
    return layout, names, scan_records(run.records, names, layout.group_of, groups, locomo_style)


def summarise_records(
    run: LoadedRun,
    *,
    baseline: LoadedRun | None = None,
    labels: str = "official",
    margin: float = DEFAULT_MARGIN,
    baseline_arm: str | None = None,
) -> Summary:
    """Compute the typed Summary of a loaded run (and its baseline).

    `margin`: the equivalence margin δ as a share; `baseline_arm`: the baseline arm
    every arm is paired with (`bench.summarise.baseline_arm`).
    """
    if labels not in LABEL_SCHEMES:
        raise SummaryError(f"--labels {labels}: unknown; use one of {', '.join(LABEL_SCHEMES)}")
    dataset = dataset_name(run)
    locomo_style = is_locomo_style(run, dataset)
    layout, names, scan = _scan(run, locomo_style)
    outcomes = {n: (frozenset(scan.arms[n].right), frozenset(scan.arms[n].wrong)) for n in names}
    summary = _tables(run, dataset, layout, names, scan, outcomes, labels)
    if locomo_style:
        summary.errata = errata_view(run.records, names, {n: scan.arms[n].errata for n in names})
    summary.reach = reach_view([scan.arms[n].reach.row(n) for n in names])
    summary.judge_views, summary.judge_json = judge_sections(
        run.run_dir, run.records, names, run.meta, summary.outcome, locomo_style
    )
    if scan.draws > 1 or (run.meta and run.meta.repeats.requested > 1):
        from bench.summarise.repeats import repeats_view  # runs with repeats only (start-up)

        summary.repeats = repeats_view(
            run.records, names, run.meta, layout.qids("scored"), seen=scan.draws
        )
    if baseline is not None:
        _add_baseline(summary, run, baseline, layout, outcomes, baseline_arm)
    _add_views(summary, run, scan, layout, names, margin)
    summary.notes.extend(closing_notes(summary))
    return summary


def _tables(
    run: LoadedRun,
    dataset: str,
    layout: Layout,
    names: list[str],
    scan: RunScan,
    outcomes: dict[str, Outcomes],
    labels: str,
) -> Summary:
    """The Summary's core: per-arm accuracy, every pair of arms (Holm), judge agreement."""
    notes: list[str] = [run.meta_problem] if run.meta_problem else []
    notes.extend(cap_notes(scan))
    outcome = _outcome(scan.outcomes, run.meta, notes)
    threshold = _threshold(run, outcome)
    locomo_style = layout.locomo_style
    group_labels = {
        g: group_label(g, labels, locomo_style=locomo_style) for g in layout.group_questions
    }
    arms = {n: arm_stats(n, scan.arms[n], layout.set_groups, group_labels) for n in names}
    pairs = [
        row
        for a, b in combinations(names, 2)
        for row in pair_rows(a, b, outcomes[a], outcomes[b], layout)
    ]
    apply_holm(pairs)
    return Summary(
        misses=scan.misses,
        run_dir=str(run.run_dir),
        meta=run.meta,
        dataset=dataset,
        locomo_style=locomo_style,
        labels=labels,
        outcome=outcome,
        n_questions={name: len(layout.set_questions[name]) for name in SETS},
        group_labels=group_labels,
        group_sizes={g: len(qs) for g, qs in layout.group_questions.items()},
        set_groups=layout.set_groups,
        arms=arms,
        pairs=pairs,
        kappas=kappa_rows(run.records, threshold, locomo_style) if scan.judged else [],
        notes=notes,
        f1_threshold=threshold,
        cluster_key=layout.cluster_key,
        clusters=len(layout.cluster_names),
    )


def _add_views(
    summary: Summary,
    run: LoadedRun,
    scan: RunScan,
    layout: Layout,
    names: list[str],
    margin: float,
) -> None:
    """Judge runs (if verdicts exist), equivalence, cost per correct, flags, then the verdict."""
    if scan.judged:
        from bench.summarise.judge_runs import judge_runs_view

        scored = layout.set_groups["scored"]
        summary.judge_runs = judge_runs_view(run.records, names, layout.group_of, scored)
    rows = [*summary.pairs, *(summary.baseline or [])]
    summary.equivalence = equivalence_rows(rows, margin, ("scored",))
    summary.cost = cost_view({n: scan.arms[n].costs for n in names}, run.meta)
    facts = record_facts(run.records)
    lenient = lenient_judges(run.run_dir, run.meta, summary.outcome)
    scales = arm_scales(facts, names, run.meta)
    summary.flags = compute_flags(run.meta, run.records, lenient=lenient, scales=scales)
    questions = layout.set_questions["scored"]
    sizes = {n: summary.arms[n].context_tokens_mean for n in names}
    summary.budgets = budget_view(run.records, names, questions, sizes, layout.clusters)
    summary.coverage = coverage_rows(run.records, names, questions, run.meta)
    summary.verdict = compute_verdict(summary, len(run.records), facts)


def _add_baseline(
    summary: Summary,
    run: LoadedRun,
    baseline: LoadedRun,
    layout: Layout,
    outcomes: dict[str, Outcomes],
    chosen: str | None = None,
) -> None:
    """Each arm against its baseline arm, paired on question_id (never on question text).

    Same arm in two runs, or every arm against one (imported) baseline arm
    (`bench.summarise.baseline_arm`). The baseline is scanned as the run is (the same
    pass, so a wrong-typed value in its records is the same one-line error); its
    outcomes become masks over this run's records (`_moved`): its questions that this
    run lacks pair with nothing.
    """
    from bench.summarise.baseline_arm import BaselineArmError, baseline_pairs

    base_style = is_locomo_style(baseline, dataset_name(baseline))
    _, base_list, base_scan = _scan(baseline, base_style)
    baseline_outcome = _outcome(base_scan.outcomes, baseline.meta, [])
    names = list(outcomes)
    try:
        against, summary.baseline_arm = baseline_pairs(names, base_list, baseline.records, chosen)
    except BaselineArmError as exc:
        raise SummaryError(str(exc)) from None
    rows = _baseline_rows(run, baseline, base_scan, layout, outcomes, against, summary.baseline_arm)
    apply_holm(rows)
    summary.baseline_dir = str(baseline.run_dir)
    summary.baseline = rows
    missing = sorted(set(names) - set(against))
    if missing:
        summary.notes.append(f"baseline has no arm {', '.join(missing)}: not compared")
    ours = run.meta.dataset.sha256 if run.meta else None
    theirs = baseline.meta.dataset.sha256 if baseline.meta else None
    if ours and theirs and ours != theirs:
        summary.notes.append("baseline was run on a different dataset file (sha256 differs)")
    if baseline_outcome and baseline_outcome != summary.outcome:
        summary.notes.append(
            f"baseline outcome rule {baseline_outcome} differs from this run's {summary.outcome}: "
            "gained/lost compare different rules"
        )


def _baseline_rows(
    run: LoadedRun,
    baseline: LoadedRun,
    base_scan: RunScan,
    layout: Layout,
    outcomes: dict[str, Outcomes],
    against: dict[str, str],
    single: str | None,
) -> list[PairRow]:
    """Rows of each arm against its baseline arm (`single`: one imported arm for all)."""
    position = {r.question_id: i for i, r in enumerate(run.records)}
    clean = audit_clean(run, layout) if single else None
    rows = []
    for name, base_name in against.items():
        arm = base_scan.arms[base_name]
        before = (
            moved(arm.right, baseline.records, position),
            moved(arm.wrong, baseline.records, position),
        )
        rows.extend(pair_rows(base_name, name, before, outcomes[name], layout))
        if clean is not None:
            audit = paired(before, outcomes[name], clean, layout.clusters, interval=True)
            rows.append(PairRow(base_name, name, AUDIT_CLEAN, audit, {}))
    if single:  # a published arm covers some groups only (LoCoMo 1-4)
        for row in rows:
            row.groups = {g: t for g, t in row.groups.items() if t.n}
    return rows


def summarise_run(
    run_dir: Path, *, baseline: Path | None = None, labels: str = "official"
) -> Summary:
    """Load a run directory (and optional baseline run) and compute its Summary."""
    base = load_run(Path(baseline)) if baseline is not None else None
    return summarise_records(load_run(Path(run_dir)), baseline=base, labels=labels)
