"""A synthetic long BEAM tier built from the 128K tier: seeded, documented, never "BEAM 10M".

`python -m bench.loaders.beam_synthetic OUT [--tokens 10000000] [--conversations 1]
[--seed 0] [--source <128K tier folder>]` writes a tier folder in BEAM's own layout
(`<n>/chat.json`, `<n>/probing_questions.json`, the 10M tier's plan-wrapped shape), so
`dataset=beam dataset.tier=10m dataset.path=OUT` runs it, and `SYNTHETIC.json` beside
them, which makes the loader name the dataset `beam-synthetic` (run.json, the summary)
and its conversations `beam-synthetic-<tier>-<n>`. The recipe, per synthetic conversation n:

1. the source conversations (the numbered folders of `--source`) are shuffled with
   `random.Random(f"{seed}:{n}:{cycle}")`, cycle 0, 1, …, and taken in that order, each as
   one plan `{"copy-<k>-of-<source>": [batches]}`, until the messages hold `--tokens`
   tokens (the run's token counter); the last copy is cut after the batch that reaches it;
2. batches are renumbered 1.. and message ids offset so that they stay unique (a copy's
   ids are its source ids plus the number of messages before it); contents, roles and
   time anchors are kept verbatim (so dates repeat from copy to copy);
3. each source conversation's probing questions are kept once, in first-use order per
   ability, with `source_chat_ids` naming that evidence in every copy (`{"copy-<k>":
   [ids]}`, as BEAM names all groups of an object); a question whose evidence lies in no
   copy (cut away) is dropped, abstentions are kept.

Copies repeat the same text under different ids, so recall of every relevant id is
diluted by the number of copies; MRR and success@k are the comparable metrics. Memory
while writing: one source conversation and one plan at a time.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.cli_errors import one_line_errors
from bench.errors import DatasetError
from bench.loaders.beam_source import (
    CHAT,
    QUESTIONS,
    SYNTHETIC_MANIFEST,
    conversation_folders,
    questions_file,
)

GENERATOR_VERSION = 1


@dataclass
class _Built:
    """What one synthetic conversation holds, for its questions and the manifest."""

    tokens: int = 0
    messages: int = 0
    batches: int = 0
    copies: list[str] = field(default_factory=list)
    ids: dict[str, list[tuple[int, dict[int, int]]]] = field(default_factory=dict)
    """Source folder → (copy number, source message id → synthetic id) per copy of it."""


def build(
    source: Path, out: Path, tokens: int, conversations: int = 1, seed: int = 0
) -> dict[str, Any]:
    """Write `conversations` synthetic conversations of at least `tokens` tokens under `out`."""
    from bench.loaders.beam import load_beam
    from bench.loaders.beam_source import folder_sha256
    from bench.tokens import TokenCounter

    if not source.is_dir():
        raise DatasetError(f"--source {source}: no such folder; give the 128K tier folder")
    load_beam(source)  # checks every file's shape before the raw reads below
    folders = conversation_folders(source)
    if tokens < 1 or conversations < 1:
        raise DatasetError("--tokens and --conversations must be >= 1")
    counter = TokenCounter()
    manifest: dict[str, Any] = {
        "synthetic": True,
        "generator": "bench.loaders.beam_synthetic",
        "generator_version": GENERATOR_VERSION,
        "recipe": "copies of the source tier's conversations, shuffled per cycle (module doc)",
        "source": str(source),
        "source_sha256": folder_sha256(source),
        "seed": seed,
        "target_tokens": tokens,
        "conversations": {},
    }
    for n in range(1, conversations + 1):
        folder = out / str(n)
        folder.mkdir(parents=True, exist_ok=True)
        built = _write_chat(folders, folder / CHAT, tokens, f"{seed}:{n}", counter)
        _write_questions(folders, folder / QUESTIONS, built)
        manifest["conversations"][str(n)] = {
            "tokens": built.tokens,
            "messages": built.messages,
            "batches": built.batches,
            "copies": built.copies,
        }
    (out / SYNTHETIC_MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def _order(folders: list[Path], key: str) -> Iterator[Path]:
    """Source folders shuffled per cycle, endlessly."""
    cycle = 0
    while True:
        batch = list(folders)
        random.Random(f"{key}:{cycle}").shuffle(batch)
        yield from batch
        cycle += 1


def _write_chat(folders: list[Path], path: Path, target: int, key: str, counter: Any) -> _Built:
    """Plans of copied batches, streamed to `path` until `target` tokens are written."""
    built = _Built()
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[")
        for folder in _order(folders, key):
            if built.tokens >= target:
                break
            plan = _copy(folder, built, target, counter)
            handle.write(("," if built.copies[1:] else "") + json.dumps(plan, ensure_ascii=False))
        handle.write("]\n")
    return built


def _copy(folder: Path, built: _Built, target: int, counter: Any) -> dict[str, Any]:
    """One copy of a source conversation as a plan, cut after the batch reaching `target`."""
    chat = json.loads((folder / CHAT).read_text(encoding="utf-8"))
    batches: list[dict[str, Any]] = []
    for item in chat:  # the 128K shape (batches) or the 10M one (plans of batches)
        batches.extend([item] if "turns" in item or len(item) != 1 else next(iter(item.values())))
    ids: dict[int, int] = {}
    out = []
    for batch in batches:
        if built.tokens >= target:
            break
        built.batches += 1
        turns = []
        for exchange in batch["turns"]:
            copied = []
            for message in exchange:
                ids[int(message["id"])] = built.messages
                copied.append({**message, "id": built.messages})
                built.messages += 1
                built.tokens += counter.count(str(message["content"]))
            turns.append(copied)
        out.append({**batch, "batch_number": built.batches, "turns": turns})
    built.copies.append(folder.name)
    built.ids.setdefault(folder.name, []).append((len(built.copies), ids))
    return {f"copy-{len(built.copies)}-of-{folder.name}": out}


def _write_questions(folders: list[Path], path: Path, built: _Built) -> None:
    """Each used source conversation's questions once, evidence named in every copy."""
    merged: dict[str, list[Any]] = {}
    for folder in folders:
        copies = built.ids.get(folder.name)
        if not copies:
            continue
        data = json.loads(questions_file(folder).read_text(encoding="utf-8"))
        for ability, items in data.items():
            for item in items:
                if (question := _remap(item, copies)) is not None:
                    merged.setdefault(ability, []).append(question)
    path.write_text(json.dumps(merged, ensure_ascii=False), encoding="utf-8")


