"""The answer-type gate: when a question names the category of its answer, say so.

"Which state …", "how old …": the gate adds one rule to the context that licenses
answering at that level (e.g. the state a retrieved town is in). Questions that name
no category get no rule.
"""

from __future__ import annotations

import re

_TYPES: tuple[tuple[str, str, str], ...] = (
    (r"\b(which|what) (us |u\.s\. )?state\b", "state",
     "If the facts only name a town or city, answer with the state it is in."),
    (r"\b(which|what) country\b", "country",
     "If the facts only name a city or region, answer with the country it is in."),
    (r"\b(which|what) city\b", "city",
     "If the facts only name a venue or neighbourhood, answer with the city it is in."),
    (r"\bhow old\b", "age",
     "If the facts give a birth year or an earlier age, work out the age at the time asked."),
    (r"\b(which|what) year\b", "year",
     "If the facts give a full or relative date, answer with its year."),
    (r"\b(which|what) month\b", "month",
     "If the facts give a full or relative date, answer with its month and year."),
    (r"\bhow many\b", "number",
     "Count the distinct items the facts mention and answer with the number."),
    (r"\bhow long\b", "duration",
     "Answer with a length of time worked out from the dates in the facts."),
    (r"^\s*when\b", "date",
     "Answer with the calendar date the facts give (resolved dates are in brackets), "
     "not a relative phrase such as 'yesterday'."),
)  # fmt: skip
_COMPILED = tuple((re.compile(p, re.IGNORECASE), kind, rule) for p, kind, rule in _TYPES)


def answer_type(question: str) -> tuple[str, str] | None:
    """(answer category, rule) named by the question, or None."""
    for pattern, kind, rule in _COMPILED:
        if pattern.search(question):
            return kind, rule
    return None


def gate_note(question: str) -> str | None:
    """The rule line added to the context, or None when the question names no category."""
    found = answer_type(question)
    if found is None:
        return None
    kind, rule = found
    return f"<ANSWER_TYPE>The question asks for a {kind}. {rule}</ANSWER_TYPE>"
