"""`python -m bench.summarise RUN_DIR`: paired tables from per-question JSON, stdlib only.

Reads `RUN_DIR/questions/*.json` (and `run.json` when present), computes a typed
`Summary` (accuracy with Wilson intervals on both denominators, official F1, latency,
per-category breakdowns, exact McNemar tests between arms and against a baseline run,
judge agreement) and renders it as text, JSON or the comparable export.

Imports nothing outside the standard library (a test runs it where numpy, scipy and
pandas cannot be imported).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import NoReturn

from bench.providers.accounting import proxy_notes
from bench.records import QuestionRecord, natural_key, read_file_bytes, write_text_atomic
from bench.runmeta import RunMeta, read_run_meta
from bench.scoring.retrieval_health import summary_notes as retrieval_notes
from bench.scoring.rules import DEFAULT_F1_THRESHOLD, SCORED_CATEGORIES, threshold_from_outcome
from bench.summarise.cost import cost_view
from bench.summarise.equivalence import DEFAULT_MARGIN, equivalence_rows
from bench.summarise.errata import errata_view
from bench.summarise.model import (
    LABEL_SCHEMES,
    SETS,
    SMALL_N,
    PairedTest,
    PairRow,
    Summary,
    group_label,
    kappa_rows,
)
from bench.summarise.reach import OFFLINE_CAUTION, reach_view
from bench.summarise.render import render_markdown, render_text, summary_to_json
from bench.summarise.scan import RunScan, arm_names, arm_stats, scan_records
from bench.summarise.stats import holm, mcnemar_exact_p, min_detectable_effect

__all__ = ["LoadedRun", "SummaryError", "load_run", "main", "summarise_records", "summarise_run"]


class SummaryError(Exception):
    """A run directory that cannot be summarised; the message is one line naming the file."""


@dataclass
class LoadedRun:
    """A run directory's metadata (None when `run.json` is absent) and its records."""

    run_dir: Path
    """The run directory."""
    meta: RunMeta | None
    """Its parsed run.json; None when absent or unreadable."""
    records: list[QuestionRecord]
    """Every question record, sorted by question id."""
    meta_problem: str | None = None
    """Why run.json could not be read, when it could not; None otherwise."""


def load_run(run_dir: Path) -> LoadedRun:
    """Read every record and `run.json`; raise SummaryError on a missing or bad record.

    The cyclic garbage collector is paused while the records are read: parsed JSON and
    the records built from it hold no reference cycles, and each collection would
    rescan the records read so far. (`python -m bench.summarise` runs with it off.)
    """
    folder = run_dir / "questions"
    if not folder.is_dir():
        raise SummaryError(f"{run_dir}: no questions/ folder; pass a run directory of bench.run")
    paused = gc.isenabled()
    gc.disable()
    try:
        records = _read_records(str(folder))
    finally:
        if paused:
            gc.enable()
    if not records:
        raise SummaryError(f"{folder}: no question records (*.json) to summarise")
    records.sort(key=lambda r: natural_key(r.question_id))
    meta, problems = read_run_meta(run_dir / "run.json")
    return LoadedRun(run_dir, meta, records, "; ".join(problems) or None)


def _read_records(folder: str) -> list[QuestionRecord]:
    """Every record of `folder/*.json` in name order; SummaryError names a bad file.

    One `scandir` and a sort of plain strings, paths made by concatenating strings:
    globbing and sorting Path objects cost as much as reading a few hundred of the
    files, and `os.path.join` per file a hundredth of the parse. Each file is read with
    `read_file_bytes` (half the system calls of `open().read()`).
    """
    with os.scandir(folder) as entries:
        names = sorted(e.name for e in entries if e.name.endswith(".json") and e.name[0] != ".")
    records: list[QuestionRecord] = []
    seen: dict[str, str] = {}
    from_json = QuestionRecord.from_json
    prefix = os.path.join(folder, "")
    for name in names:
        path = prefix + name
        try:
            record = from_json(json.loads(read_file_bytes(path)), source=path)
            if record.question_id.__class__ is not str:
                raise TypeError(f"question_id is {record.question_id!r}, not a string")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SummaryError(f"{path}: unreadable record ({_reason(exc)})") from None
        if record.question_id in seen:
            raise SummaryError(
                f"{path}: question_id {record.question_id} also in {seen[record.question_id]}"
            )
        seen[record.question_id] = path
        records.append(record)
    return records


