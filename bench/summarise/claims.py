"""The claim boundary's rules: every reason a run's (or an arm's) numbers are not publishable.

Standard library only. `compute_verdict` reads the Summary (flags, per-arm counts),
run.json, the records and the run directory's ledger and calibration, and returns one
`bench.summarise.verdict.Verdict`. Each rule has one home; this module only asks them:

- `offline-answerer`: run.json `offline` (imported arms answered elsewhere are not);
- `unofficial-outcome`: the arm's outcome rule is not the dataset's official binary judge
  (`OFFICIAL_JUDGE`, run with upstream's model);
- `judge-uncalibrated` / `-uninformative` / `-strict`: bench.summarise.calibration_view;
  `judge-lenient`: its `lenient_judges`; `judge-degenerate` / `-self-judging`:
  bench.summarise.judge_checks (through `RunFlags`, rubric judges included);
- `arm-degraded`: `RunFlags.arms` (bench.scoring.health, retrieval_health);
- `incomplete-coverage`: `limit.*` set, dataset questions without a record, and per arm
  on the scored set: results in error, questions without a result, answers without a
  verdict (the Summary's `excluded`);
- `mixed-code-versions` / `dirty-tree`: the `git_commit` / `git_dirty` each record carries;
- `rerun-by-outcome`: bench.ledger's rule over `ledger.jsonl`;
- `tuned-in-sample`: a job of a `-m` sweep (its folder's parent holds `sweep-rows/`, the
  sweep compares every job with its own baseline on the same questions) whose config
  names no `held_out` split;
- `near-full-context`: `near_full_context` (the coverage measure of methodology §3.6; the
  top-k rule for runs whose conversation sizes are unknown);
- `too-few-questions`: fewer than `SMALL_N` scored answers with an outcome.
"""

from __future__ import annotations

from pathlib import Path

from bench.ledger import LEDGER_FILE, read_ledger, reruns_by_outcome
from bench.runmeta import RunMeta
from bench.summarise import verdict as v
from bench.summarise.calibration_view import calibration_problems, lenient_judges
from bench.summarise.cautions import dataset_loader
from bench.summarise.flags import DEGENERATE, SELF_JUDGING
from bench.summarise.model import SMALL_N, SWEEP_ROWS, CoverageRow, Summary
from bench.summarise.scales import RecordFacts, judge_base, rule_judge

OFFICIAL_JUDGE = {
    "locomo": "mem0_locomo",
    "longmemeval": "longmemeval_official",
    "locomo_plus": "locomo_plus_official",
}
"""Dataset loader -> the judge kind whose verdicts are the dataset's published scale (BEAM's
own judge scores rubric items and gives no right/wrong outcome, so BEAM has none)."""

Found = tuple[str, str, str | None]
"""(code, sentence, arm or None for the whole run)."""


def near_full_context(meta: RunMeta | None, arm: str, coverage: CoverageRow | None) -> str | None:
    """Why an arm's context is (nearly) the whole history, else None.

    The coverage measure (methodology §3.6, `bench.summarise.budgets.coverage_rows`):
    the arm's context holds half the conversation or more on most of its questions. For
    runs whose conversation sizes are unknown, the top-k rule: the arm's `top_k` is at or
    above the mean number of sessions per conversation (`dataset_stats`), so retrieval can
    return about everything (MemPalace#29). The full-context baseline itself (kind `raw`)
    is never flagged: reading the whole history is what it is for.
    """
    if meta is not None and meta.arm_option(arm, "kind") == "raw":
        return None
    if coverage is not None and coverage.n:
        if not coverage.near_full:
            return None
        share = 100 * (coverage.mean_share or 0.0)
        return (
            f"its context holds half the conversation or more on {coverage.half_or_more} of "
            f"{coverage.n} questions (mean coverage {share:.0f}%): it is not testing memory"
        )
    return _top_k_rule(meta, arm)


