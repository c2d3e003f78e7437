"""The caution an offline summary carries, chosen by the dataset's loader.

Standard library only. The offline reader's numbers are a pipeline check and a
reachability measure on every dataset, but what they may be mistaken for differs: on
LoCoMo a published LLM-judged ranking exists to contrast them with; LongMemEval, BEAM
and LoCoMo-Plus are each scored upstream by their own LLM judge, whose figures an
extractive reader's F1 says nothing about. Each loader gets its own sentence, so a
LongMemEval summary never cites LoCoMo's evidence.
"""

from __future__ import annotations

from bench.runmeta import RunMeta

_HEAD = "Caution: a pipeline check and a reachability measure, not a proxy for LLM accuracy"

OFFLINE_CAUTION = (
    f"{_HEAD} (published LLM-judged LoCoMo ranks raw > rag > tuned > neuromorphic; an earlier "
    "offline reader agreed with it on 33% of raw-arm questions; see README)"
)
"""The one-line caution every offline LoCoMo summary prints."""

OFFLINE_CAUTION_OTHER = (
    f"{_HEAD} (this dataset is LLM-judged upstream; the LoCoMo ranking evidence does not "
    "carry over)"
)
"""The caution of offline summaries of a dataset no loader below names."""

CAUTIONS: dict[str, str] = {
    "locomo": OFFLINE_CAUTION,
    "longmemeval": (
        f"{_HEAD} (LongMemEval is scored upstream by an LLM judge whose prompt depends on "
        "the question type, abstention questions included; an extractive reader's F1 on its "
        "long haystacks says whether the answer's words reached the context, not what a "
        "judged model would score; the LoCoMo ranking evidence does not carry over)"
    ),
    "beam": (
        f"{_HEAD} (BEAM is scored upstream by an LLM judge, rubric item by item per "
        "ability; the offline rubric reach and event-order figures say what reached the "
        "context, not the judged rubric score; the LoCoMo ranking evidence does not carry "
        "over)"
    ),
    "locomo_plus": (
        f"{_HEAD} (LoCoMo-Plus is scored upstream by an LLM judge that reads the cue "
        "dialogue beside the reply, with no reference answer; word overlap with the cue "
        "says what reached the context, not the judged label; the LoCoMo ranking evidence "
        "does not carry over)"
    ),
}
"""Dataset loader -> the caution of its offline summaries."""


def dataset_loader(meta: RunMeta | None, dataset: str) -> str:
    """The run's dataset loader (`config.dataset.loader`), else guessed from its name.

    The guess is the longest loader name the dataset's name holds (`smoke_longmemeval`
    -> `longmemeval`, `locomo_plus` before `locomo`); "" when it holds none.
    """
    loader = meta.config_value("dataset", "loader") if meta is not None else None
    if isinstance(loader, str) and loader:
        return loader
    name = dataset.lower()
    return next((k for k in sorted(CAUTIONS, key=len, reverse=True) if k in name), "")


def offline_caution(meta: RunMeta | None, dataset: str, locomo_style: bool) -> str:
    """The caution for an offline run of `dataset` (the LoCoMo one only for LoCoMo's loader)."""
    loader = dataset_loader(meta, dataset)
    if loader in CAUTIONS:
        return CAUTIONS[loader]
    return OFFLINE_CAUTION if locomo_style and not loader else OFFLINE_CAUTION_OTHER
