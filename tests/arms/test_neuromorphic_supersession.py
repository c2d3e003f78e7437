"""Supersession fixtures with the real offline stack (WordLlama + rule extractor).

For every question whose fact changed during the conversation, the neuromorphic arm's
context must hold the current value and never the superseded one (`stale_answer`).
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from arms.neuromorphic.arm import NeuromorphicArm
from arms.neuromorphic.config import NeuromorphicConfig
from bench.arm import ArmServices
from bench.loaders.locomo import load_locomo
from bench.tokens import TokenCounter
from bench.types import Dataset, Question

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "datasets" / "fixtures" / "supersession" / "locomo_supersession.json"


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return load_locomo(FIXTURE)


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArmServices]:
    from bench.providers.offline_embed import WordLlamaEmbedder

    stores = tmp_path_factory.mktemp("stores")
    yield ArmServices(WordLlamaEmbedder(), TokenCounter(), stores, stores)


def _contexts(
    dataset: Dataset, services: ArmServices, name: str, config: NeuromorphicConfig
) -> dict[str, tuple[Question, str]]:
    store = ArmServices(
        services.embedder, services.tokens, services.store_dir / name, services.run_dir
    )
    arm = NeuromorphicArm(name, config, store)
    out = {}
    for conv in dataset.conversations:
        arm.ingest(conv)
        out.update({q.question_id: (q, arm.retrieve(q).text) for q in conv.questions})
    arm.close()
    return out


@pytest.mark.parametrize("lambda_active", [0.05, 0.005])
def test_superseded_values_never_reach_the_context(
    dataset: Dataset, services: ArmServices, lambda_active: float
) -> None:
    config = NeuromorphicConfig(lambda_active=lambda_active)
    contexts = _contexts(dataset, services, f"arm-{lambda_active}", config)
    stale = [(q, text) for q, text in contexts.values() if q.stale_answer]
    assert len(stale) == 6
    for question, text in stale:
        assert question.stale_answer and question.gold
        assert question.stale_answer.lower() not in text.lower(), question.question
        current = question.gold.split()[-1].lower()  # "a blue Tesla" → "tesla"
        assert current in text.lower(), question.question


def test_without_override_the_stale_values_come_back(
    dataset: Dataset, services: ArmServices
) -> None:
    contexts = _contexts(dataset, services, "no-override", NeuromorphicConfig(override=False))
    leaked = [q for q, text in contexts.values() if q.stale_answer and q.stale_answer in text]
    assert len(leaked) >= 3  # the guard above is the override mechanism, not luck


def test_readme_example_prints_what_docs_engine_md_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", doc, re.S)
    shown = re.search(r"prints.*?```\n(.*?)```", doc, re.S)
    assert code and shown
    monkeypatch.chdir(tmp_path)
    source = code.group(1).replace('"datasets/', f'"{ROOT}/datasets/')
    assert len(code.group(1).strip().splitlines()) <= 10
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(source, "docs/engine.md", "exec"), {})
    assert buffer.getvalue() == shown.group(1)