def _top_k_rule(meta: RunMeta | None, arm: str) -> str | None:
    """The top-k fallback of `near_full_context`."""
    top_k = meta.arm_option(arm, "top_k") if meta else None
    stats = meta.dataset_stats if meta else {}
    sessions, convs = stats.get("sessions"), stats.get("conversations")
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (top_k, sessions, convs)):
        return None
    assert isinstance(top_k, int) and isinstance(sessions, int) and isinstance(convs, int)
    if convs <= 0 or top_k <= 0 or top_k < sessions / convs:
        return None
    return (
        f"top_k {top_k} is at or above the {sessions / convs:.1f} sessions of a conversation "
        "on average: retrieval can return about the whole history"
    )


def compute_verdict(summary: Summary, records: int, facts: RecordFacts) -> v.Verdict:
    """The run's verdict: every reason of every rule (module docstring), merged.

    `records`: how many records the run holds; `facts`: `scales.record_facts` of them.
    """
    meta, names = summary.meta, list(summary.arms)
    run_dir = Path(summary.run_dir)
    found: list[Found] = []
    found += _answerer_and_rule(summary, facts)
    found += _judges(summary, facts, run_dir)
    found += _coverage(summary, records)
    found += _provenance(facts)
    found += _history(run_dir, meta)
    coverage = {row.arm: row for row in summary.coverage}
    for arm in names:
        for flag in summary.flags.arms.get(arm, ()):
            found.append((v.ARM_DEGRADED, f"{flag.kind}: {flag.detail}", arm))
        near = near_full_context(meta, arm, coverage.get(arm))
        if near:
            found.append((v.NEAR_FULL_CONTEXT, near, arm))
        n = summary.arms[arm].accuracy["scored"].n
        if n < SMALL_N:
            found.append((v.TOO_FEW, f"{n} scored answers: under {SMALL_N} is not a result", arm))
    return v.Verdict(_merged(found, names), tuple(names), dict(summary.flags.scales))


def _merged(found: list[Found], names: list[str]) -> tuple[v.Reason, ...]:
    """One Reason per (code, sentence), naming its arms (none when it holds for every arm)."""
    arms: dict[tuple[str, str], list[str]] = {}
    for code, sentence, arm in found:
        listed = arms.setdefault((code, sentence), [])
        if arm is not None and arm not in listed:
            listed.append(arm)
        elif arm is None:
            listed.append("")
    reasons = []
    for (code, sentence), listed in arms.items():
        whole = "" in listed or set(listed) >= set(names)
        reasons.append(v.Reason(code, sentence, () if whole else tuple(listed)))
    return tuple(sorted(reasons, key=lambda r: v.CODES.index(r.code)))


def _answerer_and_rule(summary: Summary, facts: RecordFacts) -> list[Found]:
    """`offline-answerer` and `unofficial-outcome`, per arm."""
    meta = summary.meta
    loader = dataset_loader(meta, summary.dataset)
    official = OFFICIAL_JUDGE.get(loader)
    want = f"{official} with upstream's model" if official else "none: it has no binary judge"
    out: list[Found] = []
    for arm in summary.arms:
        if meta is not None and meta.offline and arm not in facts.imported:
            why = "answers come from the offline extractive answerer, not a language model"
            out.append((v.OFFLINE_ANSWERER, why, arm))
        rule = facts.rule(arm)
        if not (official and _is_official(rule, meta, official)):
            dataset = loader or summary.dataset
            why = f"outcome {rule} is not the dataset's official judge ({dataset}: {want})"
            out.append((v.UNOFFICIAL_OUTCOME, why, arm))
    return out


def _is_official(rule: str, meta: RunMeta | None, official: str) -> bool:
    """True when the rule's judge is `official`'s kind, run with upstream's model."""
    base = rule_judge(rule)
    judges = [j for j in (meta.judges if meta else []) if judge_base(j.judge_id) == base]
    return bool(judges) and all(j.kind == official and not j.model_differs for j in judges)


