"""The shared answer step: one prompt and one post-processing for every arm."""

from __future__ import annotations

import pytest

from bench.answer.answer_prompt import load_answer_prompt, postprocess
from bench.errors import ConfigError
from bench.providers.answer_context import ABSTAIN, extract_context


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ('Answer: "7 May 2023".\n(from session 1)', "7 May 2023"),
        ("  adoption agencies  ", "adoption agencies"),
        ("\n\nFinal answer: Paris.", "Paris"),
        ("not mentioned", ABSTAIN),
        ("**Berlin**", "Berlin"),
        ("", ""),
        ("A-list celebrities", "A-list celebrities"),
        ("- beach\n- forest.", "beach, forest"),
        ("1. pottery\n2) painting", "pottery, painting"),
        ("A: Paris", "Paris"),
    ],
)
def test_postprocess_cleans_the_same_way_for_everyone(raw: str, clean: str) -> None:
    assert postprocess(raw) == clean


def test_prompt_wraps_context_and_round_trips() -> None:
    prompt = load_answer_prompt("conf/prompts/answer_v2.txt")
    messages = prompt.messages("When?", "[Session 1 — 8 May 2023]\nA: hi")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == "When?"
    assert extract_context(messages) == "[Session 1 — 8 May 2023]\nA: hi"
    assert "not mentioned" in messages[0]["content"]
    assert prompt.version.startswith("answer_v2@") and len(prompt.sha256) == 64


def test_prompt_without_placeholder_is_a_config_error(tmp_path) -> None:
    bad = tmp_path / "p.txt"
    bad.write_text("no placeholder here")
    with pytest.raises(ConfigError, match="placeholder"):
        load_answer_prompt(str(bad))


def test_missing_prompt_file_names_the_setting() -> None:
    with pytest.raises(ConfigError, match="answer.prompt=nope.txt"):
        load_answer_prompt("nope.txt")
