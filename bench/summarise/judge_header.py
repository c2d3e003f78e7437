"""How the summary header names a judge: model, runs, prompt source and hash, endpoint.

A table is only comparable with a published one when it is on the same judge's scale,
so every judge line says which prompt (file path, or an upstream file's pinned URL and
SHA-256), which model and endpoint, and — for an official judge run with another model
than upstream's — that the scale differs. Standard library only.
"""

from __future__ import annotations

from bench.runmeta import JudgeMeta


def judge_line(judge: JudgeMeta) -> str:
    """One judge as `id (model[, ×R runs], prompt <sha12> <source>[, endpoint <url>])`."""
    parts = [judge.model or "unknown"]
    if judge.runs and judge.runs > 1:
        parts.append(f"×{judge.runs} runs, outcome = majority")
    prompt = f"prompt {str(judge.prompt_hash or '')[:12]}"
    if judge.prompt_source:
        prompt += f" from {judge.prompt_source}"
    parts.append(prompt)
    if judge.endpoint:
        parts.append(f"endpoint {judge.endpoint}")
    if judge.model_differs:
        parts.append(f"NOT the official model {judge.official_model}: not on the published scale")
    return f"{judge.judge_id} ({', '.join(parts)})"


def judges_text(judges: list[JudgeMeta]) -> str:
    """Every judge's line, joined by `; `."""
    return "; ".join(judge_line(j) for j in judges)