def _judges(summary: Summary, facts: RecordFacts, run_dir: Path) -> list[Found]:
    """Calibration (per outcome rule), and every flagged judge of the run."""
    out: list[Found] = []
    by_rule: dict[str, list[str]] = {}
    for arm in summary.arms:
        by_rule.setdefault(facts.rule(arm), []).append(arm)
    for rule, arms in by_rule.items():
        found = calibration_problems(run_dir, summary.meta, rule)
        for judge, why in lenient_judges(run_dir, summary.meta, rule).items():
            found[v.JUDGE_LENIENT] = f"judge {judge} {why}"
        out += [(code, why, arm) for code, why in found.items() for arm in arms]
    codes = {DEGENERATE: v.JUDGE_DEGENERATE, SELF_JUDGING: v.JUDGE_SELF}
    for judge_id, flags in summary.flags.judges.items():
        rules = [r for r in by_rule if rule_judge(r) == judge_base(judge_id)]
        for flag in flags:
            if flag.kind in codes:
                why = f"judge {judge_id} is {flag.kind}: {flag.detail}"
                hits: list[Found] = [(codes[flag.kind], why, a) for r in rules for a in by_rule[r]]
                out += hits or [(codes[flag.kind], why, None)]
    return out


_GAPS = (
    ("error", "results in error"),
    ("missing", "questions without a result"),
    ("no_outcome", "answers without a verdict"),
)
"""The Summary's `excluded` keys and how a coverage reason names them."""


def _coverage(summary: Summary, records: int) -> list[Found]:
    """Limits, questions without a record, and per arm errors, gaps and missing verdicts."""
    meta, out = summary.meta, list[Found]()
    for key in ("conversations", "questions"):
        value = meta.config_value("limit", key) if meta else None
        if value is not None:
            out.append((v.INCOMPLETE, f"the run was limited (limit.{key}={value})", None))
    expected = meta.dataset_stats.get("questions") if meta else None
    if isinstance(expected, int) and records < expected:
        why = f"{expected - records} of {expected} dataset questions have no record"
        out.append((v.INCOMPLETE, why, None))
    for arm, stats in summary.arms.items():
        gaps = stats.excluded["scored"]
        what = [f"{gaps[key]} {label}" for key, label in _GAPS if gaps.get(key)]
        if what:
            n = summary.n_questions["scored"]
            out.append((v.INCOMPLETE, f"{', '.join(what)} of {n} scored questions", arm))
    return out


def _provenance(facts: RecordFacts) -> list[Found]:
    """Records written by several commits, or from a dirty checkout."""
    out: list[Found] = []
    if len(facts.commits) > 1:
        listed = ", ".join(f"{c[:12]} ({n})" for c, n in facts.commits.most_common())
        why = f"records were written by {len(facts.commits)} code versions: {listed}"
        out.append((v.CODE_VERSIONS, why, None))
    if facts.dirty:
        why = f"{facts.dirty} records were written from a checkout with uncommitted changes"
        out.append((v.DIRTY_TREE, why, None))
    return out


def _history(run_dir: Path, meta: RunMeta | None) -> list[Found]:
    """Reruns chosen by outcome (the ledger) and tuning on the same questions (a sweep)."""
    out: list[Found] = []
    for arm, questions in reruns_by_outcome(read_ledger(run_dir) or []).items():
        why = f"{len(questions)} questions answered again after a wrong outcome ({LEDGER_FILE})"
        out.append((v.RERUN_BY_OUTCOME, why, arm))
    rows = run_dir.parent / SWEEP_ROWS
    held_out = meta.config.get("held_out") if meta else None
    jobs = sum(1 for p in rows.glob("*.json")) if rows.is_dir() else 0
    if jobs > 1 and not held_out:
        why = f"a job of a {jobs}-job sweep compared on its own questions, no held_out declared"
        out.append((v.TUNED_IN_SAMPLE, why, None))
    return out
