"""`bench.perf offline_f1`: the offline reader's F1 per arm, as the summariser computes it."""

from __future__ import annotations

from bench.perf.offline_f1 import TARGET_F1, offline_f1_figures
from bench.summarise.cli import summarise_run
from tests.e2e_support import ROOT


def test_offline_f1_figure_matches_the_summary() -> None:
    """On the smoke fixture the figure equals the committed smoke run's summary F1."""
    fig = offline_f1_figures(["dataset=smoke", "arms=[raw,rag]"])
    reference = summarise_run(ROOT / "results" / "smoke-offline-v0.2.0")
    assert fig["questions_scored"] == reference.n_questions["scored"]
    for arm in ("raw", "rag"):
        expected = reference.arms[arm].f1["scored"]
        assert expected is not None and fig["official_f1_scored"][arm] == round(expected, 4)
    below = {a for a, v in fig["official_f1_scored"].items() if v < TARGET_F1}
    assert set(fig["arms_below_target"]) == below
    # The smoke fixture is not split into dev and held-out conversations: all count as dev.
    assert fig["official_f1_scored_dev"] == fig["official_f1_scored"]
    assert fig["official_f1_scored_held_out"] == {}
