"""LoCoMo-Plus (`locomo_plus.json`) as suites: one per cue/trigger item, stitched seeded.

The haystacks are exactly `dataset=locomo_plus`'s (bench/loaders/locomo_plus.py): each
item's cue session is inserted into a LoCoMo conversation drawn with `suite.seed`, so a
seed gives the same suites on every machine and the seed is part of the report. Every
turn is a memory (LoCoMo turns keep `D<s>:<t>`, cue turns are `CUE:<k>`), the trigger is
the one query, dated a week after the last session; its relevant ids are the cue turns
(what upstream's judge checks the reply uses), its expected answer the cue dialogue and
its type the relation type. LoCoMo itself comes from the same places as for
`dataset=locomo` (`$BENCH_DATA_DIR/locomo10.json`, the cache, the pinned download).
"""

from __future__ import annotations

from pathlib import Path

from bench.errors import ConfigError
from bench.suite.adapters.dialogue import conversation_suite
from bench.suite.model import Suite
from bench.types import Conversation, Dataset, Question


def load(path: Path, split: str, seed: int | None = None) -> list[Suite]:
    """Stitch the items at `path` with `seed` and return one suite per item."""
    import yaml

    from bench.config import DatasetConfig
    from bench.loaders.locomo_plus import load_locomo_plus_config
    from bench.paths import CONF_DIR

    if seed is None:
        raise ConfigError(
            "suite.seed=null: LoCoMo-Plus stitching needs a seed; pass suite.seed=<int>"
        )
    conf = CONF_DIR / "dataset" / "locomo_plus.yaml"
    cfg = DatasetConfig(**yaml.safe_load(conf.read_text(encoding="utf-8")))
    cfg.path, cfg.seed = str(path), seed
    return dataset_suites(load_locomo_plus_config(cfg))


def dataset_suites(dataset: Dataset) -> list[Suite]:
    """A stitched LoCoMo-Plus dataset's haystacks as suites (cue turns relevant)."""
    return [
        conversation_suite(c, "locomo_plus", _evidence, lambda q: q.question_type or "unknown")
        for c in dataset.conversations
    ]


def _evidence(question: Question, conversation: Conversation) -> tuple[str, ...]:
    return question.evidence
