"""`<run>/.written`: the hash of every record the harness wrote, to tell a hand edit apart.

An unsigned manifest is only as good as the harness that rewrites it: a record edited
by hand, then `bench.run` re-run on the folder, used to get a fresh manifest that
matched the edit (issue 40). So before the harness writes a record, `note_record`
appends `<sha256> <questions/<stem>.json>` to `.written` (a dot file: not a result, not
in the manifest; appends of one short line are atomic, so worker processes share it).
When a session rewrites the manifest (`bench.verify.check.refresh_manifest`), a record
whose content differs from the old manifest must have its current hash in the journal;
one that does not was changed outside the harness, and the run refuses to bless it.

Limits (docs/audit.md): someone who also edits `.written`, deletes `MANIFEST.json`, or
works on a run written before the journal existed can still re-make a matching unsigned
manifest; only a signature checked against a trusted key (`--public-key`) proves more.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from bench.files import json_text, read_file_bytes
from bench.records import QuestionRecord, record_path

JOURNAL = ".written"
LINE = re.compile(r"([0-9a-f]{64}) (questions/[^\n]+)")
"""One journal line: the SHA-256 of the bytes written, then the record's path."""


def note_record(run_dir: Path, file_stem: str, record: QuestionRecord) -> str:
    """Journal the record about to be written (call before `write_record`); its SHA-256.

    The digest is of the exact bytes `write_record` writes (`json_text`), so the caller
    passes it on (`bench.ledger.append_writes`) instead of hashing the file again.
    """
    digest = hashlib.sha256(json_text(record.to_json()).encode("utf-8")).hexdigest()
    rel = record_path(run_dir, file_stem).relative_to(run_dir).as_posix()
    with open(run_dir / JOURNAL, "a", encoding="utf-8") as handle:
        handle.write(f"{digest} {rel}\n")
    return digest


def written(run_dir: Path) -> dict[str, set[str]] | None:
    """Path -> every hash the harness wrote there; None when the run has no journal.

    The file is read as untrusted (a regular file of bounded size); lines that are not
    a hash and a `questions/` path are skipped.
    """
    path = run_dir / JOURNAL
    if not path.is_file():
        return None
    text = read_file_bytes(str(path)).decode("utf-8", "replace")
    found: dict[str, set[str]] = {}
    for line in text.splitlines():
        if match := LINE.fullmatch(line):
            found.setdefault(match.group(2), set()).add(match.group(1))
    return found
