"""Answer sets whose truth is known: the gold answers and wrong answers derived from them.

Every set is a list of `Item`s (a dataset question and an answer) with one truth for
the whole set: `right` (a judge should accept every answer: its rejections are false
rejects) or `wrong` (a judge should reject every answer: its acceptances are false
accepts). Derived deterministically from the dataset (docs/calibration.md):

- `gold` (right): the gold answer itself; for an abstention question (LoCoMo category
  5, LongMemEval `_abs`) the answer "Not mentioned in the conversation.".
- `other_gold` (wrong): the gold of another question of the same group (LoCoMo category
  or LongMemEval type) whose normalised gold differs, chosen by the smallest
  SHA-256 of `<question id>|<other question id>` (stable, order-independent).
- `shifted_date` (wrong): a gold answer holding a year (1900–2099) with every such year
  moved one later ("7 May 2023" → "7 May 2024"); golds without a year are left out.
- `trap` (wrong): LoCoMo category 5's adversarial answer (what the trap invites).
- `not_mentioned` (wrong): "Not mentioned in the conversation." for an answerable question.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bench.scoring.locomo import is_abstention_item, normalize_answer
from bench.types import Dataset, Question

RIGHT = "right"
WRONG = "wrong"
ABSTAIN = "Not mentioned in the conversation."
"""The abstaining answer (the offline rule's abstention phrase)."""
_YEAR = re.compile(r"\b(19|20)(\d\d)\b")


@dataclass(frozen=True)
class Item:
    """One answer to one question, in a set of known truth."""

    question: Question
    """The dataset question (its id, category or type, gold)."""
    answer: str
    """The answer judged."""


@dataclass(frozen=True)
class AnswerSet:
    """Answers that are all right or all wrong."""

    name: str
    """Set name (`gold`, `other_gold`, ..., or the answer file's stem)."""
    truth: str
    """`right` or `wrong`."""
    items: tuple[Item, ...]
    """The answers, in dataset order."""
    source: str = "derived"
    """`derived` (from the dataset) or the answer file's path."""


def group_key(question: Question) -> str:
    """The LongMemEval type, else the LoCoMo category as text (the summariser's groups)."""
    return question.question_type or str(question.category)


def _gold_set(questions: list[Question]) -> list[Item]:
    items = []
    for q in questions:
        if is_abstention_item(q):
            items.append(Item(q, ABSTAIN))
        elif q.gold is not None:
            items.append(Item(q, str(q.gold)))
    return items


def _stable_rank(a: Question, b: Question) -> str:
    return hashlib.sha256(f"{a.question_id}|{b.question_id}".encode()).hexdigest()


def _other_gold(questions: list[Question]) -> list[Item]:
    answerable = [q for q in questions if q.gold is not None and not is_abstention_item(q)]
    by_group: dict[str, list[Question]] = {}
    for q in answerable:
        by_group.setdefault(group_key(q), []).append(q)
    items = []
    for q in answerable:
        own = normalize_answer(str(q.gold))
        others = [o for o in by_group[group_key(q)] if normalize_answer(str(o.gold)) != own]
        if others:
            chosen = min(others, key=lambda o, q=q: _stable_rank(q, o))  # type: ignore[misc]
            items.append(Item(q, str(chosen.gold)))
    return items


def shift_years(text: str) -> str | None:
    """`text` with every year 1900–2099 one later; None when it holds no year.

    >>> shift_years("The week before 9 June 2023"), shift_years("Paris")
    ('The week before 9 June 2024', None)
    """
    if not _YEAR.search(text):
        return None
    return _YEAR.sub(lambda m: str(int(m.group(0)) + 1), text)


def _shifted(questions: list[Question]) -> list[Item]:
    items = []
    for q in questions:
        if q.gold is not None and not is_abstention_item(q):
            shifted = shift_years(str(q.gold))
            if shifted is not None:
                items.append(Item(q, shifted))
    return items


def _trap(questions: list[Question]) -> list[Item]:
    return [Item(q, q.adversarial_answer) for q in questions if q.adversarial_answer]


def _not_mentioned(questions: list[Question]) -> list[Item]:
    answerable = (q for q in questions if q.gold is not None and not is_abstention_item(q))
    return [Item(q, ABSTAIN) for q in answerable]


DERIVED: dict[str, tuple[str, Callable[[list[Question]], list[Item]]]] = {
    "gold": (RIGHT, _gold_set),
    "other_gold": (WRONG, _other_gold),
    "shifted_date": (WRONG, _shifted),
    "trap": (WRONG, _trap),
    "not_mentioned": (WRONG, _not_mentioned),
}
"""Derived set name -> (truth, builder)."""


def all_questions(dataset: Dataset) -> list[Question]:
    """Every question of the dataset, in dataset order."""
    return [q for c in dataset.conversations for q in c.questions]


def derived_sets(dataset: Dataset, names: Iterable[str]) -> list[AnswerSet]:
    """The named derived sets (empty ones kept: a dataset without traps says so)."""
    questions = all_questions(dataset)
    out = []
    for name in names:
        truth, build = DERIVED[name]
        out.append(AnswerSet(name, truth, tuple(build(questions))))
    return out
