"""Test data in prompts: an index of every dataset the project reads, and the overlap rules.

A prompt that carries a benchmark's answers leaks the test set into every run (issue 32:
the answer prompt gave LoCoMo's first two gold dates as its examples). This module
collects every text a model is sent as instructions — every file under `conf/prompts/`
and every non-docstring string literal of each module under `bench/` and `arms/` that
builds chat messages (its AST holds a dict display with a `"role"` key) — and indexes
the datasets once: gold answers, evidence turn texts, question texts and speaker names.

A prompt text overlaps the data, and the test fails, when any of these holds:

- R1 name: a speaker name of >= 3 letters occurs as a whole word (case-sensitive).
- R2 year: a year 1900-2099 (standing alone, not inside an identifier such as the model
  name `gpt-4o-2024-08-06`) occurs in the prompt and in any gold answer, evidence turn
  or question.
- R3 day: a (day, month) pair (`7 May`, `May 7th`) occurs in the prompt and in a gold answer.
- R4 answer: a gold answer with >= 2 content words outside `GENERIC_TERMS` occurs in the
  prompt as a contiguous run of lower-cased words.
- R5 trigram: three consecutive content terms (`bench.text.content_terms`: lower-cased,
  the project's stop words removed, Porter-stemmed) of a gold answer, evidence turn or
  question occur consecutively in the prompt.

Common words are the project's `STOPWORDS` plus `GENERIC_TERMS` (number words, relative
time words and the abstention phrase), which any answer-format instruction needs and
which occur as whole gold answers ("two", "last year", "not mentioned").
"""

from __future__ import annotations

import ast
import calendar
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from bench.text import content_terms, words

ROOT = Path(__file__).resolve().parents[2]
SHARED_FILES = (
    "locomo10.json",
    "longmemeval-s-subset16.json",
    "locomo-plus/locomo_plus.json",
    "beam-100k/*/probing_questions.json",
)
ANSWER_KEYS = frozenset(
    {
        "answer",
        "answers",
        "golden_answer",
        "correct_answer",
        "adversarial_answer",
        "gold",
        "ideal_response",
        "ideal_answer",
        "ideal_summary",
    }
)
QUESTION_KEYS = frozenset({"question", "query", "trigger_query"})
EVIDENCE_KEYS = frozenset({"cue_dialogue"})
SPEAKER_KEYS = frozenset({"speaker_a", "speaker_b", "speaker"})
GENERIC_TERMS = frozenset(
    content_terms(
        "zero two three four five six seven eight nine ten first second last next "
        "year years month months week weeks weekend day days today tomorrow yesterday ago "
        "mentioned none unknown"
    )
)
MONTHS = [m.lower() for m in calendar.month_name[1:]]
_YEAR = re.compile(r"(?<![\w-])(19\d\d|20\d\d)\b")
"""A year standing alone: not inside an identifier such as `gpt-4o-2024-08-06`."""
_MONTH = "(" + "|".join(MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b", re.I)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b", re.I)


@dataclass
class DataIndex:
    """What the datasets hold, in the forms the rules compare."""

    files: list[str] = field(default_factory=list)
    """Dataset files read."""
    names: set[str] = field(default_factory=set)
    """Speaker names of >= 3 letters."""
    answers: set[str] = field(default_factory=set)
    """Gold answer texts (list answers item by item)."""
    texts: set[str] = field(default_factory=set)
    """Evidence turn texts and question texts."""
    trigrams: set[tuple[str, ...]] = field(default_factory=set)
    """Content-term trigrams of answers, evidence and questions (R5)."""
    years: set[str] = field(default_factory=set)
    """Years in answers, evidence and questions (R2)."""
    days: set[tuple[int, str]] = field(default_factory=set)
    """(day, month) pairs of gold answers (R3)."""
    phrases: set[str] = field(default_factory=set)
    """Distinctive gold answers as space-joined lower-cased words (R4)."""


def trigrams(text: str) -> set[tuple[str, ...]]:
    """Consecutive content-term triples of `text`."""
    terms = content_terms(text)
    return {terms[i : i + 3] for i in range(len(terms) - 2)}


def day_months(text: str) -> set[tuple[int, str]]:
    """(day, three-letter month) pairs written `7 May`, `7th of May` or `May 7th`."""
    found = {(int(m.group(1)), m.group(2)[:3].lower()) for m in _DAY_MONTH.finditer(text)}
    found |= {(int(m.group(2)), m.group(1)[:3].lower()) for m in _MONTH_DAY.finditer(text)}
    return {(d, m) for d, m in found if 1 <= d <= 31}


def phrase(text: str) -> str:
    """Lower-cased words joined by single spaces, padded so a match is word-aligned."""
    return " " + " ".join(w.lower() for w in words(text)) + " "


def _strings(value: Any) -> Iterator[str]:
    """Strings and numbers of an answer value (lists item by item, `{"text": ...}` items)."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict) and "text" in value:
        yield from _strings(value["text"])


def _locomo_evidence(sample: dict[str, Any]) -> Iterator[str]:
    """The texts of the turns a LoCoMo sample's questions cite as evidence."""
    cited = {
        e for q in sample.get("qa") or [] for e in q.get("evidence") or [] if isinstance(e, str)
    }
    for session in (sample.get("conversation") or {}).values():
        for turn in session if isinstance(session, list) else []:
            if isinstance(turn, dict) and turn.get("dia_id") in cited:
                yield str(turn.get("text", ""))


