"""The typed summary of a run: what `bench.summarise` computes and its renderers format.

Standard library only. Definitions used throughout:

- A result *counts* for accuracy when its status is `ok` and it has a binary outcome
  (`correct` is not None). `error` results, missing arms and `ok` results without an
  outcome (e.g. the primary judge errored) are excluded and counted separately.
- Sets: for LoCoMo-style runs `scored` = categories 1–4 and `all` = every question; for
  other datasets (LongMemEval) both are every question.
- Groups: the LoCoMo category integer, or the LongMemEval `question_type`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any, Protocol

from bench.records import OK, QuestionRecord
from bench.runmeta import RunMeta
from bench.scoring.rules import f1_outcome_name, f1_rule
from bench.summarise.clustered import ClusteredTest
from bench.summarise.flags import RunFlags
from bench.summarise.stats import Rate, cohen_kappa
from bench.summarise.verdict import Verdict

if TYPE_CHECKING:
    from bench.summarise.cost import CostView
    from bench.summarise.errata import ErrataView
    from bench.summarise.judge_runs import JudgeRuns
    from bench.summarise.reach import Reach
    from bench.summarise.repeats import RepeatsView

LABEL_SCHEMES: dict[str, dict[int, str]] = {
    "official": {
        1: "multi-hop",
        2: "temporal",
        3: "open-domain",
        4: "single-hop",
        5: "adversarial",
    },
    "mem0": {1: "single-hop", 2: "temporal", 3: "multi-hop", 4: "open-domain", 5: "adversarial"},
}
"""Category labels: `official` follows the LoCoMo evaluation code; `mem0` its paper."""


def group_label(key: str, labels: str = "official", *, locomo_style: bool = True) -> str:
    """The printed name of a summary group — the one label rule of the project.

    A LoCoMo category (its integer as text) gets its name under the label scheme
    (`category N` when the scheme has none, or when the run is not LoCoMo-style); any
    other key, such as a LongMemEval `question_type`, is its own label.
    """
    if key.isdigit():
        default = f"category {int(key)}"
        return LABEL_SCHEMES[labels].get(int(key), default) if locomo_style else default
    return key


SETS = ("scored", "all")
SMALL_N = 300
"""Below this many paired questions a comparison is underpowered: not a result."""
LATENCY_QUANTILES = (50, 75, 90, 99)

SWEEP_ROWS = "sweep-rows"
"""The folder of a `-m` sweep holding one row file per job (bench.summarise.sweep); a run
whose parent holds it is a sweep job (bench.summarise.claims: tuned-in-sample)."""


@dataclass
class GroupStats:
    """One arm on one category (or question type)."""

    key: str
    """Group key: LoCoMo category number or LongMemEval question type."""
    label: str
    """Printed name of the group (see `group_label`)."""
    n_questions: int
    """Questions in the group."""
    accuracy: Rate
    """Correct of the results that count."""
    f1: float | None
    """Mean official F1 over the results that count; None when none do."""
    excluded: int
    """Results not counted: error, missing or no outcome."""


@dataclass
class ArmStats:
    """Everything the summary says about one arm."""

    name: str
    """Arm name."""
    accuracy: dict[str, Rate]
    """By set (`scored`, `all`): correct of the results that count."""
    f1: dict[str, float | None]
    """Mean official F1 by set, over the results that count."""
    """Mean official F1 by set, over the results that count."""
    excluded: dict[str, dict[str, int]]
    """By set: `error`, `missing` and `no_outcome` counts (not in the accuracy)."""
    groups: dict[str, GroupStats]
    """Per-group statistics keyed by group key."""
    context_tokens_mean: float | None
    """Mean context size in tokens; None when no result reports one."""
    latency_ms: dict[str, float | None]
    """Answer latency in ms: percentiles (`p50`, ...) and `mean`."""
    abstention_answerable: Rate
    """How often the arm abstains where an answer exists (LoCoMo 1–4; non-`_abs`)."""
    adversarial_abstention: Rate | None = None
    """LoCoMo category 5: abstained (the official category-5 accuracy)."""
    trap_hits: Rate | None = None
    """LoCoMo category 5: the answer matched the trap `adversarial_answer`."""
    stale: Rate | None = None
    """Supersession fixtures: a superseded fact reached the context."""
    retrieve_ms: dict[str, float | None] = field(default_factory=dict)
    """Retrieval latency in ms (each result's `retrieve_ms`: the arm's retrieve call; for a
    live arm the service's search round trip): percentiles and `mean`; empty when none."""


@dataclass
class PairedTest:
    """Paired binary outcomes of side A and side B on the same questions."""

    n: int
    """Questions both sides answered with an outcome."""
    a_only: int
    """Questions only A got right."""
    b_only: int
    """Questions only B got right."""
    both: int
    """Questions both got right."""
    neither: int
    """Questions neither got right."""
    p: float
    """Exact two-sided McNemar p."""
    mde: float | None
    """Minimum detectable effect (accuracy difference) for the discordant count observed."""
    p_holm: float | None = None
    """Holm-adjusted p within the family of comparisons printed."""
    clustered: ClusteredTest | None = None
    """The same comparison with clusters (conversations) as the sample; None when unknown."""

    @property
    def underpowered(self) -> bool:
        """True when n < SMALL_N or no split of the discordant pairs could be significant."""
        return self.n < SMALL_N or self.mde is None


@dataclass
class PairRow:
    """A vs B on one set: pooled test plus one test per group of that set.

    Within a run A and B are arms; against a baseline A is the arm in the baseline run
    and B the same arm in this run (`gained` = b_only, `lost` = a_only).
    """

    a: str
    """Name of side A."""
    b: str
    """Name of side B."""
    set: str
    """The question set compared (`scored` or `all`)."""
    pooled: PairedTest
    """The test over the whole set."""
    groups: dict[str, PairedTest] = field(default_factory=dict)
    """One test per group key of the set."""


@dataclass
class KappaRow:
    """Agreement of two raters (judge ids, or the offline F1 rule) on the same answers."""

    a: str
    """First rater (judge id or the F1 rule)."""
    b: str
    """Second rater."""
    n: int
    """Answers both raters judged."""
    kappa: float | None
    """Cohen's kappa; None when undefined (e.g. n is 0)."""


@dataclass(frozen=True)
class EquivalenceRow:
    """One pair (or arm against the baseline) on one set: TOST at margin δ."""

    a: str
    """Arm A (the baseline arm for baseline rows)."""
    b: str
    """Arm B."""
    set: str
    """The question set (`scored`)."""
    n: int
    """Questions both answered."""
    diff: float
    """d = accuracy of B − accuracy of A, on those questions."""
    ci90: tuple[float, float] | None
    """d ± z₀.₉₅·se (the interval TOST checks); None when se = 0."""
    p: float | None
    """max(p₁, p₂); None when no test is possible (se = 0 or n = 0)."""
    margin: float
    """δ, as a share (0.02 = 2 points)."""
    equivalent: bool
    """True when p < 0.05: the difference is within ±δ."""
    note: str = ""
    """`few discordant pairs` or `no discordant pairs` when the test is unreliable or absent."""


NEAR_FULL = 0.5
"""Coverage at or above which a question's context holds (about) half the haystack."""


@dataclass
class BudgetCell:
    """One arm at one budget: accuracy and the mean context it was sent."""

    accuracy: Rate
    """Right answers of the budget results that count (Wilson 95% interval)."""
    context_tokens_mean: float | None
    """Mean tokens of the context sent at this budget; None when no result counts."""


@dataclass
class BudgetView:
    """Accuracy against budget per arm, the pairs at each budget and the headline budget."""

    budgets: list[int]
    """The budgets found in the records, smallest first."""
    headline: int
    """The budget of the headline row "accuracy at equal budget B" (module docstring)."""
    cells: dict[str, dict[int, BudgetCell]]
    """Arm -> budget -> its cell."""
    pairs: dict[int, list[PairRow]] = field(default_factory=dict)
    """Budget -> every pair of arms tested at it (set `scored`, Holm per budget)."""


@dataclass
class CoverageRow:
    """How much of the haystack one arm's context holds."""

    arm: str
    """The arm."""
    n: int
    """Questions with an `ok` result and a known conversation size."""
    mean_share: float | None
    """Mean of context tokens / conversation tokens (capped at 1)."""
    half_or_more: int
    """Questions whose context holds at least `NEAR_FULL` of the conversation."""

    @property
    def near_full(self) -> bool:
        """True when more than half the questions' contexts hold half the haystack or more."""
        return self.n > 0 and 2 * self.half_or_more > self.n


class Section(Protocol):
    """A summary section of its own module (CONTRIBUTING "A new summary section")."""

    def markdown(self) -> list[str]:
        """Its lines of SUMMARY.md and the text output, heading first (`## ...`)."""
        ...

    def to_json(self) -> object:
        """Its value in `--json`, under the key it is stored with in `Summary.sections`."""
        ...


@dataclass
class Summary:
    """The whole summary of one run (optionally against a baseline run)."""

    run_dir: str
    """The run directory summarised."""
    meta: RunMeta | None
    """The run's run.json, or None when missing or unreadable."""
    dataset: str
    """Dataset name."""
    locomo_style: bool
    """True when groups are LoCoMo categories, False for LongMemEval question types."""
    labels: str
    """Category label scheme: `official` or `mem0`."""
    outcome: str
    """The rule behind `correct`, read from the records: `f1>=0.5`, `judge:<id>` or `mixed: ...`."""
    n_questions: dict[str, int]
    """Questions in each set."""
    group_labels: dict[str, str]
    """Group key -> label, in display order."""
    group_sizes: dict[str, int]
    """Questions per group key."""
    set_groups: dict[str, list[str]]
    """Set -> the group keys it contains."""
    arms: dict[str, ArmStats]
    """Per-arm statistics keyed by arm name."""
    pairs: list[PairRow]
    """Paired tests between this run's arms."""
    baseline_dir: str | None = None
    """The baseline run directory, when compared against one."""
    baseline: list[PairRow] | None = None
    """Paired tests of each arm against the baseline run; None without one."""
    kappas: list[KappaRow] = field(default_factory=list)
    """Agreement between raters on the same answers."""
    notes: list[str] = field(default_factory=list)
    """Warnings for the reader: small n, mixed outcomes, run.json warnings."""
    f1_threshold: float = 0.5
    """The F1 threshold: run.json's `scoring.f1_threshold`, else read from `outcome`, else 0.5."""
    errata: ErrataView | None = None
    """The answer-key errata view, when the records carry the audit (LoCoMo)."""
    reach: list[Reach] = field(default_factory=list)
    """Accuracy beside evidence and gold-token recall, per arm (empty when unknown)."""
    misses: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    """Arm -> group key -> wrong answers that were retrieval / reader misses
    (bench.scoring.miss; arms that list no retrieved ids are absent)."""
    repeats: RepeatsView | None = None
    """Run-to-run variation of a `repeats=N` run; None for a single run."""
    baseline_arm: str | None = None
    """The baseline arm every arm is paired with (an imported arm); None: same-name arms."""
    judge_runs: list[JudgeRuns] = field(default_factory=list)
    """Repeated judge runs (`<id>#<k>`): per run, mean ± SD, majority (`judge_runs`)."""
    equivalence: list[EquivalenceRow] = field(default_factory=list)
    """Paired equivalence (TOST) of every pair and baseline row (bench.summarise.equivalence)."""
    cost: CostView | None = None
    """Tokens (and money) per correct answer per arm (bench.summarise.cost); None if unknown."""
    judge_views: list[str] = field(default_factory=list)
    """Markdown lines on the judges' scale: LongMemEval metrics, judge calibration,
    judge migration (`bench.summarise.judge_views`); empty when none applies."""
    judge_json: dict[str, Any] = field(default_factory=dict)
    """The same sections' data for `--json` (`longmemeval`, `calibration`,
    `judge_migration`); empty when none applies."""
    flags: RunFlags = field(default_factory=RunFlags)
    """Degraded arms and untrustworthy judges (bench.summarise.flags), shown with every number."""
    cluster_key: str = "conversation_id"
    """What a cluster of the clustered tests is (bench.summarise.clustered.clusters_of)."""
    clusters: int = 0
    """K: the clusters (units owning a store) among the run's questions."""
    budgets: BudgetView | None = None
    """Accuracy at each context budget and the pairs there (bench.summarise.budgets)."""
    coverage: list[CoverageRow] = field(default_factory=list)
    """Each arm's share of the haystack in its context; empty when sizes are unknown."""
    verdict: Verdict = field(default_factory=Verdict)
    """Publishable or not, with every reason (bench.summarise.claims), shown first everywhere."""
    sections: dict[str, Section] = field(default_factory=dict)
    """Sections of their own modules by `--json` key, shown after the added views in this
    order (bench/summarise/added.py); empty unless a module adds one."""

    @property
    def sets_identical(self) -> bool:
        """True when `scored` and `all` are the same questions (non-LoCoMo datasets)."""
        return not self.locomo_style


def is_abstention_item(record: QuestionRecord, locomo_style: bool) -> bool:
    """LoCoMo category 5, or (other datasets) a question id ending in `_abs`."""
    if locomo_style:
        return record.category == 5
    return record.question_id.endswith("_abs")


def kappa_rows(
    records: list[QuestionRecord], threshold: float, locomo_style: bool
) -> list[KappaRow]:
    """Cohen's κ for every pair of judges and each judge against the offline F1 rule.

    Items are (question, arm) answers with an `ok` status; each pair of raters is compared
    on the items both rated. Empty when no judge verdicts are present.
    """
    rule = f1_outcome_name(threshold)
    ratings: list[dict[str, bool]] = []
    judges: set[str] = set()
    for r in records:
        abstention_item = is_abstention_item(r, locomo_style)
        for res in r.arms.values():
            if res.status != OK:
                continue
            row = {
                jid: bool(j.verdict)
                for jid, j in res.judgements.items()
                if j.status == OK and j.verdict is not None
            }
            if not row:
                continue
            judges.update(row)
            verdict = f1_rule(res.scores, abstention_item=abstention_item, threshold=threshold)
            if verdict is not None:
                row[rule] = verdict
            ratings.append(row)
    raters = [*sorted(judges), rule]
    rows = []
    for a, b in combinations(raters, 2) if judges else []:
        kappa, n = cohen_kappa((x[a], x[b]) for x in ratings if a in x and b in x)
        rows.append(KappaRow(a, b, n, kappa))
    return rows
