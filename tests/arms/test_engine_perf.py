"""The engine performance harness runs and reports what `bench.perf` quotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from arms.neuromorphic import perf as perf_engine
from arms.neuromorphic.config import NeuromorphicConfig


def test_engine_time_reports_per_exchange_figures(tmp_path: Path) -> None:
    got = perf_engine.engine_time(200, tmp_path)
    assert got["records_start"] == 200  # prefill kept every record (no pruning yet)
    assert got["archived"] == 200 + perf_engine.TIMED_EXCHANGES * perf_engine.FACTS_PER_EXCHANGE
    assert 0 < got["median_ms"] <= got["p90_ms"] <= got["p99_ms"] <= got["max_ms"]
    # the valid hot set is held at its size while timed (supersession replaces, not adds)
    assert abs(got["records_end"] - got["records_start"]) <= 0.15 * got["records_start"]
    assert got["exchanges_timed"] == perf_engine.TIMED_EXCHANGES
    flush_every = NeuromorphicConfig().flush_every  # the window holds whole flush intervals
    assert got["flushes_timed"] == perf_engine.TIMED_EXCHANGES // flush_every >= 2
    assert got["amortised_ms"] == pytest.approx(got["mean_ms"], abs=1e-3)
    assert got["flush_ms"] > 0  # flushing exchanges are timed (their cost is a figure, not a check)
    assert 0 < got["cpu_median_ms"] <= got["cpu_p99_ms"]
    assert got["cpu_amortised_ms"] > 0
    assert got["recall_median_ms"] > 0 and 0 < got["recall_share"] < 1  # the read path's part


def test_random_embedder_is_fixed_per_text() -> None:
    emb = perf_engine.RandomEmbedder()
    a, b = emb.embed(["x", "y"]), emb.embed(["x"])
    assert (a[0] == b[0]).all() and not (a[0] == a[1]).all()
