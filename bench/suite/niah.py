"""Needle-in-a-haystack suites, deterministic for a seed, written in the suite format.

The haystack is real conversation turns (LoCoMo, or the smoke fixture), repeated in
order with fresh ids (`h<n>`) until it holds `size` tokens (bench.tokens counter).
Needles are short dated facts `The <adjective> <thing> code is <code>.`; each is placed
at a chosen depth (0 = first memory, 1 = last). Per suite:

- single: one needle per depth, one query each (relevant: that needle);
- multi: one query asking for three needles at once (relevant: all three);
- distractors: for every needle a near-duplicate about another thing (same template,
  different adjective and code): it shares most words with the query but is not relevant;
- superseded: a needle whose value changes; the earlier value is placed earlier in the
  haystack and is a forbidden id of the query asking for the current value.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from bench.suite.model import Memory, Suite, SuiteQuery
from bench.tokens import TokenCounter
from bench.types import Conversation

ADJECTIVES = ("amber", "cobalt", "crimson", "golden", "ivory", "jade", "silver", "violet")
THINGS = ("locker", "gate", "vault", "bike lock", "safe", "mailbox", "garage", "shed")
DEFAULT_DEPTHS = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class NiahSpec:
    """What one NIAH suite contains."""

    size: int
    """Haystack size in tokens."""
    seed: int = 0
    """Random seed: the same size, seed and depths give the same suite."""
    depths: tuple[float, ...] = DEFAULT_DEPTHS
    """Where needles are placed: fractions of the haystack (0 = first, 1 = last)."""


def haystack(source: Sequence[Conversation], size: int, tokens: TokenCounter) -> list[Memory]:
    """Real turns in dataset order, cycled with fresh ids until `size` tokens."""
    turns = [(t, s.date_time) for c in source for s in c.sessions for t in s.turns]
    if not turns:
        raise ValueError("niah: the source has no turns")
    lengths = tokens.count_many([t.text for t, _ in turns])
    memories: list[Memory] = []
    total = 0
    while total < size:
        i = len(memories) % len(turns)
        turn, date = turns[i]
        memories.append(Memory(f"h{len(memories)}", turn.text, date, speaker=turn.speaker))
        total += max(lengths[i], 1)
    return memories


def _code(rng: random.Random) -> str:
    return f"{rng.randrange(1000, 10000)}"


def niah_suite(source: Sequence[Conversation], spec: NiahSpec, tokens: TokenCounter) -> Suite:
    """One NIAH suite: single, multi, distractor and superseded needles at `spec.depths`."""
    rng = random.Random(spec.seed)
    hay = haystack(source, spec.size, tokens)
    pairs = [(a, t) for a in ADJECTIVES for t in THINGS]
    rng.shuffle(pairs)
    inserts: list[tuple[float, Memory]] = []
    queries: list[SuiteQuery] = []
    needles: list[tuple[str, str, str]] = []  # (needle id, subject, code)
    for n, depth in enumerate(spec.depths):
        (adj, thing), (d_adj, _) = pairs[2 * n], pairs[2 * n + 1]
        subject, code = f"{adj} {thing}", _code(rng)
        nid = f"needle{n}"
        inserts.append((depth, Memory(nid, f"The {subject} code is {code}.")))
        inserts.append(
            (
                min(depth + 0.01, 1.0),
                Memory(f"distractor{n}", f"The {d_adj} {thing} code is {_code(rng)}."),
            )
        )
        needles.append((nid, subject, code))
        queries.append(
            _query(f"single{n}", f"What is the {subject} code?", code, [nid], "single-needle")
        )
    picked = needles[:3]
    queries.append(
        _query(
            "multi",
            "What are the codes of the " + ", ".join(s for _, s, _ in picked) + "?",
            ", ".join(c for _, _, c in picked),
            [i for i, _, _ in picked],
            "multi-needle",
        )
    )
    adj, thing = pairs[-1]
    old, new = _code(rng), _code(rng)
    early, late = min(spec.depths), max(spec.depths)
    inserts.append((early, Memory("stale0", f"The {adj} {thing} code is {old}.")))
    inserts.append(
        (late, Memory("update0", f"The {adj} {thing} code changed from {old} to {new}."))
    )
    queries.append(
        _query(
            "superseded",
            f"What is the {adj} {thing} code now?",
            new,
            ["update0"],
            "supersession",
            forbidden=["stale0"],
        )
    )
    memories = _place(hay, inserts)
    name = f"niah-{spec.size}-s{spec.seed}"
    return Suite(name, "long-context", 1, tuple(memories), tuple(queries))


def _query(
    qid: str, text: str, answer: str, relevant: list[str], qtype: str, forbidden: Sequence[str] = ()
) -> SuiteQuery:
    return SuiteQuery(qid, text, {r: 1 for r in relevant}, tuple(forbidden), answer, qtype)


def _place(hay: list[Memory], inserts: list[tuple[float, Memory]]) -> list[Memory]:
    """Insert each needle before the haystack memory at round(depth * len).

    Needles at one position keep their order; each is dated like its neighbour so
    date-aware arms see a plausible timeline.
    """
    at: dict[int, list[Memory]] = {}
    for depth, memory in inserts:
        at.setdefault(round(depth * len(hay)), []).append(memory)
    out: list[Memory] = []
    for i in range(len(hay) + 1):
        date = hay[min(i, len(hay) - 1)].date
        out.extend(Memory(m.id, m.text, date, speaker="Note") for m in at.get(i, []))
        if i < len(hay):
            out.append(hay[i])
    return out
