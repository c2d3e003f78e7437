"""Answer-key errata for LoCoMo: find, verify and apply a published audit of the gold.

The audit (dial481/locomo-audit `errors.json`, CC BY-NC 4.0; see /datasets/locomo/README.md)
lists 156 questions: 99 whose gold answer is wrong or ambiguous and 57 whose evidence
ids are wrong (`WRONG_CITATION`). Its ids are `locomo_<conversation index>_qa<0-based
question index>`, i.e. positions in `locomo10.json`; they are mapped to armbench
question ids (`<sample_id>:<index>`) and each entry's question text and category must
equal the loaded question's, so an audit can never be applied to the wrong question.

`dataset.errata` selects the file: `null` (off), `auto` (`$BENCH_DATA_DIR/<file>`, the
cache, else a download checked against `ERRATA_SHA256`) or a path (used as given, its
SHA-256 recorded).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.config import DatasetConfig
from bench.errors import ConfigError, DatasetError
from bench.loaders.locomo_ids import locomo_row_position
from bench.loaders.resolve import resolve_data_file, sha256_file
from bench.types import Conversation, Correction, Dataset, ErrataSource, Question
from bench.untrusted import MAX_DATASET_BYTES, UntrustedJSONError, read_json

ERRATA_FILENAME = "locomo-audit-errors.json"
ERRATA_URL = "https://raw.githubusercontent.com/dial481/locomo-audit/main/errors.json"
ERRATA_SHA256 = "f298ef46263fada20688a1d672be37d4f488c6da3b19343eea55ae5c1b5fe55e"
"""The audited copy (upstream commit 9493fb4); a download must match it."""
AUTO = "auto"
log = logging.getLogger(__name__)
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
_FIX = "set dataset.errata=null to score against the official key only"


@dataclass(frozen=True)
class Erratum:
    """One audit entry, read and type-checked, not yet matched to a question."""

    audit_id: str
    """The audit's id, `locomo_<conversation index>_qa<0-based question index>`."""
    conversation_index: int
    """0-based position of the conversation in `locomo10.json`."""
    question_index: int
    """0-based position of the question within that conversation."""
    question: str
    """The question text the audit quotes; must equal the loaded question's."""
    category: int
    """The LoCoMo category (1–5) the audit gives; must equal the loaded one's."""
    correction: Correction
    """The audit's verdict (error type, corrected gold and evidence)."""


def errata_file(setting: str | None, loader: str) -> Path | None:
    """The audit file selected by `dataset.errata` (None when off); downloads if needed."""
    if setting is None or str(setting).lower() in ("", "null", "none", "off", "false"):
        return None
    if loader != "locomo":
        raise ConfigError(
            f"dataset.errata={setting}: the answer-key audit applies to LoCoMo only "
            f"(dataset.loader={loader}); {_FIX}"
        )
    cfg = DatasetConfig(
        name="locomo-audit",
        filename=ERRATA_FILENAME,
        url=ERRATA_URL,
        sha256=ERRATA_SHA256,
        path=None if setting == AUTO else setting,
    )
    try:
        return resolve_data_file(cfg)
    except DatasetError as exc:
        if setting == AUTO:  # an optional extra view: never the reason a run cannot start
            log.warning("dataset.errata=auto: %s; scoring against the official key only", exc)
            return None
        raise DatasetError(f"{exc}; or {_FIX}") from None


def read_errata(path: Path) -> list[Erratum]:
    """Parse and type-check every entry of an audit file (DatasetError names the entry)."""
    try:
        data = read_json(path, limit=MAX_DATASET_BYTES, follow_symlinks=True, fix=_FIX)
    except UntrustedJSONError as exc:
        raise DatasetError(f"{path}: unreadable errata file ({exc.what}); {_FIX}") from None
    if not isinstance(data, list):
        raise DatasetError(f"{path}: errata file must be a JSON list of entries; {_FIX}")
    return [_entry(path, i, raw) for i, raw in enumerate(data)]


