"""In a dry run the LLM extractor reads the rule extractor's facts in place of a reply."""

from __future__ import annotations

from typing import Any

from arms.neuromorphic.dry_extract import is_dry_run, rule_arguments
from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extract_llm import LLMExtractor
from arms.neuromorphic.extract_rules import RuleExtractor
from bench.types import ChatResult, Turn

EXCHANGE = Exchange(
    1, "1:56 pm on 8 May, 2023", (Turn("Ann", "I moved to Berlin yesterday", "D1:1", 1),)
)


class Recorder:
    """A chat provider that counts calls and answers with free text (as a dry run's does)."""

    model = "recorder"

    def __init__(self, dry: bool) -> None:
        self.calls = 0
        if dry:
            self.dry_run = True

    def complete(self, messages: list[Any], **kwargs: Any) -> ChatResult:
        self.calls += 1
        return ChatResult(text="unknown", model=self.model)


def test_a_dry_run_recorder_gets_the_rules_facts_through_the_usual_parsing() -> None:
    dry = Recorder(dry=True)
    got = LLMExtractor(dry).extract(EXCHANGE, [])  # type: ignore[arg-type]
    rules = RuleExtractor().extract(EXCHANGE, []).facts
    assert dry.calls == 1 and is_dry_run(dry)
    assert rules and [f.fact_content for f in got.facts] == [f.fact_content for f in rules]
    assert not got.errors and not got.tools_ignored
    assert len(rule_arguments(EXCHANGE)["items"]) == len(rules)


def test_a_real_provider_reply_is_never_replaced() -> None:
    real = Recorder(dry=False)
    got = LLMExtractor(real).extract(EXCHANGE, [])  # type: ignore[arg-type]
    assert not is_dry_run(real) and real.calls == 1
    assert got.facts == () and got.tools_ignored  # free text, no tool call: as the server said
