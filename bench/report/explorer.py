r"""`explorer.html`: a self-contained failure explorer for one run (one row per question).

Written next to `report.html` by `python -m bench.report RUN_DIR`. Offline by
construction: CSS and JS are inline and the data is one embedded JSON blob (`<` escaped
as `\u003c`, so no record text can close the script element). The question list is
virtualised: only the rows in view exist in the DOM, so 1,986 questions × 5 arms stay
responsive. Filters: category, arm, correct/wrong (on the chosen arm, or any arm),
arms disagreeing, retrieval vs reader miss (`bench.scoring.miss.classify_miss`).

The detail pane shows each arm's answer, verdict, F1, context tokens, where the evidence
turns ranked among the retrieved ids, the saved context (`save_context=true`) with the
evidence turns' lines highlighted, the gold and the audit's corrected gold.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.loaders.locomo import load_locomo
from bench.loaders.longmemeval import load_longmemeval
from bench.records import OK, QuestionRecord, iter_records
from bench.runmeta import RunMeta
from bench.scoring.miss import classify_miss
from bench.summarise.cautions import dataset_loader
from bench.summarise.flags import RunFlags
from bench.summarise.model import Summary, group_label
from bench.summarise.scales import scale_banner

EXPLORER_NAME = "explorer.html"
_ASSET = Path(__file__).with_name("explorer_assets")


def evidence_turns(meta: RunMeta | None) -> dict[str, dict[str, str]]:
    """{conversation id: {turn id: rendered turn}} from the run's dataset file.

    The file is read with the run's loader (`config.dataset.loader`, else the dataset's
    name): LongMemEval's format for LongMemEval runs, LoCoMo's otherwise. Empty when
    run.json names no readable file (the explorer then lists the evidence ids without
    their text and highlights nothing).
    """
    path = meta.dataset.path if meta is not None else None
    if meta is None or not path or not Path(path).is_file():
        return {}
    longmemeval = dataset_loader(meta, meta.dataset.name or "") == "longmemeval"
    try:
        dataset = (load_longmemeval if longmemeval else load_locomo)(Path(path))
    except Exception:  # noqa: BLE001 - any unreadable file just means no turn text
        return {}
    return {
        c.conversation_id: {t.dia_id: t.render() for s in c.sessions for t in s.turns}
        for c in dataset.conversations
    }


def _arm_row(record: QuestionRecord, name: str) -> list[Any]:
    """[status, answer, correct, f1, context tokens, miss, evidence ranks, context, error]."""
    res = record.arms[name]
    evidence = record.corrected_evidence or record.evidence
    ranks = [res.retrieved_ids.index(e) + 1 if e in res.retrieved_ids else 0 for e in evidence]
    miss = classify_miss(record.evidence, res.retrieved_ids, res.correct)
    f1 = res.scores.get("f1")
    return [
        res.status,
        res.answer,
        res.correct,
        None if f1 is None else round(float(f1), 3),
        res.context_tokens,
        miss,
        ranks if res.retrieved_ids else None,
        res.context,
        res.error if res.status != OK else None,
    ]


def explorer_data(
    records: list[QuestionRecord],
    turns: Mapping[str, Mapping[str, str]],
    labels: str = "official",
    flags: RunFlags | None = None,
) -> dict[str, Any]:
    """The embedded blob: arm names and their flagged labels, then one row per question."""
    flags = flags if flags is not None else RunFlags()  # unflagged still carries scales
    arms = list(dict.fromkeys(a for r in records for a in r.arms))
    rows = []
    for r in records:
        key = r.question_type or str(r.category)
        conv_turns = turns.get(r.conversation_id, {})
        evidence = r.corrected_evidence or r.evidence
        rows.append(
            [
                r.question_id,
                group_label(key, labels, locomo_style=r.question_type is None),
                r.question,
                r.gold,
                r.corrected_gold if r.corrected_gold not in (None, r.gold) else None,
                [[e, conv_turns.get(e)] for e in evidence],
                [_arm_row(r, a) if a in r.arms else None for a in arms],
                r.adversarial_answer,
            ]
        )
    return {"arms": arms, "arm_labels": [flags.arm_label(a) for a in arms], "rows": rows}


def build_explorer(
    run_dir: Path, meta: RunMeta | None, labels: str = "official", summary: Summary | None = None
) -> str:
    """The whole explorer page for a run as one HTML document.

    Its banners are the summary's (`summary`, else the run summarised here): the verdict,
    the scale banner (MIXED SCALES, OFFLINE) and every flag, `lenient (calibration)`
    included, so the explorer shows what SUMMARY.md shows.
    """
    records = iter_records(run_dir)
    if summary is None:
        from bench.summarise.summary import summarise_run

        summary = summarise_run(run_dir, labels=labels)
    flags = summary.flags
    data = explorer_data(records, evidence_turns(meta), labels, flags)
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    title = html.escape(f"armbench explorer — {run_dir.resolve().name}")
    css = (_ASSET / "explorer.css").read_text(encoding="utf-8")
    js = (_ASSET / "explorer.js").read_text(encoding="utf-8")
    offline = meta is not None and meta.offline is True
    scale = scale_banner(flags.scales, offline, summary.outcome, summary.f1_threshold)
    banner = summary.verdict.html() + (
        f'<div class="banner">{html.escape(scale)}</div>' if scale else ""
    )
    banner += flags.banner_html()  # the summary's and the report's flags, before any number
    body = (_ASSET / "explorer_body.html").read_text(encoding="utf-8")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{css}</style></head><body>\n<h1>{title}</h1>"
        f"{banner}\n{body}\n"
        f'<script type="application/json" id="data">{blob}</script>\n'
        f"<script>{js}</script>\n</body></html>\n"
    )


def write_explorer(
    run_dir: Path, meta: RunMeta | None, labels: str = "official", summary: Summary | None = None
) -> Path:
    """Write `RUN_DIR/explorer.html` atomically; return its path."""
    page = build_explorer(run_dir, meta, labels, summary)
    path = run_dir / EXPLORER_NAME
    tmp = path.with_name(f".{EXPLORER_NAME}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(path)
    return path
