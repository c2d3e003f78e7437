"""`phase=predict|evaluate|all`: split a run into ingest+retrieve and answer+judge.

* `predict` ingests and retrieves with the real arms and stores, per question, every
  arm's context (rendered text, ranked items with source ids, truncation, meta) or its
  failure in `<out>/predictions/<question>.json`; no answer, no judge, no record.
* `evaluate` answers and judges from those stored retrievals only: the arms are
  replaced by `StoredArm`s that read the files, so no arm is constructed and no memory
  service or store is called. Records are what `phase=all` writes.
* `all` (default) does both in one pass.

Each phase resumes on its own (predict skips questions whose prediction holds every
arm under the same predict identity; evaluate skips finished records, as `all` does).
A prediction carries, per arm, its *predict identity* (dataset, arm options, embedder,
extractor, context budget): `evaluate` refuses, with one line, predictions made under
another one. A predict session binds the run directory only to what predict reads
(`phase_identity`), so `evaluate` may choose the answerer, the
prompt, the answer and scoring settings; the first evaluate fixes them.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.arm import Arm
from bench.arm.probe import requested_k
from bench.arm.registry import arm_kind
from bench.config import RunConfig
from bench.errors import BenchError, ConfigError, PermanentError, raise_if_permanent
from bench.files import write_json_atomic
from bench.paths import contained, safe_name
from bench.run.directory import PREDICTIONS
from bench.run.outcome import Tick, no_tick
from bench.types import AskedQuestion, Context, ContextItem, Conversation, ServiceAnswer
from bench.untrusted import expect_object, read_json, refuse

PHASES = ("all", "predict", "evaluate")
FOLDER = PREDICTIONS
PREDICTED_MS = "predicted_retrieve_ms"
"""Context meta key: the retrieval time measured in `predict` (records keep that, not the read)."""


def check_phase(cfg: RunConfig) -> str:
    """The configured phase, or a one-line error naming the choices."""
    if cfg.phase not in PHASES:
        raise ConfigError(f"phase={cfg.phase}: use one of {', '.join(PHASES)}")
    return cfg.phase


PREDICT_UNUSED = (
    "prompt_sha256",
    "answerer",
    "answer_settings",
    "outcome",
    "f1_threshold",
    "errata_sha256",
)
"""Identity keys only answering and scoring read: `phase=predict` (ingest and retrieve)
does not bind them, so `phase=evaluate` may choose them (the context budget, which the
raw arm builds its transcript to, binds each prediction instead: `phases.predict_identity`)."""


def phase_identity(ident: dict[str, Any], phase: str) -> dict[str, Any]:
    """The identity a session binds: all of it, or for `predict` what predict reads."""
    if phase != "predict":
        return ident
    return {k: v for k, v in ident.items() if k not in PREDICT_UNUSED}


def predict_identity(cfg: RunConfig, arm: str, dataset_sha256: str) -> str:
    """Hash of what changes an arm's retrieval (answer and scoring settings are not in it).

    Dataset, arm options, embedder, extractor, and, for an arm that reads it
    (`ArmKind.reads_context_budget`: raw cuts its transcript to it, rag and the memory
    arms never read it), the context budget `answer.max_context_tokens`; so
    `phase=evaluate` may change the budget for every arm but those.
    """
    p = cfg.provider
    kind = str(cfg.arm_options[arm].get("kind", arm))
    budget = arm_kind(kind, f"arm_options.{arm}.kind").reads_context_budget
    blob = json.dumps(
        {
            "dataset": dataset_sha256,
            "arm": arm,
            "options": cfg.arm_options[arm],
            "embedder": f"{p.embedder.kind}:{p.embedder.model}:{p.embedder.dim}",
            "extractor": f"{p.extractor.kind}:{p.extractor.model}",
            **({"context_budget": cfg.answer.max_context_tokens} if budget else {}),
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def prediction_path(run_dir: Path, question: AskedQuestion) -> Path:
    """Where a question's prediction lives (checked to stay inside the run directory)."""
    return contained(run_dir / FOLDER / f"{safe_name(question.question_id)}.json", run_dir)


def _load(path: Path, question_id: str | None = None) -> dict[str, Any]:
    """Per arm, the stored prediction entries of `path` ({} when there is none yet).

    Each entry must be an object; with `question_id`, the file must be that question's
    (a prediction file copied or renamed onto another question's name is refused, not
    evaluated against the wrong question).
    """
    if not path.exists() and not path.is_symlink():
        return {}
    fix = "delete it and re-run phase=predict"
    data = expect_object(read_json(path, fix=fix), str(path), fix)
    stored = data.get("question_id")
    if question_id is not None and stored != question_id:
        refuse(f"prediction for question {stored!r}, not {question_id!r}", str(path), fix)
    arms = data.get("arms", {})
    if not isinstance(arms, dict) or not all(isinstance(e, dict) for e in arms.values()):
        refuse("arms is not an object of per-arm objects", str(path), fix)
    for name, entry in arms.items():
        if not isinstance(entry.get("identity", ""), str):
            refuse(f"arms.{name}.identity is not a string", str(path), fix)
    return dict(arms)


def context_json(context: Context, retrieve_ms: float, keep_text: bool = True) -> dict[str, Any]:
    """A context as stored in a prediction (`keep_text=False`: ranked ids only, no texts)."""
    items = [asdict(i) if keep_text else {**asdict(i), "text": ""} for i in context.items]
    return {
        "text": context.text if keep_text else "",
        "items": items,
        "truncated": context.truncated,
        "meta": context.meta,
        "write_path": context.write_path,
        "unranked_source_ids": list(context.unranked_source_ids),
        "service_answer": asdict(context.service_answer) if context.service_answer else None,
        "retrieve_ms": round(retrieve_ms, 3),
    }


