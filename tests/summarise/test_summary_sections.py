"""A summary section of its own module reaches SUMMARY.md and `--json` (CONTRIBUTING recipe)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.summarise import summarise_run
from bench.summarise.render import render_markdown, render_text
from bench.summarise.render_json import summary_to_json
from tests.summarise.test_summarise import small_run


@dataclass
class QuestionsPerArm:
    """A toy section: the questions each arm answered (what a section module defines)."""

    counts: dict[str, int]

    def markdown(self) -> list[str]:
        rows = [f"| {arm} | {n} |" for arm, n in self.counts.items()]
        return ["", "## Questions per arm", "", "| arm | n |", "|---|---|", *rows]

    def to_json(self) -> dict[str, int]:
        return dict(self.counts)


def test_a_section_is_shown_after_the_added_views_and_in_json(tmp_path: Path) -> None:
    summary = summarise_run(small_run(tmp_path))
    before = render_markdown(summary)
    assert "## Questions per arm" not in before and "questions_per_arm" not in before
    summary.sections["questions_per_arm"] = QuestionsPerArm({"raw": 8, "rag": 7})
    markdown = render_markdown(summary)
    assert "## Questions per arm\n\n| arm | n |\n|---|---|\n| raw | 8 |\n| rag | 7 |" in markdown
    assert "## Questions per arm" in render_text(summary)
    assert summary_to_json(summary)["questions_per_arm"] == {"raw": 8, "rag": 7}
