"""Rendering recalled facts as the `<FACTS>` block the answerer sees.

Worked example (two facts, the first hydrated with its source turn)::

    <FACTS>
    - Caroline went to a LGBTQ support group yesterday (7 May 2023). (valid 8 May 2023 – present)
      > (8 May 2023) Caroline: I went to a LGBTQ support group yesterday and it was so powerful.
    - Caroline lives in Berlin. (valid 1 March 2023 – present)
    </FACTS>
    <ANSWER_TYPE>The question asks for a date. ...</ANSWER_TYPE>

Validity windows are session dates, never raw turn numbers.
"""

from __future__ import annotations

from arms.neuromorphic.records import Fact, Recalled


def validity(fact: Fact) -> str:
    """`valid 8 May 2023 – present` (or `– <date>` for a superseded fact)."""
    end = fact.invalid_date if fact.invalid_reason == "superseded" and fact.invalid_date else None
    return f"valid {fact.valid_date} – {end or 'present'}"


def render_facts(
    recalled: list[Recalled], sources: dict[int, list[str]] | None = None, note: str | None = None
) -> str:
    """The `<FACTS>` block, one fact per line, source turns indented under their fact."""
    sources = sources or {}
    lines = ["<FACTS>"]
    for item in recalled:
        fact = item.fact
        lines.append(f"- {fact.fact_content} ({validity(fact)})")
        lines.extend(f"  > {line}" for line in sources.get(fact.id, ()))
    lines.append("</FACTS>")
    if note:
        lines.append(note)
    return "\n".join(lines)
