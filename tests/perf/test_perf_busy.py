"""`bench.perf server`: the slot stub's bounds and the busy-fraction arithmetic."""

from __future__ import annotations

import json
import re
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.perf.busy import busy_fraction, phase_figures, stretches
from bench.perf.slot_stub import request_kind, serve


def test_busy_fraction_integrates_in_flight_requests_capped_at_the_slots() -> None:
    rows = [["answer", 0.0, 0.0, 1.0], ["answer", 0.0, 0.0, 1.0], ["judge", 0.5, 0.5, 2.0]]
    # 0-0.5: 2 of 2 slots; 0.5-1: 3 in flight, capped at 2; 1-2: 1 of 2
    assert busy_fraction(rows, 2, 0.0, 2.0) == pytest.approx((2 * 1.0 + 1 * 1.0) / 4)
    assert busy_fraction(rows, 4, 0.0, 2.0) == pytest.approx((2 * 0.5 + 3 * 0.5 + 1) / 8)
    assert busy_fraction(rows, 2, 1.0, 2.0) == pytest.approx(0.5)  # clipped to the window
    assert busy_fraction([], 2, 0.0, 1.0) == 0.0
    assert busy_fraction(rows, 2, 1.0, 1.0) == 0.0


def test_phases_are_the_stretches_of_extraction_and_of_answering() -> None:
    rows = [
        ["extract", 0.0, 0.0, 1.0],
        ["extract", 1.0, 1.0, 2.0],
        ["answer", 2.0, 2.0, 3.0],
        ["judge", 3.0, 3.0, 4.0],
        ["extract", 4.0, 4.0, 5.0],
        ["answer", 5.0, 5.0, 6.0],
        ["judge", 5.0, 5.0, 6.0],
    ]
    assert [p for p, _ in stretches(rows)] == ["ingest", "answer+judge", "ingest", "answer+judge"]
    stats = {"requests": rows, "slots": 2, "latency_s": 1.0, "distinct": {"extract": 3}}
    got = phase_figures(stats)
    assert got["ingest"] == {
        "requests": 3,
        "window_s": 3.0,
        "ideal_s": 1.5,
        "busy": 0.5,
        "distinct": 3,
    }
    assert got["answer+judge"]["window_s"] == 3.0  # 2-4 and 5-6
    assert got["answer+judge"]["busy"] == pytest.approx(round(4 / 6, 3))
    assert got["overall"]["busy"] == pytest.approx(round(7 / 12, 3))


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


def test_the_stub_serves_at_most_its_slots_at_once_and_logs_them() -> None:
    httpd = serve(0.1, 2)
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        bodies = [{"messages": [{"role": "user", "content": f"q{i % 3}"}]} for i in range(6)]
        with ThreadPoolExecutor(6) as pool:
            replies = list(pool.map(lambda b: _post(f"{url}/v1/chat/completions", b), bodies))
        with urllib.request.urlopen(f"{url}/stats", timeout=10) as reply:
            stats = json.loads(reply.read())
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert all(r["choices"][0]["message"]["content"] for r in replies)
    rows = stats["requests"]
    assert len(rows) == 6 and stats["distinct"] == {"answer": 3}
    edges = sorted([(r[2], 1) for r in rows] + [(r[3], -1) for r in rows])
    level = peak = 0
    for _, step in edges:
        level += step
        peak = max(peak, level)
    assert peak == 2  # 6 requests, 2 slots
    assert max(r[3] for r in rows) - min(r[1] for r in rows) >= 0.3  # three waves of 0.1 s


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ({"tools": [{"function": {"name": "update_memory"}}]}, "extract"),
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}}, "extract"),
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "verdict"}}}, "judge"),
        ({"messages": [{"role": "user", "content": "Gold answer: a"}]}, "judge"),
        ({"messages": [{"role": "user", "content": "When?"}]}, "answer"),
    ],
)
def test_requests_are_classified_by_their_shape(body: dict, kind: str) -> None:
    assert request_kind(body) == kind


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("stub.latency=abc", "stub.latency=abc: expected seconds, >= 0"),
        ("stub.slots=0", "stub.slots=0: expected a whole number, >= 1"),
        ("stub.baseline=/nonexistent", "stub.baseline=/nonexistent: not an armbench checkout"),
    ],
)
def test_bad_settings_are_refused_before_anything_runs(override: str, message: str) -> None:
    from bench.errors import ConfigError
    from bench.perf.busy import figures

    with pytest.raises(ConfigError, match=re.escape(message)):
        figures([override])
