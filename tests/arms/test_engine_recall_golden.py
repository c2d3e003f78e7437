"""Engine changes must not change retrieval: LoCoMo conversation 1 recalls equal the golden dump.

The golden file was written by `tests/support/engine_recall_dump.py` with the engine as it was
before the performance work; regenerate it only for an intended behaviour change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.engine_recall_dump import dump

GOLDEN = Path(__file__).parents[1] / "golden" / "engine" / "locomo_conv1_recall.json"


def _locomo() -> Path | None:
    for d in (os.environ.get("BENCH_DATA_DIR"),):
        if d and (Path(d) / "locomo10.json").is_file():
            return Path(d) / "locomo10.json"
    return None


@pytest.mark.skipif(_locomo() is None, reason="locomo10.json not found (set BENCH_DATA_DIR)")
def test_recall_on_locomo_conversation_1_matches_golden() -> None:
    """Every question's recalled ids, scores, weights and lists, stats and hot-set hash."""
    path = _locomo()
    assert path is not None
    fresh = json.loads(json.dumps(dump(path), sort_keys=True))
    golden = json.loads(GOLDEN.read_text())
    for arm in ("neuromorphic", "tuned"):
        assert fresh[arm]["stats"] == golden[arm]["stats"], arm
        assert fresh[arm]["hot_sha256"] == golden[arm]["hot_sha256"], arm
        assert len(fresh[arm]["recalls"]) == len(golden[arm]["recalls"]) == 199
        pairs = zip(fresh[arm]["recalls"], golden[arm]["recalls"], strict=True)
        for i, (got, want) in enumerate(pairs):
            assert got == want, f"{arm} question {i}"
