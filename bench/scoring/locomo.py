"""Official LoCoMo answer metrics (snap-research/locomo `task_eval/evaluation.py`), pure functions.

Normalisation (`normalize_answer`): delete commas; lowercase; delete every character of
`string.punctuation`; replace the whole words a, an, the, and by a space; collapse
whitespace. Tokens are then Porter-stemmed (nltk's `PorterStemmer()`, as the official
code).

    token F1  = 2·P·R / (P + R),  P = |pred ∩ gold| / |pred|,  R = |pred ∩ gold| / |gold|

with ∩ the multiset intersection of stemmed tokens (0 when nothing is shared). Higher is
better. Per category (official integers):

- 1 multi-hop: split prediction and gold on commas; mean over gold parts of the best F1
  against any predicted part.
- 2 temporal, 4 single-hop: token F1.
- 3 open-domain: gold cut at its first `;`, then token F1.
- 5 adversarial: F1 = 1.0 if the answer abstains (`is_abstention`) else 0.0; the gold,
  usually None, is not used.

Questions with a `question_type` (LongMemEval) use plain token F1 whatever their integer
`category`; their `_abs` questions are scored like category 5.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any

from bench.scoring.rules import DEFAULT_F1_THRESHOLD, f1_outcome_name, f1_rule
from bench.text import stem
from bench.types import Question

__all__ = [
    "DEFAULT_F1_THRESHOLD",
    "OUTCOME_F1",
    "exact_match",
    "f1_outcome_name",
    "is_abstention",
    "is_abstention_item",
    "multi_answer_f1",
    "normalize_answer",
    "outcome_from_f1",
    "score_answer",
    "token_f1",
    "trap_hit",
]

OUTCOME_F1 = f1_outcome_name(DEFAULT_F1_THRESHOLD)
"""The default offline outcome name, `f1>=0.5`."""
ABSTENTION_PHRASES = ("not mentioned", "no information available")
TRAP_F1_THRESHOLD = 0.5
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """The official normalisation: no commas, lowercase, no punctuation or a/an/the/and.

    >>> normalize_answer("The Beach, and the Mountains!")
    'beach mountains'
    """
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _tokens(text: str) -> list[str]:
    return [stem(w) for w in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Official multiset token F1 of stemmed, normalised tokens, in [0, 1] (higher is better).

    >>> token_f1("painting and running", "she paints")
    0.5
    """
    pred, ref = _tokens(prediction), _tokens(gold)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Category 1: mean over comma-separated gold parts of the best F1 against any predicted part.

    >>> multi_answer_f1("beach, forest", "beach, mountains")
    0.5
    """
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)


def exact_match(prediction: str, gold: str) -> bool:
    """Official EM: the *sets* of normalised (unstemmed) tokens are equal."""
    return set(normalize_answer(prediction).split()) == set(normalize_answer(gold).split())


def is_abstention(answer: str) -> bool:
    """True when the answer says "not mentioned" or "no information available" (any case)."""
    low = answer.lower()
    return any(phrase in low for phrase in ABSTENTION_PHRASES)


def is_abstention_item(question: Question) -> bool:
    """LoCoMo category 5 or a LongMemEval `_abs` question: the right answer is to abstain."""
    if question.question_type is not None:
        return question.question_id.endswith("_abs")
    return question.category == 5


def trap_hit(answer: str, trap: str | None) -> bool:
    """The answer fell for the adversarial trap.

    Rule: the answer does not abstain, and either its official token F1 against the trap
    is >= 0.5 or the trap's stemmed tokens occur contiguously inside the answer's.
    """
    if not trap or is_abstention(answer):
        return False
    if token_f1(answer, trap) >= TRAP_F1_THRESHOLD:
        return True
    ans, bait = _tokens(answer), _tokens(trap)
    width = len(bait)
    return width > 0 and any(ans[i : i + width] == bait for i in range(len(ans) - width + 1))


def _gold_text(question: Question) -> str:
    gold = "" if question.gold is None else str(question.gold)
    if question.question_type is None and question.category == 3:
        gold = gold.split(";")[0].strip()
    return gold


def score_answer(answer: str, question: Question) -> dict[str, Any]:
    """Every official metric of one answer: `f1`, `em`, `abstained`, and `trap_hit` on cat. 5.

    Abstention items (category 5, LongMemEval `_abs`) get f1 = em = 1.0/True iff the
    answer abstains, as the official code. Gold may be an int in the raw data; it is
    compared as text.
    """
    abstained = is_abstention(answer)
    if is_abstention_item(question):
        scores: dict[str, Any] = {"f1": 1.0 if abstained else 0.0, "em": abstained}
        scores["abstained"] = abstained
        if question.question_type is None:
            scores["trap_hit"] = trap_hit(answer, question.adversarial_answer)
        return scores
    gold = _gold_text(question)
    multi = question.question_type is None and question.category == 1
    f1 = multi_answer_f1(answer, gold) if multi else token_f1(answer, gold)
    return {"f1": f1, "em": exact_match(answer, gold), "abstained": abstained}


def outcome_from_f1(scores: dict[str, Any], question: Question, threshold: float) -> bool:
    """The offline binary outcome: abstained (abstention items), else `f1 >= threshold`."""
    verdict = f1_rule(scores, abstention_item=is_abstention_item(question), threshold=threshold)
    return bool(verdict)
