"""`phase=predict|evaluate` for suites, on the machinery of `bench.run.phases`.

* `predict` ingests every suite with the real arms and stores, per query and arm, the
  context the arm returned (ranked items with their source ids, write path, retrieval
  time, and with `suite.answer` the rendered texts) with `bench.run.phases.predict_conversation`, in
  `<out>/suites/<suite>/predictions/<query>.json`, plus the ingestion seconds per arm
  in `<out>/suites/<suite>/ingest.json`. Nothing is scored; no report is written.
* `evaluate` reads those back through `bench.run.phases.StoredArm` (no arm is built, no
  store or memory service is called) and the runner scores and answers them exactly as
  `phase=all` does, with the retrieval time measured in `predict`.

A suite has its own folder (its own question namespace: two suites may share query
ids) and its own predict identity: the suite's content hash with the arm's options,
embedder and extractor (`bench.run.phases.predict_identity`). `evaluate` refuses, with
one line, predictions made under another identity.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.arm import Arm
from bench.config import RunConfig
from bench.errors import BenchError
from bench.files import write_json_atomic
from bench.hashing import text_sha256
from bench.paths import contained, safe_name
from bench.run import phases
from bench.suite.model import Suite, suite_to_json
from bench.types import Conversation
from bench.untrusted import read_json, read_json_object

log = logging.getLogger("bench.suite")

FOLDER = "suites"
INGEST_FILE = "ingest.json"


def suite_dir(out: Path, conversation: Conversation) -> Path:
    """`<out>/suites/<suite>`: one suite's predictions (checked to stay inside `out`)."""
    return contained(out / FOLDER / safe_name(conversation.conversation_id), out)


def identities(run_cfg: RunConfig, suite: Suite) -> dict[str, str]:
    """Per arm, the predict identity of `suite` (its content hash, the arm's settings)."""
    digest = text_sha256(json.dumps(suite_to_json(suite), sort_keys=True, ensure_ascii=False))
    return {name: phases.predict_identity(run_cfg, name, digest) for name in run_cfg.arms}


def predict_suite(
    arms: dict[str, Arm],
    run_cfg: RunConfig,
    out: Path,
    suite: Suite,
    conversation: Conversation,
    ingest_one: Callable[[Arm, Conversation], float],
    keep_text: bool,
) -> int:
    """Ingest and retrieve every query lacking a current prediction; how many written.

    `keep_text` (with `suite.answer`) also stores the rendered contexts; without it only
    the ranking is kept (a raw arm's context alone can be 120k tokens per query).

    Raises BenchError naming the first stored failure, after everything is stored (a
    re-run of `phase=predict` retries only the failed entries).
    """
    folder = suite_dir(out, conversation)
    seconds: dict[str, float] = {}

    def ingest(todo: dict[str, Arm], conv: Conversation) -> dict[str, str]:
        for name, arm in todo.items():
            seconds[name] = ingest_one(arm, conv)
        return {}

    ids = identities(run_cfg, suite)
    written = phases.predict_conversation(
        conversation, arms, run_cfg, folder, ids, ingest, keep_text=keep_text
    )
    if seconds:
        merged = {**_ingest_seconds(folder), **seconds}
        write_json_atomic(contained(folder / INGEST_FILE, folder), merged)
    for question in conversation.questions:
        path = phases.prediction_path(folder, question)
        stored = read_json_object(path, fix="delete it and re-run phase=predict")
        for name, entry in stored["arms"].items():
            if name in arms and "error" in entry:
                raise BenchError(
                    f"suite {suite.name} query {question.question_id} arm {name}: "
                    f"{entry['error']}; fix it and re-run phase=predict (it retries failures)"
                )
    return written


def stored_arms(
    run_cfg: RunConfig, out: Path, suite: Suite, conversation: Conversation
) -> dict[str, Arm]:
    """One `StoredArm` per configured arm over this suite's predictions (refuses foreign ones)."""
    folder = suite_dir(out, conversation)
    if not (folder / phases.FOLDER).is_dir():
        raise BenchError(
            f"{folder}: no predictions for suite {suite.name}; run phase=predict first"
        )
    ids = identities(run_cfg, suite)
    return {name: phases.StoredArm(name, folder, ids[name]) for name in run_cfg.arms}


def stored_ingest_s(out: Path, conversation: Conversation, arm: str) -> float:
    """The ingestion seconds `predict` measured for `arm` (0.0 when it ingested nothing)."""
    return float(_ingest_seconds(suite_dir(out, conversation)).get(arm, 0.0))


def _ingest_seconds(folder: Path) -> dict[str, Any]:
    path = folder / INGEST_FILE
    if not path.exists():
        return {}
    try:
        data = read_json(path)
        return {k: float(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (ValueError, TypeError) as exc:  # UntrustedJSONError is a ValueError
        log.warning("%s unreadable (%s): ingestion time reported as 0", path, exc)
        return {}
