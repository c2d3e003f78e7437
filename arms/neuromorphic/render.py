"""Rendering recalled facts as the `<FACTS>` block the answerer sees.

Worked example (real output; the fact was said in the session of 8 May 2023 and the
extractor resolved "yesterday" into the fact text)::

    <FACTS>
    - Caroline went to a LGBTQ support group yesterday (7 May 2023). (valid 8 May 2023 – present)
      > (8 May 2023) Caroline: I went to a LGBTQ support group yesterday.
    </FACTS>
    <ANSWER_TYPE>The question asks for a date. Answer with the calendar date ...</ANSWER_TYPE>

Validity windows are session dates — the date of the session whose turn made the fact
valid and, for a superseded fact (`valid 8 May 2023 – 25 May 2023`), of the one that
overrode it — never raw turn numbers and never the resolved date, which is in the text.
"""

from __future__ import annotations

from collections.abc import Mapping

from arms.neuromorphic.records import Fact, Recalled


def validity(fact: Fact, session_dates: Mapping[int, str]) -> str:
    """`valid 8 May 2023 – present` (or `– <date>` for a superseded fact), session dates."""
    start = session_dates.get(fact.valid_at, fact.valid_date)
    end = fact.invalid_date if fact.invalid_reason == "superseded" and fact.invalid_date else None
    return f"valid {start} – {end or 'present'}"


def render_facts(
    recalled: list[Recalled],
    session_dates: Mapping[int, str],
    sources: dict[int, list[str]] | None = None,
    note: str | None = None,
) -> str:
    """The `<FACTS>` block, one fact per line, source turns indented under their fact.

    `session_dates` maps a turn to the date of its session (the archive's clock).
    """
    sources = sources or {}
    lines = ["<FACTS>"]
    for item in recalled:
        fact = item.fact
        lines.append(f"- {fact.fact_content} ({validity(fact, session_dates)})")
        lines.extend(f"  > {line}" for line in sources.get(fact.id, ()))
    lines.append("</FACTS>")
    if note:
        lines.append(note)
    return "\n".join(lines)