def _entry(path: Path, index: int, raw: Any) -> Erratum:
    where = f"{path}: entry {index}"
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: not an object; {_FIX}")
    text = {k: raw.get(k) for k in ("question_id", "question", "error_type", "correct_answer")}
    for key, value in text.items():
        if not isinstance(value, str) or not value:
            raise DatasetError(f"{where}: '{key}' must be a non-empty string; {_FIX}")
    position = locomo_row_position(text["question_id"] or "")
    if position is None:
        raise DatasetError(
            f"{where}: question_id {text['question_id']!r} is not locomo_<n>_qa<m>; {_FIX}"
        )
    category, evidence = raw.get("category"), raw.get("correct_evidence")
    if not isinstance(category, int) or isinstance(category, bool):
        raise DatasetError(f"{where}: 'category' must be an integer; {_FIX}")
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        raise DatasetError(f"{where}: 'correct_evidence' must be a list of strings; {_FIX}")
    correction = Correction(
        audit_id=str(text["question_id"]),
        error_type=str(text["error_type"]),
        gold=str(text["correct_answer"]),
        evidence=_evidence_ids(evidence),
    )
    return Erratum(
        audit_id=correction.audit_id,
        conversation_index=position[0],
        question_index=position[1],
        question=str(text["question"]),
        category=category,
        correction=correction,
    )


def _evidence_ids(entries: list[str]) -> tuple[str, ...]:
    """Evidence strings as `D<s>:<t>` ids, as the LoCoMo loader normalises them."""
    ids = []
    for entry in entries:
        for token in re.split(r"[;,\s]+", entry):
            if m := _EVIDENCE_ID.fullmatch(token):
                ids.append(f"D{m[1]}:{m[2]}")
    return tuple(ids)


def apply_errata(dataset: Dataset, path: Path) -> Dataset:
    """The dataset with each audited question carrying its `Correction`.

    A citation-only entry keeps the official gold (the audit's `correct_answer` there
    is the official answer plus a remark); the others carry the corrected answer.
    """
    errata = read_errata(path)
    by_conv: dict[int, dict[int, Correction]] = {}
    for e in errata:
        question = _target(dataset, e, path)
        gold = e.correction.gold if e.correction.score_affected else question.gold
        by_conv.setdefault(e.conversation_index, {})[e.question_index] = replace(
            e.correction, gold=gold
        )
    convs = tuple(_corrected(c, by_conv.get(i, {})) for i, c in enumerate(dataset.conversations))
    applied = [c for conv in by_conv.values() for c in conv.values()]
    source = ErrataSource(
        path=str(path),
        sha256=sha256_file(path),
        entries=len(applied),
        score_affected=sum(c.score_affected for c in applied),
    )
    return replace(dataset, conversations=convs, errata=source)


def _target(dataset: Dataset, e: Erratum, path: Path) -> Question:
    """The question an entry names; its text and category must match the entry's."""
    where = f"{path}: {e.audit_id}"
    convs = dataset.conversations
    if e.conversation_index >= len(convs):
        raise DatasetError(
            f"{where}: no conversation {e.conversation_index} in {dataset.path} "
            f"({len(convs)} loaded); {_FIX}"
        )
    questions = convs[e.conversation_index].questions
    if e.question_index >= len(questions):
        raise DatasetError(f"{where}: no question {e.question_index} in that conversation; {_FIX}")
    question = questions[e.question_index]
    if question.question.strip() != e.question.strip() or question.category != e.category:
        raise DatasetError(
            f"{where}: maps to {question.question_id} but its question text or category "
            f"differs ({question.question!r}); the audit is for another file; {_FIX}"
        )
    return question


def _corrected(conv: Conversation, fixes: dict[int, Correction]) -> Conversation:
    if not fixes:
        return conv
    questions = tuple(
        replace(q, correction=fixes[i]) if i in fixes else q for i, q in enumerate(conv.questions)
    )
    return replace(conv, questions=questions)


__all__ = [
    "AUTO",
    "ERRATA_FILENAME",
    "ERRATA_SHA256",
    "ERRATA_URL",
    "Erratum",
    "apply_errata",
    "errata_file",
    "read_errata",
]
