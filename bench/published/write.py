"""Write an imported run directory: records, run.json and MANIFEST, all or nothing.

The directory is built under a temporary name beside `--out` (same parent, so the
final rename is atomic) with the writers every run uses (`bench.records.write_record`
under the question's `file_stem`, `bench.runmeta.RunMeta`, `bench.verify.write_manifest`)
and renamed to `--out` only when complete; on any failure the temporary folder is
removed, so no partial import is ever left where a run would be looked for. The
temporary name carries the writer's PID (`.<out>.<pid>.<random>.importing`): one left by
an import or merge that was killed is removed by the next import or merge to the same
`--out` once that PID is no longer running (a folder of a live writer is never touched).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from bench.files import pid_alive, write_json_atomic
from bench.hashing import stable_hash
from bench.published.match import Source
from bench.published.model import PublishedError, judge_base, judge_run_id
from bench.records import QuestionRecord, write_record
from bench.runmeta import DatasetMeta, JudgeMeta, ProvenanceMeta, ProviderMeta, RunMeta
from bench.scoring.rules import Outcome
from bench.types import Dataset, Question


def imported_meta(
    out: Path, arm: str, source: Source, dataset: Dataset, runs: int, count: int
) -> RunMeta:
    """run.json of an imported run: the file's identity, the dataset, the judge runs."""
    from bench.run.provenance import provenance

    now = datetime.now(UTC).isoformat(timespec="seconds")
    model = source.judge_model or ""
    outcome = Outcome(majority_of=judge_base(model)).name if runs else None
    origin = {
        "format": source.format,
        "file_sha256": source.file_sha256,
        "file_name": source.file_name,
        "source_url": source.source_url,
    }
    ident = {"dataset_sha256": dataset.sha256, "outcome": outcome, "imported": origin}
    return RunMeta(
        run_name=out.name,
        created_at=now,
        updated_at=now,
        arms=[arm],
        identity=ident,
        config_hash=stable_hash(ident),
        config={"imported": {**origin, "arm": arm, "rows": count}},
        provenance=ProvenanceMeta(**provenance()),
        dataset=DatasetMeta(name=dataset.name, path=dataset.path, sha256=dataset.sha256),
        provider=ProviderMeta(name="published", answerer_model=source.answer_model),
        offline=False,
        judges=[
            JudgeMeta(judge_id=judge_run_id(model, k), model=model) for k in range(1, runs + 1)
        ],
        outcome=outcome,
        warnings=[
            f"imported from {source.file_name} ({source.format}): answers and verdicts are "
            "the publisher's, never re-answered or re-judged here"
        ],
    )


def remove_killed_writes(out: Path) -> int:
    """Remove the temporary folders of killed writes to `out`; how many were removed.

    Only folders named as `write_run` names them (`.<out>.<pid>.<random>.importing`,
    real folders, not links) whose PID no process has any longer.
    """
    pattern = re.compile(rf"\.{re.escape(out.name)}\.([0-9]+)\.[A-Za-z0-9_]+\.importing")
    removed = 0
    for entry in out.parent.iterdir() if out.parent.is_dir() else ():
        found = pattern.fullmatch(entry.name)
        if found and entry.is_dir() and not entry.is_symlink() and not pid_alive(int(found[1])):
            shutil.rmtree(entry)
            removed += 1
    return removed


def write_run(out: Path, records: list[tuple[Question, QuestionRecord]], meta: RunMeta) -> None:
    """Write every record, run.json and MANIFEST.json under a temp name, then rename to `out`."""
    if out.exists():
        raise PublishedError(
            f"{out}: already exists: pass a new --out (an import never overwrites)"
        )
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)
    remove_killed_writes(out)
    tmp = Path(
        tempfile.mkdtemp(prefix=f".{out.name}.{os.getpid()}.", suffix=".importing", dir=parent)
    )
    try:
        for question, record in records:
            write_record(tmp, question.file_stem, record)
        write_json_atomic(tmp / "run.json", meta.to_json())
        from bench.verify.check import write_manifest

        write_manifest(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp makes 0700; results are meant to be shared
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
