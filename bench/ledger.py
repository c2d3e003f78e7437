"""The run's ledger of record writes: append-only, so reruns chosen by outcome show.

Standard library only. `bench.run` appends one JSON line to `RUN_DIR/ledger.jsonl` per
arm result it answers or judges, each time it writes the question's record:

    {"question_id", "arm", "action": "answer" | "judge", "status", "outcome", "record"}

`outcome` is the result's `correct` (true, false or null), `record` the SHA-256 of the
record file as written. Lines are only ever appended (never rewritten), so deleting a
record and answering its question again leaves both writes in the ledger.

**Rerun chosen by outcome** (`reruns_by_outcome`): a question an arm answers again
after an earlier write of that arm left it `ok` and wrong (`outcome` false). Re-judging
the same answer (`action` judge) is not a rerun, and neither is resuming an `error`
result or a question never written: those are what an interrupted run must redo.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bench.untrusted import UntrustedJSONError, read_json_lines

LEDGER_FILE = "ledger.jsonl"
"""The ledger's name inside a run directory (a result file: listed in MANIFEST.json)."""
ANSWER = "answer"
JUDGE = "judge"


def append_writes(
    run_dir: Path,
    question_id: str,
    digest: str,
    results: Mapping[str, Any],
    actions: Mapping[str, str],
) -> None:
    """Append one line per arm in `actions` (arm -> `answer`/`judge`) for a written record.

    `digest`: the record's SHA-256 as written (`bench.verify.journal.note_record`).
    `results`: arm -> its `ArmResult` (read: `status`, `correct`). One `write` of all
    lines on a file opened for appending, so writers in several processes interleave
    whole lines.
    """
    if not actions:
        return
    lines = []
    for arm, action in actions.items():
        result = results[arm]
        entry = {
            "question_id": question_id,
            "arm": arm,
            "action": action,
            "status": result.status,
            "outcome": result.correct,
            "record": digest,
        }
        lines.append(json.dumps(entry, sort_keys=True) + "\n")
    fd = os.open(run_dir / LEDGER_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, "".join(lines).encode("utf-8"))
    finally:
        os.close(fd)


def read_ledger(run_dir: Path) -> list[dict[str, Any]] | None:
    """The ledger's entries in order; None when the run has none (or it is unreadable)."""
    path = run_dir / LEDGER_FILE
    if not path.is_file() or path.is_symlink():
        return None
    try:
        rows = read_json_lines(path, follow_symlinks=False)
    except UntrustedJSONError:
        return None
    return [row for _, row in rows if isinstance(row, dict)]


def reruns_by_outcome(entries: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Arm -> question ids it answered again after an `ok`, wrong write (module rule)."""
    last: dict[tuple[str, str], Mapping[str, Any]] = {}
    found: dict[str, list[str]] = {}
    for entry in entries:
        key = (str(entry.get("arm")), str(entry.get("question_id")))
        before = last.get(key)
        wrong_before = before is not None and before.get("status") == "ok"
        wrong_before = wrong_before and before is not None and before.get("outcome") is False
        if entry.get("action") == ANSWER and wrong_before and key[1] not in found.get(key[0], []):
            found.setdefault(key[0], []).append(key[1])
        last[key] = entry
    return found
