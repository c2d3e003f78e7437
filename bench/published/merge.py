"""`bench.published merge`: a run's records with an imported arm beside its own arms.

    python -m bench.published merge RUN_DIR IMPORTED_DIR --out MERGED_DIR

writes a new run directory holding every record of RUN_DIR with the imported run's
arm added to the questions both hold (so `bench.report.explorer` shows the published answer
next to ours), run.json naming the added arm and its judge runs (so the arm's scale names
its judge), and MANIFEST.json. Neither input is
changed, and MERGED_DIR appears only when complete (`write.write_run`). Identity is
checked: IMPORTED_DIR must match its own manifest (`bench.verify`: a forged answer or
a removed `imported` marker is refused, never laundered into a new manifest) and hold
one arm whose every result carries its `imported` marker (the guard against
re-answering and re-judging it); both runs must be on the same dataset file (SHA-256),
every imported question must be in RUN_DIR with the same question text, and the arm
name must be new to RUN_DIR. Stores and caches are not copied: the merged folder is for reading
(summaries, reports, the explorer), not for resuming.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bench.published.model import PublishedError
from bench.published.write import write_run
from bench.records import QuestionRecord, iter_records
from bench.runmeta import RunMeta, read_run_meta
from bench.types import Question
from bench.verify.check import VerifyError, verify_run


def _load(run_dir: Path, what: str) -> tuple[RunMeta, list[QuestionRecord]]:
    if not (run_dir / "questions").is_dir():
        raise PublishedError(f"{run_dir}: no questions/ folder: pass {what}")
    meta, problems = read_run_meta(run_dir / "run.json")
    if meta is None:
        raise PublishedError(f"{run_dir}: {'; '.join(problems)}: pass {what}")
    try:
        return meta, iter_records(run_dir)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PublishedError(f"{run_dir}: unreadable record ({exc}): pass {what}") from None


def merge_imported(run_dir: Path, imported_dir: Path, out: Path) -> str:
    """Write the merged run to `out`; return the one summary line."""
    meta, records = _load(run_dir, "a run directory of bench.run")
    theirs_meta, theirs = _load(imported_dir, "a run directory made by bench.published import")
    _check_manifest(imported_dir)
    arm = _imported_arm(imported_dir, theirs)
    if meta.dataset.sha256 != theirs_meta.dataset.sha256:
        raise PublishedError(
            f"{imported_dir}: made on dataset sha256 {theirs_meta.dataset.sha256}, {run_dir} on "
            f"{meta.dataset.sha256}: import against the run's dataset file (--dataset PATH)"
        )
    if arm in meta.arms or any(arm in r.arms for r in records):
        raise PublishedError(f"{run_dir}: already has an arm {arm}: import under another --arm")
    ours = {r.question_id: r for r in records}
    for record in theirs:
        mine = ours.get(record.question_id)
        if mine is None or mine.question.strip() != record.question.strip():
            why = "is not in" if mine is None else "asks other text in"
            raise PublishedError(
                f"{imported_dir}: question {record.question_id} {why} {run_dir}: "
                "merge runs of the same dataset"
            )
        mine.arms[arm] = record.arms[arm]
    merged = replace(
        meta,
        run_name=out.name,
        arms=[*meta.arms, arm],
        judges=[*meta.judges, *theirs_meta.judges],  # the added arm's scale names its judge
        warnings=[*meta.warnings, *theirs_meta.warnings],
    )
    write_run(out, [(_question_of(r), r) for r in records], merged)
    return f"merged arm {arm} into {len(theirs)} of {len(records)} questions of {run_dir} as {out}"


def _check_manifest(imported_dir: Path) -> None:
    """PublishedError unless `imported_dir` matches its MANIFEST.json (`bench.verify`)."""
    try:
        verdict = verify_run(imported_dir)
    except VerifyError as exc:
        raise PublishedError(f"{exc} (merge takes an import as written)") from None
    if not verdict.ok:
        found = verdict.lines()
        raise PublishedError(
            f"{imported_dir}: does not match its MANIFEST.json ({len(found)} mismatch(es), "
            f"first: {found[0]}): re-import it from the published file"
        )


def _imported_arm(imported_dir: Path, records: list[QuestionRecord]) -> str:
    """The one arm of an import; PublishedError when a result lacks its `imported` marker."""
    arms = {name for r in records for name in r.arms}
    if len(arms) != 1:
        raise PublishedError(f"{imported_dir}: holds {len(arms)} arms: pass one made by import")
    arm = next(iter(arms))
    for record in records:
        if record.arms[arm].imported is None:
            raise PublishedError(
                f"{imported_dir}: question {record.question_id} arm {arm} has no imported "
                "marker: re-import it from the published file"
            )
    return arm


def _question_of(record: QuestionRecord) -> Question:
    """The Question a record answers (only its id names the record's file)."""
    return Question(
        question_id=record.question_id,
        conversation_id=record.conversation_id,
        question=record.question,
        category=record.category,
        gold=record.gold,
    )
