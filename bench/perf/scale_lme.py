"""LongMemEval-M-shaped haystacks for `bench.perf scale`: one question, many sessions.

LongMemEval-M gives each question ~500 sessions; only LongMemEval-S files (~50 sessions
a question) are on these machines. A point of `scale.lme_sessions=<n>` is built from a
LongMemEval-S-shaped file (`scale.lme`, default `$BENCH_DATA_DIR/longmemeval-s-subset16.json`,
else the smoke fixture): the first question with evidence keeps its own haystack, last
and in its order (so its dates and evidence are untouched), and is preceded by the other
questions' sessions not already in it, in file order, cycled with fresh ids
(`c<k>-<id>`, session `c<k>-<session>`) until the haystack holds `n` sessions. The one
query is that question, its relevant ids its evidence turns. Synthetic in the same way
as the synthetic BEAM tier: a size study, not a LongMemEval-M result.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from bench.errors import ConfigError
from bench.paths import PROJECT_ROOT
from bench.suite.model import Memory, Suite, SuiteQuery

LME_FIXTURE = PROJECT_ROOT / "datasets" / "fixtures" / "smoke_longmemeval.json"


def lme_file(given: str | None) -> Path:
    """The LongMemEval-S-shaped file: the setting, the shared subset, else the fixture."""
    if given:
        path = Path(given)
        if not path.is_file():
            raise ConfigError(f"scale.lme={given}: no such file")
        return path
    data = os.environ.get("BENCH_DATA_DIR")
    shared = Path(data) / "longmemeval-s-subset16.json" if data else None
    return shared if shared and shared.is_file() else LME_FIXTURE


def _session_of(memory: Memory) -> str:
    return memory.session or memory.id.rsplit(":", 1)[0]


def _by_session(memories: tuple[Memory, ...]) -> dict[str, list[Memory]]:
    out: dict[str, list[Memory]] = {}
    for memory in memories:
        out.setdefault(_session_of(memory), []).append(memory)
    return out


def lme_suites(path: Path, sizes: tuple[int, ...]) -> list[Suite]:
    """One suite per size in `sizes` (sessions), smallest first."""
    from bench.suite.adapters.longmemeval import load

    suites = load(path, "")
    first = next((s for s in suites if any(q.relevance for q in s.queries)), None)
    if first is None:
        raise ConfigError(f"scale.lme={path}: no question with evidence turns")
    own = _by_session(first.memories)
    pool: dict[str, list[Memory]] = {}
    for suite in suites:
        for key, memories in _by_session(suite.memories).items():
            if key not in own:
                pool.setdefault(key, memories)
    query = next(q for q in first.queries if q.relevance)
    return [_haystack(first, own, list(pool.values()), n, query) for n in sorted(set(sizes))]


def _haystack(
    first: Suite, own: dict[str, list[Memory]], pool: list[list[Memory]], n: int, query: SuiteQuery
) -> Suite:
    """`n` sessions: distractor sessions (cycled, fresh ids), then the question's own."""
    wanted = max(n - len(own), 0)
    if wanted and not pool:
        raise ConfigError("scale.lme: the file has no sessions besides the question's own")
    memories: list[Memory] = []
    for i in range(wanted):
        cycle, session = divmod(i, len(pool))
        for m in pool[session]:
            fresh = f"c{cycle}-{m.id}"
            memories.append(replace(m, id=fresh, session=f"c{cycle}-{_session_of(m)}"))
    memories.extend(m for turns in own.values() for m in turns)
    name = f"lme-m-{n}"
    return Suite(name, first.kind, first.version, tuple(memories), (query,))
