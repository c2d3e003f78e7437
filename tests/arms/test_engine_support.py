"""Shared helpers for the engine tests: a bag-of-words embedder, builders, fakes."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arms.neuromorphic.config import NeuromorphicConfig
from arms.neuromorphic.engine import MemoryEngine
from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extraction import Extraction
from arms.neuromorphic.records import FactDraft, Tier
from bench.types import ChatResult, Conversation, Session, Turn, Usage

DIM = 64


class HashEmbedder:
    """Deterministic bag-of-words vectors: texts sharing words have positive cosine."""

    model = "test-hash"
    dim = DIM

    def embed(self, texts: list[str]) -> np.ndarray:
        """Sum of one fixed random vector per lower-cased word, L2-normalised."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                rng = np.random.default_rng(zlib.crc32(word.encode()))
                out[i] += rng.standard_normal(DIM).astype(np.float32)
            norm = np.linalg.norm(out[i])
            if norm > 0:
                out[i] /= norm
        return out


class ScriptedExtractor:
    """Hands out prepared drafts: `script[turn]` for each exchange (none when absent)."""

    model = "offline-rules"
    version = "scripted"

    def __init__(self, script: dict[int, list[FactDraft]] | None = None) -> None:
        self.script = script or {}
        self.calls = 0

    def extract(self, exchange: Exchange, known: Sequence[Any]) -> Extraction:
        """The drafts scripted for this call (1-based)."""
        self.calls += 1
        return Extraction(facts=tuple(self.script.get(self.calls, ())))


def draft(entity: str, content: str, tier: Tier = Tier.ACTIVE, **kw: Any) -> FactDraft:
    """A fact draft with defaults."""
    return FactDraft(entity, content, tier, **kw)


def tick(n: int, session: int = 1, date: str = "1:00 pm on 8 May, 2023") -> Exchange:
    """A small exchange numbered n."""
    turns = (Turn("Ann", f"filler turn {n}", f"D{session}:{n}", session),)
    return Exchange(session, date, turns)


def engine(
    path: Path,
    extractor: Any = None,
    config: NeuromorphicConfig | None = None,
    **kw: Any,
) -> MemoryEngine:
    """A MemoryEngine on the hash embedder (retrieval during ingest off unless configured)."""
    cfg = config or NeuromorphicConfig(retrieve_during_ingest=False)
    return MemoryEngine(path, HashEmbedder(), cfg, extractor=extractor, **kw)


def conversation(
    sessions: list[tuple[str, list[tuple[str, str]]]], cid: str = "c1"
) -> Conversation:
    """A Conversation from `[(date, [(speaker, text), ...]), ...]`; speakers in first-seen order."""
    built, speakers = [], []
    for n, (date, turns) in enumerate(sessions, start=1):
        made = tuple(Turn(s, t, f"D{n}:{i + 1}", n) for i, (s, t) in enumerate(turns))
        speakers += [s for s, _ in turns if s not in speakers]
        built.append(Session(n, date, made))
    return Conversation(cid, tuple(speakers), tuple(built))


def tool_result(arguments: Any, text: str = "") -> ChatResult:
    """A ChatResult with one update_memory call (arguments dumped unless already text)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"name": "update_memory", "arguments": args}
    return ChatResult(text=text, model="fake-llm", usage=Usage(100, 20), tool_calls=(call,))


def test_hash_embedder_is_unit_length_and_word_based() -> None:
    vecs = HashEmbedder().embed(["Alice lives in Berlin", "Berlin Alice", "pottery class"])
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-6)
    assert vecs[0] @ vecs[1] > 0.5 > abs(float(vecs[0] @ vecs[2]))