def _remap(item: dict[str, Any], copies: list[tuple[int, dict[int, int]]]) -> dict[str, Any] | None:
    """The question with its evidence ids mapped into every copy; None when none survives."""
    raw = item.get("source_chat_ids")
    if raw is None:
        return dict(item)
    source = [v for g in (raw.values() if isinstance(raw, dict) else [raw]) for v in g]
    flat = [i for v in source for i in (v if isinstance(v, list) else [v])]
    groups = {f"copy-{k}": [ids[i] for i in flat if i in ids] for k, ids in copies}
    groups = {k: v for k, v in groups.items() if v}
    if flat and not groups:
        return None
    return {**item, "source_chat_ids": groups}


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.loaders.beam_synthetic OUT ...`: write the tier, print its manifest line."""
    import os

    parser = argparse.ArgumentParser(
        prog="python -m bench.loaders.beam_synthetic",
        description="Write a synthetic long BEAM tier (never BEAM 10M) from the 128K tier.",
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--tokens", type=int, default=10_000_000)
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    default = Path(os.environ.get("BENCH_DATA_DIR", "datasets/.cache")) / "beam-100k"
    parser.add_argument("--source", type=Path, default=default)
    args = parser.parse_args(argv)
    return one_line_errors(lambda: _write(args))


def _write(args: argparse.Namespace) -> int:
    """Build the tier the parsed arguments ask for and print one line about it."""
    manifest = build(args.source, args.out, args.tokens, args.conversations, args.seed)
    sizes = {n: c["tokens"] for n, c in manifest["conversations"].items()}
    print(f"wrote {args.out}: synthetic BEAM-layout tier, tokens per conversation {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
