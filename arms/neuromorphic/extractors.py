"""The choice between the two extractor kinds: LLM over a provider, or rule-based offline."""

from __future__ import annotations

from arms.neuromorphic.extract_llm import LLMExtractor
from arms.neuromorphic.extract_rules import RuleExtractor
from arms.neuromorphic.extraction import Extractor
from bench.providers.base import ChatProvider


def make_extractor(provider: ChatProvider | None, mode: str = "tools") -> Extractor:
    """The LLM extractor over `provider` in `mode`, or the offline rule-based one when None."""
    if provider is None:
        return RuleExtractor()
    return LLMExtractor(provider, mode)
