"""Dump what the engine recalls on LoCoMo conversation 1 (the before/after equivalence check).

    python -m tests.support.engine_recall_dump <locomo10.json> <out.json>

Ingests conversation 1 with the offline set-up (WordLlama, rule extractor) under the
`neuromorphic` and `tuned` configs, then recalls every question of that conversation and
records, per question, the recalled fact ids, scores, weights and the lists that found
them, plus the final counters and a hash of the hot set. `test_engine_recall_golden.py`
compares a fresh dump with the committed one, so an engine change that alters any
retrieval result fails.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any


def dump(path: Path) -> dict[str, Any]:
    """Recall results for every question of conversation 1, for both engine configs."""
    from arms.neuromorphic.config import NeuromorphicConfig
    from arms.neuromorphic.engine import MemoryEngine
    from bench.loaders.locomo import load_locomo
    from bench.providers.offline_embed import WordLlamaEmbedder

    dataset = load_locomo(path)
    conv = dataset.conversations[0]
    questions = conv.questions
    embedder = WordLlamaEmbedder()
    configs = {
        "neuromorphic": NeuromorphicConfig(),
        "tuned": replace(NeuromorphicConfig(), lambda_active=0.005),
    }
    out: dict[str, Any] = {"conversation": conv.conversation_id}
    with tempfile.TemporaryDirectory() as tmp:
        for name, config in configs.items():
            with MemoryEngine(
                Path(tmp) / name, embedder, config, conversation_id=conv.conversation_id
            ) as engine:
                stats = engine.ingest(conv)
                snap = json.dumps(engine.state.ws.snapshot(), sort_keys=True)
                recalls = []
                for q in questions:
                    found = engine.recall(q.question)
                    recalls.append(
                        [
                            [
                                r.fact.id,
                                round(r.score, 9),
                                round(r.fact.weight, 9),
                                list(r.found_by),
                            ]
                            for r in found
                        ]
                    )
            out[name] = {
                "stats": stats,
                "hot_sha256": hashlib.sha256(snap.encode()).hexdigest(),
                "recalls": recalls,
            }
    return out


if __name__ == "__main__":
    result = dump(Path(sys.argv[1]))
    Path(sys.argv[2]).write_text(json.dumps(result, indent=0, sort_keys=True) + "\n")
