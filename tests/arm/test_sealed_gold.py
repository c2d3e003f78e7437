"""Sealed gold: an arm is handed the conversation and the question, never the answer key.

Issue 40 ("Sealed gold"): a plug-in arm that searches everything it is handed (the
conversation at ingest, the question at retrieve, its name and options) for the gold
answers, the adversarial answers and any answer-key field (gold, evidence, category,
...) finds nothing. The dataset is the smoke fixture with every gold and adversarial
answer replaced by a marker that appears nowhere else, so any leak is found.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bench.arm.sealed import SealedArm
from bench.paths import PROJECT_ROOT
from bench.types import Question
from tests.arm.test_arm_plugins import ARM, write_plugin
from tests.support.e2e_support import ROOT, load_records, run_cli

LEAKS = '''

import dataclasses

KEY_FIELDS = {"gold", "evidence", "category", "adversarial_answer", "answer", "questions",
              "question_type", "is_abstention", "rubric", "correction", "stale_answer",
              "difficulty"}
MARKERS = ("GOLD-SEALED", "TRAP-SEALED")


def leaks(value: Any, path: str) -> list[str]:
    """Every place under `value` holding a marker or a non-empty answer-key field."""
    if isinstance(value, str):
        return [path] if any(m in value for m in MARKERS) else []
    found: list[str] = []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if f.name in KEY_FIELDS and item not in (None, (), [], {}, False):
                found.append(f"{path}.{f.name}")
            found += leaks(item, f"{path}.{f.name}")
    elif isinstance(value, dict):
        for k, v in value.items():
            found += leaks(k, path) + leaks(v, f"{path}[{k!r}]")
    elif isinstance(value, (list, tuple, set, frozenset)):
        for n, v in enumerate(value):
            found += leaks(v, f"{path}[{n}]")
    elif hasattr(value, "__dict__") and not callable(value):  # any other object
        for k, v in vars(value).items():
            found += [f"{path}.{k}"] if k in KEY_FIELDS else []
            found += leaks(v, f"{path}.{k}")
    return found
'''
PEEK = (
    ARM.replace(
        "        self.name, self.config, self.turns = name, config, []\n",
        "        self.name, self.config, self.turns = name, config, []\n"
        '        self.found = leaks(name, "name") + leaks(config, "config")\n',
    )
    .replace(
        "        self.turns = conversation.turns()\n",
        '        self.found += leaks(conversation, "conversation")\n'
        "        self.turns = conversation.turns()\n",
    )
    .replace(
        "    def retrieve(self, question: Question) -> Context:\n",
        "    def retrieve(self, question: Question) -> Context:\n"
        '        if found := self.found + leaks(question, "question"):\n'
        '            raise RuntimeError(f"answer key handed to the arm: {found[:3]}")\n',
    )
    + LEAKS
)
"""The echo plug-in, searching everything it is handed; a call that finds any key fails."""


def _marked_dataset(where: Path) -> Path:
    """The smoke fixture with every gold and adversarial answer a unique marker."""
    data = json.loads((PROJECT_ROOT / "datasets/fixtures/smoke_locomo.json").read_text())
    n = 0
    for conversation in data:
        for qa in conversation["qa"]:
            n += 1
            if qa.get("answer") is not None:
                qa["answer"] = f"GOLD-SEALED-{n}"
            if qa.get("adversarial_answer") is not None:
                qa["adversarial_answer"] = f"TRAP-SEALED-{n}"
    path = where / "marked_locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_peek_finds_the_key_in_a_full_question_but_not_in_a_sealed_one(
    tmp_path: Path,
) -> None:
    site = write_plugin(tmp_path, source=PEEK)
    sys.path.insert(0, str(site))
    try:
        from armbench_echo import leaks  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("armbench_echo", None)
    full = Question("c:1", "c", "Where?", 4, "GOLD-SEALED-1", ("D1:1",), "TRAP-SEALED-1")
    assert leaks(full, "q") == [
        "q.category",
        "q.gold",
        "q.gold",
        "q.evidence",
        "q.adversarial_answer",
        "q.adversarial_answer",
    ]
    assert leaks(full.sealed(), "q") == []


@pytest.mark.slow
def test_no_arm_is_handed_the_answer_key(tmp_path: Path) -> None:
    site = write_plugin(tmp_path, source=PEEK)
    out = tmp_path / "run"
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    done = run_cli(
        "dataset=smoke",
        f"dataset.path={_marked_dataset(tmp_path)}",
        "arms=[echo,raw]",
        "progress=false",
        f"out={out}",
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    records = load_records(out)
    assert len(records) == 16
    for record in records.values():
        assert record["arms"]["echo"]["status"] == "ok", record["arms"]["echo"].get("error")
        assert record["gold"] is None or "GOLD-SEALED" in str(record["gold"])  # the key is there


def test_every_arm_the_harness_opens_is_sealed(tmp_path: Path) -> None:
    from bench.arm.guard import open_arm
    from bench.config import PluginConfig

    arm = open_arm("raw", "arm_options.raw.kind", PluginConfig(), *_raw_args(tmp_path))
    assert isinstance(arm, SealedArm)


def _raw_args(tmp_path: Path) -> tuple[object, ...]:
    from arms.raw import RawConfig
    from bench.arm import ArmServices
    from bench.providers.offline_embed import WordLlamaEmbedder
    from bench.tokens import TokenCounter

    services = ArmServices(
        embedder=WordLlamaEmbedder(),
        tokens=TokenCounter(),
        store_dir=tmp_path / "s",
        run_dir=tmp_path,
    )
    return ("raw", RawConfig(), services)
