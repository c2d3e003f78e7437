"""The `-X importtime` parser of `bench.perf startup` sums top-level imports only."""

from __future__ import annotations

from bench.perf.startup import importtime_total_us

SAMPLE = """import time: self [us] | cumulative | imported package
import time:       100 |        100 |   _io
import time:        50 |        150 | encodings
import time:        20 |         20 |     json.decoder
import time:        30 |         50 |   json.scanner
import time:        40 |        300 | json
"""


def test_importtime_total_sums_top_level_cumulative() -> None:
    assert importtime_total_us(SAMPLE) == (150 + 300, 5)
    assert importtime_total_us("") == (0, 0)
