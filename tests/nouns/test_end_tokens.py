"""Chat-template end tokens never reach an answer, a verdict or an extraction."""

from __future__ import annotations

import pytest

from bench.answer.answer_prompt import postprocess
from bench.end_tokens import END_TOKENS, strip_end_tokens
from bench.judge.judges import parse_verdict


@pytest.mark.parametrize("token", END_TOKENS)
def test_every_end_token_ends_the_answer(token: str) -> None:
    assert postprocess(f"17 March 2031{token}") == "17 March 2031"
    assert postprocess(f"Answer: a red canoe.{token}\n<|im_start|>user\nmore") == "a red canoe"
    assert strip_end_tokens(f"a{token}b{token}") == "a"


def test_the_first_end_token_wins_and_plain_text_is_untouched() -> None:
    assert strip_end_tokens("yes</s>no<|im_end|>") == "yes"
    assert strip_end_tokens("a < b and </ span>") == "a < b and </ span>"
    assert postprocess("- beach\n- forest<|im_end|>") == "beach, forest"
    assert postprocess("<|im_end|>") == ""


def test_a_verdict_followed_by_an_end_token_parses() -> None:
    assert parse_verdict('{"correct": true, "reasoning": "same day"}<|im_end|>') is True
    assert parse_verdict('{"correct": false, "reasoning": "x"}<end_of_turn>\n') is False
