"""The extractor interface (methodology §4 step 3): what an extraction yields."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.records import Fact, FactDraft
from bench.types import Usage


@dataclass(frozen=True)
class ExtractionError:
    """A malformed extraction, kept with its raw text (never dropped silently)."""

    kind: str
    """Error class: `call_failed`, `no_tool_call`, `bad_json`, `bad_arguments`, `bad_item`
    or `truncated` (a schema reply cut off at the completion cap; the items that closed
    before the cut are kept as facts, `arms.neuromorphic.cut_reply`)."""
    message: str
    """One-line description of what was wrong."""
    raw: str
    """The raw model output (or offending item) it was found in."""


@dataclass(frozen=True)
class Extraction:
    """What one exchange yielded: facts, errors, and the tokens it cost."""

    facts: tuple[FactDraft, ...] = ()
    """The well-formed fact drafts."""
    errors: tuple[ExtractionError, ...] = ()
    """The malformed parts, kept with their raw text."""
    usage: Usage = Usage()
    """Tokens the extraction call cost."""
    mode: str = ""
    """How the facts were asked for: `tools`, `json_schema`, or `` (rule-based)."""
    tools_ignored: bool = False
    """True when the server answered a tool request with free text and no tool call."""


class Extractor(Protocol):
    """Turns an exchange (plus facts already known about it) into fact drafts."""

    model: str
    version: str

    def extract(self, exchange: Exchange, known: Sequence[Fact]) -> Extraction:
        """Facts stated in `exchange`; `known` are retrieved facts it may override."""
        ...