def _reason(exc: BaseException) -> str:
    """`Type: first line of the message` (200 characters at most) for a one-line error."""
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"


def _dataset_name(run: LoadedRun) -> str:
    if run.meta and run.meta.dataset.name:
        return run.meta.dataset.name
    return run.records[0].dataset if run.records else "unknown"


def _is_locomo_style(run: LoadedRun, dataset: str) -> bool:
    """LoCoMo categories apply unless the dataset is LongMemEval or records carry a type."""
    if dataset.lower().startswith("longmemeval"):
        return False
    return not any(r.question_type for r in run.records)


def _group_key(record: QuestionRecord, locomo_style: bool) -> str:
    return (
        record.question_type if not locomo_style and record.question_type else str(record.category)
    )


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


Outcomes = tuple[int, int]
"""The questions an arm got right, and those it got wrong (results that count only), as
bit masks over the run's records: bit i stands for `run.records[i]` (see `_mask`)."""


def _mask(positions: Iterable[int]) -> int:
    """The bit mask of distinct record positions: the sum of 2^i over positions i.

    Parsed from its base-2 numeral, a 1 at each position: summing the powers makes a
    new big integer per position, each as long as the mask (quadratic in the run).
    """
    at = list(positions)
    if not at:
        return 0
    digits = bytearray(b"0") * (max(at) + 1)
    for i in at:
        digits[i] = 49  # "1"
    digits.reverse()
    return int(digits, 2)


def _moved(positions: list[int], records: list[QuestionRecord], position: dict[str, int]) -> int:
    """Record positions of one run as a mask over another run's records.

    `positions` index `records`; `position` maps the other run's question ids to its
    record positions. Questions the other run lacks are dropped.
    """
    ids = (records[i].question_id for i in positions)
    return _mask(position[q] for q in ids if q in position)


def _paired(a: Outcomes, b: Outcomes, questions: int) -> PairedTest:
    """Pair two arms' outcomes over the questions of mask `questions` (both must count).

    Outcomes are masks over one run's records, so pairing is on question id (ids are
    unique) and each cell is the population count of an AND.
    """
    (a_right, a_wrong), (b_right, b_wrong) = a, b
    a_right, a_wrong = a_right & questions, a_wrong & questions
    both, a_only = (a_right & b_right).bit_count(), (a_right & b_wrong).bit_count()
    b_only, neither = (a_wrong & b_right).bit_count(), (a_wrong & b_wrong).bit_count()
    n = a_only + b_only + both + neither
    mde = min_detectable_effect(a_only + b_only, n)
    return PairedTest(n, a_only, b_only, both, neither, mcnemar_exact_p(a_only, b_only), mde)


def _pair_rows(
    a_name: str,
    b_name: str,
    a: Outcomes,
    b: Outcomes,
    layout: _Layout,
) -> list[PairRow]:
    """One row per set; group tests are shared between sets so Holm counts each once."""
    groups = {g: _paired(a, b, mask) for g, mask in layout.group_masks.items()}
    pooled_all = _paired(a, b, layout.set_masks["all"])
    rows = []
    for name in SETS:
        pooled = pooled_all if name == "all" or not layout.locomo_style else None
        pooled = pooled or _paired(a, b, layout.set_masks[name])
        shown = {g: groups[g] for g in layout.set_groups[name]}
        rows.append(PairRow(a_name, b_name, name, pooled, shown))
    return rows


