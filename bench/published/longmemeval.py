"""Read LongMemEval hypotheses and the verdict logs upstream's evaluator writes.

Hypotheses, as LongMemEval takes them: JSON Lines (or a JSON list) of
`{question_id, hypothesis}`. Upstream's `evaluate_qa.py` writes its log as the same
entries, one JSON object per line, each with `autoeval_label: {model, label}` added
(label true when the judge said yes). So a hypotheses file that carries
`autoeval_label` is judge run 1, and each further log (`--judgements LOG`, one per
judge run) adds a run; a log must judge the same hypothesis for every question of the
file, with one judge model throughout, and no log may be a file already counted (the
same log twice would count one run as two). The rows carry no question text: identity is
the question id alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.loaders.resolve import sha256_file
from bench.published.model import PublishedError, PublishedFile, PublishedRow
from bench.published.read import load_entries, need

_FIX = "pass LongMemEval hypotheses ({question_id, hypothesis} per line)"


def read_longmemeval(path: Path, logs: list[Path]) -> PublishedFile:
    """Rows of a hypotheses file, with verdicts from it and from each log, in that order."""
    entries = _entries(path)
    runs: list[dict[str, bool]] = []
    models: list[str] = []
    own = [e for e in entries.values() if "autoeval_label" in e[1]]
    if own and len(own) != len(entries):
        raise PublishedError(
            f"{path}: {len(own)} of {len(entries)} entries carry autoeval_label: "
            "a judged file must judge every entry (or pass the verdicts as --judgements logs)"
        )
    if own:
        labels, model = _labels(path, entries, entries)
        runs.append(labels)
        models.append(model)
    digests = _distinct_runs(path if own else None, logs)
    for log in logs:
        labels, model = _labels(log, _entries(log), entries)
        runs.append(labels)
        models.append(model)
    if len(set(models)) > 1:
        raise PublishedError(
            f"{logs[-1] if logs else path}: judge runs by different models "
            f"({', '.join(sorted(set(models)))}): import one judge's runs at a time"
        )
    rows = [
        PublishedRow(
            row=qid,
            where=where,
            answer=entry["hypothesis"],
            verdicts=tuple(run[qid] for run in runs),
        )
        for qid, (where, entry) in entries.items()
    ]
    return PublishedFile(
        format="longmemeval",
        rows=rows,
        judge_model=models[0] if models else None,
        runs=len(runs),
        judge_files=digests,
    )


def _distinct_runs(judged: Path | None, logs: list[Path]) -> list[str]:
    """SHA-256 of each log; PublishedError when a log is a file already counted as a run.

    The same log passed twice (under one name or two: a link), or the judged hypotheses
    file passed again as a log, would count one judge run as two. Two files with equal
    bytes are two runs (a deterministic judge writes the same log twice).
    """
    seen: dict[tuple[int, int], Path] = {_file_id(judged): judged} if judged is not None else {}
    for log in logs:
        key = _file_id(log)
        if key in seen:
            raise PublishedError(
                f"--judgements {log}: the same file as {seen[key]}: one judge run counts "
                "once; pass each run's log once"
            )
        seen[key] = log
    return [sha256_file(log) for log in logs]


def _file_id(path: Path) -> tuple[int, int]:
    """(device, inode): the file itself, whatever name or link reaches it."""
    info = path.stat()
    return info.st_dev, info.st_ino


def _entries(path: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """question_id -> (where, entry); a repeated id or a malformed entry is an error."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for where, entry in load_entries(path):
        if not isinstance(entry, dict):
            raise PublishedError(f"{path}: {where} is not an object: {_FIX}")
        qid = need(path, entry, "question_id", str, where)
        need(path, entry, "hypothesis", str, where)
        if qid in out:
            raise PublishedError(
                f"{path}: {where}: question_id {qid!r} repeats {out[qid][0]}: "
                "one entry per question"
            )
        out[qid] = (where, entry)
    return out


def _labels(
    path: Path,
    judged: dict[str, tuple[str, dict[str, Any]]],
    hypotheses: dict[str, tuple[str, dict[str, Any]]],
) -> tuple[dict[str, bool], str]:
    """One judge run's verdicts by question id, and its judge model."""
    if judged.keys() != hypotheses.keys():
        missing = sorted(hypotheses.keys() - judged.keys())
        extra = sorted(judged.keys() - hypotheses.keys())
        named = f"lacks {missing[0]!r}" if missing else f"has {extra[0]!r}, not in the hypotheses"
        raise PublishedError(
            f"{path}: judges other questions than the hypotheses ({named}; "
            f"{len(missing)} missing, {len(extra)} extra): pass the log of these hypotheses"
        )
    labels: dict[str, bool] = {}
    models: set[str] = set()
    for qid, (where, entry) in judged.items():
        label = need(path, entry, "autoeval_label", dict, where)
        if not isinstance(label.get("label"), bool):
            raise PublishedError(f"{path}: {where}.autoeval_label.label is not true or false")
        models.add(need(path, label, "model", str, f"{where}.autoeval_label"))
        if entry["hypothesis"] != hypotheses[qid][1]["hypothesis"]:
            raise PublishedError(
                f"{path}: {where} ({qid}) judged another hypothesis than the file's "
                f"{hypotheses[qid][0]}: pass the log of these hypotheses"
            )
        labels[qid] = label["label"]
    if len(models) != 1:
        raise PublishedError(f"{path}: autoeval_label.model differs between entries: one run")
    return labels, models.pop()
