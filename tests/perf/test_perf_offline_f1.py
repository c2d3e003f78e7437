"""`bench.perf offline_f1`: the offline reader's F1 per arm, as the summariser computes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.perf.offline_f1 import TARGET_F1, offline_f1_figures
from bench.summarise.summary import summarise_run


@pytest.mark.slow
def test_offline_f1_figure_matches_the_summary(smoke_raw_rag_run: Path) -> None:
    """On the smoke fixture the figure equals the summary F1 of the same run made directly.

    The run is made here rather than read from the committed smoke reference, so the
    test holds whenever the reader changes (the reference is regenerated separately).
    """
    overrides = ["dataset=smoke", "arms=[raw,rag]"]
    fig = offline_f1_figures(overrides)
    reference = summarise_run(smoke_raw_rag_run)  # the same overrides (tests/conftest.py)
    assert fig["questions_scored"] == reference.n_questions["scored"]
    for arm in ("raw", "rag"):
        expected = reference.arms[arm].f1["scored"]
        assert expected is not None and fig["official_f1_scored"][arm] == round(expected, 4)
    below = {a for a, v in fig["official_f1_scored"].items() if v < TARGET_F1}
    assert set(fig["arms_below_target"]) == below
    # The smoke fixture is not split into dev and held-out conversations: all count as dev.
    assert fig["official_f1_scored_dev"] == fig["official_f1_scored"]
    assert fig["official_f1_scored_held_out"] == {}