def _apply_holm(rows: list[PairRow]) -> None:
    """Holm-adjust every distinct test in `rows` as one family (pooled and per group)."""
    tests: dict[int, PairedTest] = {}
    for row in rows:
        for test in (row.pooled, *row.groups.values()):
            tests[id(test)] = test
    family = list(tests.values())
    for test, adjusted in zip(family, holm([t.p for t in family]), strict=True):
        test.p_holm = adjusted


class _Layout:
    """Which questions each set and group holds, groups in display order.

    Questions are bit masks over the run's records (`Outcomes`). A plain class: a
    dataclass would cost the summariser's start-up more than its use.
    """

    __slots__ = ("group_masks", "group_of", "locomo_style", "set_groups", "set_masks")

    group_of: dict[str, str]
    """Question id -> its group key."""

    def __init__(
        self,
        locomo_style: bool,
        set_masks: dict[str, int],
        group_masks: dict[str, int],
        set_groups: dict[str, list[str]],
        group_of: dict[str, str],
    ) -> None:
        self.locomo_style = locomo_style
        self.set_masks = set_masks
        self.group_masks = group_masks
        self.set_groups = set_groups
        self.group_of = group_of

    def qids(self, name: str) -> frozenset[str]:
        """The question ids of set `name`."""
        keys = set(self.set_groups[name])
        return frozenset(q for q, key in self.group_of.items() if key in keys)


def _layout(run: LoadedRun, locomo_style: bool) -> _Layout:
    """Groups partition the questions, so a set's mask is the sum of its groups' masks."""
    positions: dict[str, list[int]] = {}
    scored_groups: set[str] = set()
    group_of: dict[str, str] = {}
    for i, r in enumerate(run.records):
        key = _group_key(r, locomo_style)
        group_of[r.question_id] = key
        positions.setdefault(key, []).append(i)
        if not locomo_style or r.category in SCORED_CATEGORIES:
            scored_groups.add(key)
    order = sorted(positions, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0, k))
    set_groups = {"all": order, "scored": [k for k in order if k in scored_groups]}
    group_masks = {k: _mask(positions[k]) for k in order}
    set_masks = {name: sum(group_masks[k] for k in keys) for name, keys in set_groups.items()}
    return _Layout(locomo_style, set_masks, group_masks, set_groups, group_of)


def _scan(run: LoadedRun, locomo_style: bool) -> tuple[_Layout, list[str], RunScan]:
    """The run's layout, its arm names and its one pass over the records."""
    layout = _layout(run, locomo_style)
    names = arm_names(run.records, list(run.meta.arms) if run.meta else [])
    groups = layout.set_groups["all"]
    return layout, names, scan_records(run.records, names, layout.group_of, groups, locomo_style)


