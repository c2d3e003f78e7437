"""Reading a run directory for the summariser: its records and run.json, or one line why not."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bench.errors import BenchError
from bench.records import QuestionRecord, natural_key
from bench.runmeta import RunMeta, read_run_meta
from bench.untrusted import UntrustedJSONError, read_json

_FIX = "restore the record, or re-run the question with bench.run"


class SummaryError(BenchError):
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

    The garbage collector runs as usual: pausing it while the records are read saved
    0.02 s of 0.23 s of CPU on results/locomo-offline-v0.3.0 (1,986 records, 121 young
    collections), under the summariser's ±0.1 s run to run.
    """
    folder = run_dir / "questions"
    if not folder.is_dir():
        raise SummaryError(f"{run_dir}: no questions/ folder; pass a run directory of bench.run")
    records = read_records(str(folder))
    if not records:
        raise SummaryError(f"{folder}: no question records (*.json) to summarise")
    records.sort(key=lambda r: natural_key(r.question_id))
    meta, problems = read_run_meta(run_dir / "run.json")
    return LoadedRun(run_dir, meta, records, "; ".join(problems) or None)


def read_records(folder: str) -> list[QuestionRecord]:
    """Every record of `folder/*.json` in name order; SummaryError names a bad file.

    Each file is read with `read_file_bytes`: regular files of bounded size only, so a
    symlink, FIFO or device planted among the records is refused in one line.
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
            record = from_json(read_json(path, fix=_FIX), source=path)
            if record.question_id.__class__ is not str:
                raise TypeError(f"question_id is {record.question_id!r}, not a string")
        except UntrustedJSONError as exc:  # bench.untrusted: bounded size, depth, numbers
            raise SummaryError(f"{path}: unreadable record ({exc.what}); {_FIX}") from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SummaryError(f"{path}: unreadable record ({one_line_reason(exc)})") from None
        if record.question_id in seen:
            raise SummaryError(
                f"{path}: question_id {record.question_id} also in {seen[record.question_id]}"
            )
        seen[record.question_id] = path
        records.append(record)
    return records


def one_line_reason(exc: BaseException) -> str:
    """`Type: first line of the message` (200 characters at most) for a one-line error."""
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