def _walk(node: Any, index: DataIndex) -> None:
    """Collect answers, questions, evidence and speakers from any dataset's JSON."""
    if isinstance(node, list):
        for item in node:
            _walk(item, index)
        return
    if not isinstance(node, dict):
        return
    if "qa" in node and "conversation" in node:  # LoCoMo sample
        index.texts.update(_locomo_evidence(node))
    if node.get("has_answer") is True and isinstance(node.get("content"), str):  # LongMemEval
        index.texts.add(node["content"])
    for key, value in node.items():
        if key in ANSWER_KEYS:
            index.answers.update(_strings(value))
        elif key in QUESTION_KEYS or key in EVIDENCE_KEYS:
            index.texts.update(_strings(value))
        elif key in SPEAKER_KEYS and isinstance(value, str):
            index.names.update(w for w in words(value) if len(w) >= 3)
        else:
            _walk(value, index)


def data_dirs() -> list[Path]:
    """`$BENCH_DATA_DIR`, then `shared/data` beside the repository or any folder above it."""
    dirs = [Path(os.environ["BENCH_DATA_DIR"])] if os.environ.get("BENCH_DATA_DIR") else []
    dirs += [parent / "shared" / "data" for parent in ROOT.parents]
    return [d for d in dirs if d.is_dir()]


def dataset_files() -> list[Path]:
    """The committed fixtures (always) and the shared copies that are present."""
    files = sorted((ROOT / "datasets").rglob("*.json"))
    files += sorted((ROOT / "datasets").rglob("queries.jsonl"))
    for folder in data_dirs()[:1]:
        for pattern in SHARED_FILES:
            files.extend(sorted(folder.glob(pattern)))
    return files


def _load(path: Path) -> Any:
    if path.suffix == ".jsonl":  # BEIR queries: {"_id", "text"} per line
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        return [{"query": row.get("text", "")} for row in rows]
    return json.loads(path.read_text(encoding="utf-8"))


def build_index(files: Iterable[Path]) -> DataIndex:
    """Index the given dataset files (every rule's data side)."""
    index = DataIndex()
    for path in files:
        index.files.append(str(path))
        _walk(_load(path), index)
    for text in index.answers | index.texts:
        index.trigrams |= trigrams(text)
        index.years.update(_YEAR.findall(text))
    for answer in index.answers:
        index.days |= day_months(answer)
        if len(set(content_terms(answer)) - GENERIC_TERMS) >= 2:
            index.phrases.add(phrase(answer))
    return index


@lru_cache(maxsize=1)
def data_index() -> DataIndex:
    """The index of every dataset present, built once per test session."""
    return build_index(dataset_files())


def _builds_messages(tree: ast.Module) -> bool:
    """True when the module has a dict display with a `"role"` key (a chat message)."""
    return any(
        isinstance(node, ast.Dict)
        and any(isinstance(k, ast.Constant) and k.value == "role" for k in node.keys)
        for node in ast.walk(tree)
    )


def _docstrings(tree: ast.Module) -> set[int]:
    """Ids of the docstring nodes (documentation, never sent to a model)."""
    found = set()
    for node in ast.walk(tree):
        scoped = isinstance(
            node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        )
        if scoped and node.body and isinstance(node.body[0], ast.Expr):
            found.add(id(node.body[0].value))
    return found


def _shown(path: Path) -> str:
    """`path` relative to the repository when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


_PROMPT_NAME = re.compile(r"PROMPT|SYSTEM|INSTRUCTION|TEMPLATE|REPAIR|RUBRIC", re.I)


def _named_prompts(tree: ast.Module) -> list[ast.AST]:
    """Values of module-level assignments whose name says prompt (`SYSTEM_PROMPT = ...`)."""
    found: list[ast.AST] = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if any(_PROMPT_NAME.search(n) for n in names):
            found.append(node.value)  # type: ignore[union-attr]
    return found


def code_prompts(folders: Iterable[Path]) -> dict[str, str]:
    """`path:line:column` -> string literal of the code's prompts.

    Every non-docstring literal of a module that builds chat messages, and the literals
    of any module-level constant named like a prompt (`*PROMPT*`, `*SYSTEM*`, ...) in
    any other module, wherever the messages are built.
    """
    out: dict[str, str] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            roots: list[ast.AST] = [tree] if _builds_messages(tree) else _named_prompts(tree)
            docs = _docstrings(tree)
            for node in (n for root in roots for n in ast.walk(root)):
                text = node.value if isinstance(node, ast.Constant) else None
                if isinstance(text, str) and text.strip() and id(node) not in docs:
                    out[f"{_shown(path)}:{node.lineno}:{node.col_offset}"] = text
    return out


def prompt_texts() -> dict[str, str]:
    """Every prompt file under conf/prompts and every prompt string in the code."""
    files = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "conf" / "prompts").rglob("*"))
        if p.is_file()
    }
    return files | code_prompts([ROOT / "bench", ROOT / "arms"])


def overlaps(text: str, index: DataIndex) -> list[str]:
    """Every rule `text` breaks against `index`, one line each (empty when clean)."""
    found = [
        f"R1 speaker name {n!r}"
        for n in sorted(index.names)
        if re.search(rf"\b{re.escape(n)}\b", text)
    ]
    found += [f"R2 year {y}" for y in sorted(set(_YEAR.findall(text)) & index.years)]
    found += [f"R3 day {d} {m}" for d, m in sorted(day_months(text) & index.days)]
    padded = phrase(text)
    found += [f"R4 gold answer {p.strip()!r}" for p in sorted(index.phrases) if p in padded]
    found += [f"R5 trigram {' '.join(g)!r}" for g in sorted(trigrams(text) & index.trigrams)]
    return found