def _scan_or_blame(run: LoadedRun, locomo_style: bool) -> tuple[_Layout, list[str], RunScan]:
    """`_scan`; a value of the wrong type in a record is a SummaryError naming the record.

    Records are built without checking each value's type (the reader's cost is the
    summariser's floor), so a hostile `null` or string surfaces as a TypeError (or
    AttributeError, ...) in the pass. Only then is each record passed alone, and the
    first that fails the same way is named; if none does, the fault is the
    summariser's, and the error is raised as it is.
    """
    try:
        return _scan(run, locomo_style)
    except (TypeError, AttributeError, ValueError, KeyError) as exc:
        for record in run.records:
            try:
                _scan(LoadedRun(run.run_dir, run.meta, [record]), locomo_style)
            except type(exc) as again:
                raise SummaryError(
                    f"a value of the wrong type in the record of question {record.question_id} "
                    f"in {run.run_dir / 'questions'} ({_reason(again)}): fix the record; its "
                    "format is bench/schema/question_record.schema.json"
                ) from None
        raise


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
    notes: list[str] = [run.meta_problem] if run.meta_problem else []
    dataset = _dataset_name(run)
    locomo_style = _is_locomo_style(run, dataset)
    layout, names, scan = _scan_or_blame(run, locomo_style)
    notes.extend(_cap_notes(scan))
    outcome = _outcome(scan.outcomes, run.meta, notes)
    threshold = _threshold(run, outcome)
    group_labels = {
        g: group_label(g, labels, locomo_style=locomo_style) for g in layout.group_masks
    }
    arms = {n: arm_stats(n, scan.arms[n], layout.set_groups, group_labels) for n in names}
    outcomes = {n: (_mask(scan.arms[n].right), _mask(scan.arms[n].wrong)) for n in names}
    pairs = [
        row
        for a, b in combinations(names, 2)
        for row in _pair_rows(a, b, outcomes[a], outcomes[b], layout)
    ]
    _apply_holm(pairs)
    summary = Summary(
        misses=scan.misses,
        run_dir=str(run.run_dir),
        meta=run.meta,
        dataset=dataset,
        locomo_style=locomo_style,
        labels=labels,
        outcome=outcome,
        n_questions={name: layout.set_masks[name].bit_count() for name in SETS},
        group_labels=group_labels,
        group_sizes={g: mask.bit_count() for g, mask in layout.group_masks.items()},
        set_groups=layout.set_groups,
        arms=arms,
        pairs=pairs,
        kappas=kappa_rows(run.records, threshold, locomo_style) if scan.judged else [],
        notes=notes,
        f1_threshold=threshold,
    )
    if locomo_style:
        summary.errata = errata_view(run.records, names, {n: scan.arms[n].errata for n in names})
    summary.reach = reach_view([scan.arms[n].reach.row(n) for n in names])
    if scan.draws > 1 or (run.meta and run.meta.repeats.requested > 1):
        from bench.summarise.repeats import repeats_view  # runs with repeats only (start-up)

        summary.repeats = repeats_view(
            run.records, names, run.meta, layout.qids("scored"), seen=scan.draws
        )
    if baseline is not None:
        _add_baseline(summary, run, baseline, layout, outcomes, baseline_arm)
    _add_views(summary, run, scan, layout, names, margin)
    summary.notes.extend(_closing_notes(summary))
    return summary


def _add_views(
    summary: Summary,
    run: LoadedRun,
    scan: RunScan,
    layout: _Layout,
    names: list[str],
    margin: float,
) -> None:
    """Judge runs (only when verdicts exist), equivalence and cost per correct answer."""
    if scan.judged:
        from bench.summarise.judge_runs import judge_runs_view

        scored = layout.set_groups["scored"]
        summary.judge_runs = judge_runs_view(run.records, names, layout.group_of, scored)
    rows = [*summary.pairs, *(summary.baseline or [])]
    summary.equivalence = equivalence_rows(rows, margin, ("scored",))
    summary.cost = cost_view({n: scan.arms[n].costs for n in names}, run.meta)


def _add_baseline(
    summary: Summary,
    run: LoadedRun,
    baseline: LoadedRun,
    layout: _Layout,
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

    base_style = _is_locomo_style(baseline, _dataset_name(baseline))
    _, base_list, base_scan = _scan_or_blame(baseline, base_style)
    baseline_outcome = _outcome(base_scan.outcomes, baseline.meta, [])
    names = list(outcomes)
    try:
        against, summary.baseline_arm = baseline_pairs(names, base_list, baseline.records, chosen)
    except BaselineArmError as exc:
        raise SummaryError(str(exc)) from None
    rows = _baseline_rows(run, baseline, base_scan, layout, outcomes, against, summary.baseline_arm)
    _apply_holm(rows)
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
    layout: _Layout,
    outcomes: dict[str, Outcomes],
    against: dict[str, str],
    single: str | None,
) -> list[PairRow]:
    """Rows of each arm against its baseline arm (`single`: one imported arm for all)."""
    position = {r.question_id: i for i, r in enumerate(run.records)}
    clean = _audit_clean(run, layout) if single else None
    rows = []
    for name, base_name in against.items():
        arm = base_scan.arms[base_name]
        before = (
            _moved(arm.right, baseline.records, position),
            _moved(arm.wrong, baseline.records, position),
        )
        rows.extend(_pair_rows(base_name, name, before, outcomes[name], layout))
        if clean is not None:
            rows.append(
                PairRow(base_name, name, AUDIT_CLEAN, _paired(before, outcomes[name], clean), {})
            )
    if single:  # a published arm covers some groups only (LoCoMo 1-4)
        for row in rows:
            row.groups = {g: t for g, t in row.groups.items() if t.n}
    return rows