def context_from_json(data: dict[str, Any]) -> Context:
    """The stored context, as the arm returned it."""
    items = tuple(
        ContextItem(i["text"], float(i["score"]), tuple(i["source_ids"]), i["kind"])
        for i in data["items"]
    )
    unranked = tuple(data.get("unranked_source_ids") or ())  # absent in older predictions
    return Context(
        data["text"],
        items,
        bool(data["truncated"]),
        dict(data["meta"]),
        unranked,
        write_path=data.get("write_path"),
        service_answer=ServiceAnswer(**answer) if (answer := data.get("service_answer")) else None,
    )


def predict_conversation(
    conversation: Conversation,
    arms: dict[str, Arm],
    cfg: RunConfig,
    run_dir: Path,
    identities: dict[str, str],
    ingest: Callable[[dict[str, Arm], Conversation], dict[str, str]],
    keep_text: bool = True,
    tick: Tick = no_tick,
) -> int:
    """Ingest and retrieve for every question lacking a current prediction; how many written.

    `keep_text=False` stores the ranking without the rendered texts (a suite scored
    without an answerer needs only the ranked source ids). `tick` counts the questions
    found predicted at once, then each prediction written with its arms in error.
    """
    todo = []
    for question in conversation.questions:
        stored = _load(prediction_path(run_dir, question), question.question_id)
        missing = [
            n
            for n in arms
            if stored.get(n, {}).get("identity") != identities[n] or "error" in stored.get(n, {})
        ]
        if missing:
            todo.append((question, stored, missing))
    tick(0, 0, len(conversation.questions) - len(todo))
    needed = {n for _, _, missing in todo for n in missing}
    failed = ingest({n: a for n, a in arms.items() if n in needed}, conversation) if todo else {}
    for question, stored, missing in todo:
        for name in missing:
            entry: dict[str, Any] = {"identity": identities[name]}
            if name in failed:
                entry["error"] = failed[name]
            else:
                started = time.perf_counter()
                try:
                    context = arms[name].retrieve(question)
                    ms = (time.perf_counter() - started) * 1000
                    entry["context"] = context_json(context, ms, keep_text)
                    if (k := requested_k(arms[name])) is not None:
                        entry["requested_k"] = k  # replayed by StoredArm for the record
                except Exception as exc:  # stored; predict retries it on resume
                    raise_if_permanent(exc)
                    entry["error"] = f"retrieve failed: {type(exc).__name__}: {exc}"
            stored[name] = entry
        path = prediction_path(run_dir, question)
        write_json_atomic(path, {"question_id": question.question_id, "arms": stored})
        tick(1, sum("error" in stored[name] for name in missing), 0)
    return len(todo)


class StoredArm:
    """An arm stand-in for `evaluate`: returns the predicted context, calls nothing."""

    def __init__(self, name: str, run_dir: Path, identity: str) -> None:
        self.name = name
        self.run_dir = run_dir
        self.identity = identity
        self.requested_k: int | None = None
        """The k the predicting arm asked for, read with each stored context."""
        folder = run_dir / FOLDER
        found = sorted(folder.glob("*.json")) if folder.exists() else []
        if not found:
            raise PermanentError(
                f"{folder}: no predictions to evaluate: run phase=predict with out={run_dir} "
                "first (or phase=all)"
            )
        for path in found:
            entry = _load(path).get(name)
            got = None if entry is None else entry.get("identity")
            if entry is not None and got != identity:  # no identity at all: foreign too
                raise ConfigError(
                    f"{path}: arm {name} was predicted under another predict identity "
                    f"({got} != {identity}: dataset, arm options, embedder, extractor or "
                    "answer.max_context_tokens, which this arm reads, changed); re-run "
                    "phase=predict, or evaluate "
                    "with the same settings"
                )

    def fingerprint(self) -> dict[str, Any]:
        """The predict identity the stored retrievals were made under."""
        return {"predict_identity": self.identity}

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """Nothing to build: retrieval was done in `phase=predict`."""
        return {"stored": True}

    def retrieve(self, question: AskedQuestion) -> Context:
        """The stored context, or the stored failure raised again."""
        path = prediction_path(self.run_dir, question)
        entry = _load(path, question.question_id).get(self.name)
        if entry is None:
            raise PermanentError(
                f"{path}: no prediction for {question.question_id} arm "
                f"{self.name}: run phase=predict first"
            )
        if entry.get("identity") != self.identity:  # the file changed since __init__
            refuse(
                f"arms.{self.name} was predicted under another predict identity",
                str(path),
                "re-run phase=predict",
            )
        if "error" in entry:
            raise BenchError(str(entry["error"]))
        try:
            context = context_from_json(entry["context"])
            context.meta[PREDICTED_MS] = float(entry["context"]["retrieve_ms"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            refuse(
                f"arms.{self.name}.context is malformed ({type(exc).__name__}: {exc})",
                str(path),
                "delete it and re-run phase=predict",
            )
        k = entry.get("requested_k")  # the predicting arm's (retrieval health)
        self.requested_k = k if isinstance(k, int) and not isinstance(k, bool) else None
        return context

    def close(self) -> None:
        """Nothing is open."""
