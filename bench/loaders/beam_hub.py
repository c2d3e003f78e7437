"""BEAM from the Hugging Face Hub: one parquet file per tier, rows converted to the tier layout.

`dataset.path=<file>.parquet` reads such a file where it lies (hashed, not checked).
`dataset=beam dataset.tier=128k|500k|1m` with no local tier folder (beam_source.py) reads
`data/<split>-00000-of-00001.parquet` of `dataset.hf_repo` (`Mohammadta/BEAM`) at the
pinned commit `dataset.hf_revision` (`bench.loaders.resolve.hub_file`: Hub cache first,
SHA-256 checked on first use), where the Hub's splits are `100K` (the 128K tier), `500K`
and `1M`. The 10M tier lives in another repo (`Mohammadta/BEAM-10M`) in a layout not
verified here: it is not fetched from the Hub (the upstream download, or a tier folder).

The parquet schema was not verified here either; as public readers of the dataset use it,
a row has `conversation_id`, `chat` (a list of batches, each a list of messages with
`role`, `content`, `id`, `time_anchor`, ...) and `probing_questions` (a string holding a
JSON or Python-literal object: ability → list of questions). A row is converted to what
the tier layout's files hold: batch k becomes `{"batch_number": k, "turns": [messages]}`
(one exchange holding the batch's messages, which `beam.py` reads in order, so the turns
and sessions are those of the tier folder), and the questions are parsed with
`bench.untrusted` (JSON first, else a Python literal under the same size and depth
bounds). A file without those columns, or a malformed value, is one DatasetError line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.config import DatasetConfig
from bench.loaders.beam import beam_conversation, check_beam, load_beam
from bench.loaders.beam_source import local_beam_folder, resolve_beam_folder, tier_of
from bench.loaders.check import FileChecker
from bench.loaders.resolve import hub_file, resolve_data_file, sha256_file
from bench.types import Conversation, Dataset
from bench.untrusted import MAX_DATASET_BYTES, UntrustedJSONError, parse_json
from bench.untrusted import parse_python_literal as parse_literal

HUB_SPLITS = {"128k": "100K", "500k": "500K", "1m": "1M"}
"""`dataset.tier` → its split in the Hub dataset `Mohammadta/BEAM` (10M: not fetched)."""
COLUMNS = ("conversation_id", "chat", "probing_questions")
"""The columns a row must have."""
_FIX = "point dataset.path at a BEAM tier folder (<n>/chat.json, <n>/probing_questions.json)"
_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def load_beam_config(cfg: DatasetConfig) -> Dataset:
    """The configured tier: a local folder (or parquet file), else the Hub's file, else GitHub."""
    tier, spec = tier_of(cfg)
    if cfg.path and cfg.path.endswith(".parquet"):  # a copy of the Hub file: hashed only
        return load_beam_parquet(resolve_data_file(cfg), cfg.name, tier)
    folder = local_beam_folder(cfg)
    if folder is None and cfg.hf_repo and tier in HUB_SPLITS:
        remote = cfg.hf_split or f"data/{HUB_SPLITS[tier]}-00000-of-00001.parquet"
        local = (
            f"set BENCH_DATA_DIR=<dir with {spec.folder}/> or dataset.path=<tier folder>, "
            "or dataset.hf_repo=null to download the tier from upstream's GitHub"
        )
        path, hub = hub_file(cfg, remote, local)
        return replace(load_beam_parquet(path, cfg.name, tier), hub=hub)
    return load_beam(folder or resolve_beam_folder(cfg), cfg.name, tier)


def load_beam_parquet(path: Path, name: str = "beam", tier: str = "128k") -> Dataset:
    """Every row of a BEAM Hub parquet file as a conversation (raises DatasetError)."""
    conversations: list[Conversation] = []
    for i, row in enumerate(_rows(path)):
        conv_id = f"beam-{tier}-{_number(FileChecker(Path(f'{path} row {i}'), _FIX), row)}"
        chat = FileChecker(Path(f"{path} row {i} chat"), _FIX)
        questions = FileChecker(Path(f"{path} row {i} probing_questions"), _FIX)
        conversations.append(
            beam_conversation(
                conv_id,
                (chat, _batches(chat, row["chat"])),
                (questions, _probing(questions, row["probing_questions"])),
            )
        )
    check_beam(FileChecker(path, _FIX), conversations)
    return Dataset(name, str(path), sha256_file(path), tuple(conversations))


def _number(check: FileChecker, row: dict[str, Any]) -> str:
    """The row's `conversation_id` (a string or an integer) as the conversation's number."""
    number = row["conversation_id"]
    if isinstance(number, int) and not isinstance(number, bool):
        number = str(number)
    if not isinstance(number, str) or not _ID.fullmatch(number):
        check.fail("conversation_id", f"not 1-64 letters, digits or _.- ({number!r:.40})")
    return number


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of the parquet file (at most `MAX_DATASET_BYTES`), one by one, columns checked."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    check = FileChecker(path, _FIX)
    size = path.stat().st_size
    if size > MAX_DATASET_BYTES:
        check.fail("", f"{size} bytes, over the {MAX_DATASET_BYTES} read")
    try:
        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
        missing = [c for c in COLUMNS if c not in names]
        if missing:
            check.fail(
                "",
                f"not the BEAM Hub layout: columns {', '.join(missing)} missing (needs "
                f"{', '.join(COLUMNS)}; found {', '.join(names) or 'none'})",
            )
        for batch in parquet.iter_batches(batch_size=1, columns=list(COLUMNS)):
            yield from batch.to_pylist()
    except (pa.ArrowException, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        check.fail("", f"not a readable parquet file ({first[:120]})")


def _batches(check: FileChecker, raw: Any) -> list[Any]:
    """`chat` as `chat.json` holds it: a batch (a list of messages) becomes a batch object."""
    if isinstance(raw, str):
        raw = _parsed(check, raw, literal=False)
    batches = check.typed(raw, list, "top level (a list of batches)")
    out: list[Any] = []
    for k, batch in enumerate(batches):
        if isinstance(batch, list):
            out.append({"batch_number": k + 1, "turns": [batch]})
        elif isinstance(batch, dict):  # already a batch object (or a 10M plan)
            out.append(batch)
        else:
            check.typed(batch, list, f"[{k}] (a list of messages)")
    return out


def _probing(check: FileChecker, raw: Any) -> Any:
    """`probing_questions`: an object, or a string holding one (JSON, else a Python literal)."""
    if isinstance(raw, dict):
        return raw
    return _parsed(check, check.typed(raw, str, "top level (a string)"), literal=True)


def _parsed(check: FileChecker, text: str, literal: bool) -> Any:
    """`text` parsed as JSON, else (when `literal`) as a Python literal, both bounded."""
    try:
        return parse_json(text, str(check.path))
    except UntrustedJSONError as exc:
        if not literal:
            check.fail("", exc.what)
        as_json = exc.what
    try:
        return parse_literal(text, str(check.path))
    except UntrustedJSONError as exc:
        check.fail("", f"neither JSON ({as_json}) nor a Python literal ({exc.what})")


__all__ = ["COLUMNS", "HUB_SPLITS", "load_beam_config", "load_beam_parquet"]