AUDIT_CLEAN = "scored, key unchanged by the audit"
"""The errata view of a pairing with an imported arm: the scored questions whose gold
the answer-key audit leaves standing. An imported arm cannot be judged again against
the corrected key, so both sides are compared only where the official key is sound."""


def _audit_clean(run: LoadedRun, layout: _Layout) -> int | None:
    """Mask of the scored questions the audit does not change; None without the audit."""
    from bench.summarise.errata import is_score_affected

    if not layout.locomo_style or not any(r.errata_type is not None for r in run.records):
        return None
    affected = _mask(i for i, r in enumerate(run.records) if is_score_affected(r))
    return layout.set_masks["scored"] & ~affected


def _closing_notes(summary: Summary) -> list[str]:
    notes = []
    if summary.meta and summary.meta.offline:
        notes.append(
            f"OFFLINE run: answers from the extractive offline answerer, scored with "
            f"{summary.outcome}; these numbers are not LLM-judged. {OFFLINE_CAUTION}"
        )
    n = summary.n_questions["scored"]
    if n < SMALL_N:
        notes.append(
            f"n = {n} scored questions: too few for a result (not a result); "
            f"nothing under {SMALL_N} paired questions is evidence"
        )
    for warning in summary.meta.warnings if summary.meta else []:
        notes.append(f"run warning: {warning}")
    notes.extend(_extraction_notes(summary))
    notes.extend(retrieval_notes(summary.meta.retrieval_health if summary.meta else None))
    notes.extend(proxy_notes(summary.meta.accounting if summary.meta else None))
    return notes


def _cap_notes(scan: RunScan) -> list[str]:
    """Per arm: capped answers, contexts cut to fit, unparseable verdicts (when any)."""
    counts = {a: (x.answered, x.capped, x.cut, x.unparseable) for a, x in scan.arms.items()}
    notes = []
    for arm in sorted(counts):
        answered, capped, cut, unparseable = counts[arm]
        if capped:
            notes.append(f"truncated answers {arm}: {capped} of {answered} hit the completion cap")
        if cut:
            notes.append(f"contexts cut to fit the server {arm}: {cut} of {answered}")
        if unparseable:
            notes.append(f"unparseable verdicts {arm}: {unparseable} (not counted as wrong)")
    return notes


def _extraction_notes(summary: Summary) -> list[str]:
    """Per extracting arm: exchanges, failed, facts; DEGRADED lines (bench.scoring.health)."""
    from bench.scoring.health import arm_total, degraded_warnings, mode_note, table_from_json

    table = table_from_json(summary.meta.extraction_health if summary.meta else None)
    notes = []
    for arm in sorted(table):
        total = arm_total(table[arm])
        mark = "DEGRADED " if total.degraded else ""
        notes.append(
            f"{mark}extraction {arm}: {total.failed} of {total.exchanges} exchanges failed, "
            f"{total.facts} facts stored{mode_note(total)}"
        )
    notes.extend(f"DEGRADED results: {line}" for line in degraded_warnings(table))
    return notes


def summarise_run(
    run_dir: Path, *, baseline: Path | None = None, labels: str = "official"
) -> Summary:
    """Load a run directory (and optional baseline run) and compute its Summary."""
    base = load_run(Path(baseline)) if baseline is not None else None
    return summarise_records(load_run(Path(run_dir)), baseline=base, labels=labels)


