"""LongMemEval-M-shaped haystacks for `bench.perf scale` (bench/perf/scale_lme.py).

- a point holds the asked number of sessions, the question's own haystack last and
  unchanged, distractor sessions cycled under fresh unique ids;
- the one query is the question's, its relevant ids all inside the haystack;
- `scale.lme_sessions` parses, and a missing `scale.lme` file is one ConfigError.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.errors import ConfigError
from bench.perf.scale import parse_settings
from bench.perf.scale_lme import LME_FIXTURE, lme_file, lme_suites


def _sessions(suite: object) -> list[str]:
    keys = [m.session or m.id.rsplit(":", 1)[0] for m in suite.memories]  # type: ignore[attr-defined]
    return list(dict.fromkeys(keys))


def test_haystacks_hold_the_asked_sessions_with_the_question_last() -> None:
    small, large = lme_suites(LME_FIXTURE, (12, 3))  # built smallest first
    assert len(_sessions(large)) == 12
    ids = [m.id for m in large.memories]
    assert len(ids) == len(set(ids))
    assert len(large.queries) == 1 and set(large.queries[0].relevance) <= set(ids)
    own = [m for m in large.memories if not re.match(r"c\d+-", m.id)]
    assert large.memories[-len(own) :] == tuple(own)  # the question's haystack, last, as it was
    assert len(_sessions(small)) >= 3 and small.queries == large.queries


def test_settings_and_a_missing_file(tmp_path: Path) -> None:
    settings = parse_settings(["scale.lme_sessions=50,500", f"scale.lme={LME_FIXTURE}"])
    assert settings.lme_sessions == (50, 500)
    assert lme_file(settings.lme) == LME_FIXTURE
    with pytest.raises(ConfigError, match="scale.lme="):
        lme_file(str(tmp_path / "none.json"))