def _local(arg: str) -> Path:
    """A run folder on this machine; `s3://...` is fetched first (boto3, imported only then)."""
    if not arg.startswith("s3://"):
        return Path(arg)
    from bench.errors import BenchError

    try:
        from bench.remote.fetch import fetch_run

        return fetch_run(arg)
    except BenchError as exc:
        raise SummaryError(str(exc)) from None


def _upload(arg: str, names: list[str]) -> None:
    """Upload files `--write` put in the local copy of an `s3://` run."""
    from bench.errors import BenchError

    try:
        from bench.remote.fetch import upload_written

        upload_written(arg, names)
    except BenchError as exc:
        raise SummaryError(str(exc)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.summarise", description=__doc__.splitlines()[0] if __doc__ else ""
    )
    parser.add_argument(
        "run_dir", help="run directory holding questions/*.json, or s3://bucket/prefix ([s3] extra)"
    )
    parser.add_argument("--baseline", help="another run of the same arms to pair with")
    parser.add_argument(
        "--baseline-arm",
        help="pair every arm with this baseline arm (default: the baseline's one imported arm, "
        "else each arm with its namesake)",
    )
    parser.add_argument(
        "--margin", type=float, default=100 * DEFAULT_MARGIN,
        help="equivalence margin δ in accuracy points (default 2)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="same as --format json")
    parser.add_argument("--labels", choices=sorted(LABEL_SCHEMES), default="official")
    parser.add_argument("--format", choices=("text", "json", "comparable"), default=None)
    parser.add_argument(
        "--write", action="store_true", help="also write RUN_DIR/SUMMARY.md (and comparable.json)"
    )
    return parser


def _summary_of(args: argparse.Namespace, run: LoadedRun, base: LoadedRun | None) -> Summary:
    """`summarise_records` with the command line's options (the margin checked first)."""
    if not 0 < args.margin < 100:
        raise SummaryError(f"--margin {args.margin}: must be between 0 and 100 points")
    return summarise_records(
        run, baseline=base, labels=args.labels, margin=args.margin / 100,
        baseline_arm=args.baseline_arm,
    )  # fmt: skip


def main(argv: list[str] | None = None, *, exit_unfreed: bool = False) -> int:
    """CLI entry point; returns the exit status (2 with a one-line message on bad input).

    `exit_unfreed`: on success end the process without freeing the records
    (`_exit_unfreed`; `python -m bench.summarise` only, never a caller that goes on).
    """
    args = _parser().parse_args(argv)
    if args.json and args.format not in (None, "json"):
        print(f"error: --json conflicts with --format {args.format}", file=sys.stderr)
        return 2
    fmt = args.format or ("json" if args.json else "text")
    try:
        run = load_run(_local(args.run_dir))
        base = load_run(_local(args.baseline)) if args.baseline else None
        summary = _summary_of(args, run, base)
    except SummaryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if fmt == "json":
        text = json.dumps(summary_to_json(summary), indent=1, allow_nan=False)
    elif fmt == "comparable":
        from bench.summarise.comparable import comparable_export

        text = json.dumps(comparable_export(summary, run.records), indent=1, allow_nan=False)
    else:
        text = render_text(summary)
    print(text)
    if args.write:
        try:
            write_text_atomic(run.run_dir / "SUMMARY.md", render_markdown(summary))
            if fmt == "comparable":
                write_text_atomic(run.run_dir / "comparable.json", text + "\n")
            if args.run_dir.startswith("s3://"):
                _upload(args.run_dir, ["SUMMARY.md", "comparable.json"])
        except SummaryError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            from bench.cli_errors import os_error_line

            print(os_error_line(exc), file=sys.stderr)
            return 2
    if exit_unfreed:
        _exit_unfreed()
    return 0


def _exit_unfreed() -> NoReturn:
    """End the process now, successfully: flush stdout and stderr, then `os._exit(0)`.

    A normal exit's last act is freeing every parsed record and tearing the interpreter
    down, a tenth of the CLI's time on a full run. A one-shot process has nothing left
    to release: its output is flushed here, `--write` has closed its files, and the
    summariser registers no exit handlers.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
