"""The per-question record: typed, versioned, written atomically. Standard library only.

One JSON file per question holds every arm's result for that question, so pairing
between arms is by construction. `schema_version` opens every record; readers accept
every version listed in `READABLE_VERSIONS`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Final, Generic, Literal, TypeVar

from bench.files import write_json_atomic
from bench.imported import Imported as Imported
from bench.judgement import Judgement as Judgement
from bench.judgement import JudgeStatus as JudgeStatus
from bench.result_parts import Health, QueryHealth, plain_parts, read_health, read_query, read_usage
from bench.typed_json import Check, FieldChecks, int_object, scalar_scores
from bench.types import Usage
from bench.untrusted import UntrustedJSONError, read_json

SCHEMA_VERSION = 1
READABLE_VERSIONS = (1,)
Status = Literal["ok", "error"]
"""A result's (or judgement's) status: only `ok` results are scored; `error` is retried."""
Miss = Literal["retrieval", "reader"]
"""Why a wrong answer was wrong: no evidence unit in context, or evidence there and misread."""
_T = TypeVar("_T")
OK: Final = "ok"
ERROR: Final = "error"
UNPARSEABLE: Final = "unparseable"
SKIPPED: Final = "skipped"


@dataclass(slots=True)
class RepeatResult:
    """One extra draw (repeat 1, 2, ...) of an arm's answer and verdicts on one question.

    Repeat 0 is the arm's result itself; a repeat reuses its retrieved context and asks
    the stochastic parts again under cache keys that carry the repeat index
    (`bench.answer.repeats`). Scored against the official key only.
    """

    repeat: int
    """The repeat index (1 .. repeats-1)."""
    status: Status
    """`ok` or `error` (an `error` repeat is redone, with the arm, on resume)."""
    answer: str | None = None
    """The post-processed answer (repeat 0's when only the judges are stochastic)."""
    correct: bool | None = None
    """The outcome under the run's rule (primary judge verdict, else the F1 rule)."""
    judgements: dict[str, Judgement] = field(default_factory=dict)
    """This repeat's verdicts keyed by judge id."""
    error: str | None = None
    """Why the repeat failed, when `status` is `error`."""
    cached: bool = False
    """True when this repeat's answer came from the response cache."""


@dataclass(slots=True)
class BudgetResult:
    """An arm's answer with its context cut to `budget` tokens (`context_budgets`).

    Same question, retrieval, prompt, answerer and outcome rule (bench/context_budget.py).
    """

    budget: int
    """The context budget B, in tokens of the run's tokenizer."""
    status: Status
    """`ok` or `error` (an `error` budget is redone, with its arm, on resume)."""
    answer: str | None = None
    """The post-processed answer at this budget."""
    correct: bool | None = None
    """The outcome under the arm's `outcome` rule (primary judge verdict, else F1)."""
    context_tokens: int | None = None
    """Tokens in the context sent at this budget (at most about `budget`)."""
    context_truncated: bool = False
    """True when the budget cut the arm's context (False: it fitted whole)."""
    judgements: dict[str, Judgement] = field(default_factory=dict)
    """Verdicts on this budget's answer, keyed by judge id."""
    error: str | None = None
    """Why this budget's answer failed, when `status` is `error`."""


@dataclass(slots=True)
class ArmResult:
    """One arm's answer to one question, with its scores and costs."""

    status: Status
    """`ok` or `error`; only `ok` results are scored."""
    answer: str | None = None
    """The post-processed answer every scorer sees."""
    correct: bool | None = None
    """The binary outcome the summary pairs on (see `outcome`)."""
    scores: dict[str, Any] = field(default_factory=dict)
    """Every metric computed: official F1, EM, abstained, trap_hit, ..."""
    context_tokens: int | None = None
    """Tokens in the context block, counted with `tokenizer`."""
    latency_ms: float | None = None
    """Wall time of the answering call."""
    error: str | None = None
    """Why the arm failed, when `status` is `error`."""
    raw_answer: str | None = None
    """The answerer's text before post-processing."""
    outcome: str | None = None
    """Which rule produced `correct`: `f1>=0.5` or `judge:<id>`."""
    answerer: str | None = None
    """The model (or offline answerer) that wrote the answer."""
    tokenizer: str | None = None
    """The tokenizer `context_tokens` was counted with."""
    retrieve_ms: float | None = None
    """Wall time of the arm's retrieval."""
    context_truncated: bool = False
    """True when the context was cut to fit the model's budget."""
    context_cut_tokens: int | None = None
    """Tokens cut from the context just before sending, so the prompt fits the server's
    context per request (`answer.truncate_to_fit`); None when nothing was cut there."""
    truncated: bool | None = None
    """True when the answer hit the completion cap (finish_reason `length`); None when not."""
    retrieved_ids: list[str] = field(default_factory=list)
    """Source turn ids (dia_ids) behind the retrieved items, best first."""
    usage: Usage | None = None
    """Prompt/completion tokens of the answering call, as the provider reported them.
    (`usage_dict` form; None, no call made, is written `{}`)."""
    cached: bool = False
    """True when the answer came from the response cache."""
    judgements: dict[str, Judgement] = field(default_factory=dict)
    """Verdicts keyed by judge id."""
    context: str | None = None
    """The rendered context, when the run saves contexts."""
    correct_corrected: bool | None = None
    """The outcome against the audit's corrected gold (score-affected errata questions only)."""
    corrected_judgements: dict[str, Judgement] = field(default_factory=dict)
    """Verdicts against the corrected gold, keyed by judge id (score-affected questions only)."""
    extraction: Health | None = None
    """The arm's extraction health on this conversation: exchanges, failed, facts
    (omitted from the JSON for arms that do not extract; `Health.to_json` form)."""
    retrieval: QueryHealth | None = None
    """The query's `items`, `requested_k`, `empty` or `failed`, `timed_out` (retrieval health)."""
    write_path: str | None = None
    """A live arm's write path (`capture`: the service's own extraction, `remember`: raw
    storage), which changes what is measured; None for in-process arms."""
    answer_path: str | None = None
    """Who wrote a live arm's answer: `service` (the service's answer endpoint) or
    `harness` (the configured answerer); None (omitted) for in-process arms, which are
    always answered by the harness."""
    evidence_retrieved: bool | None = None
    """True when the context held at least one evidence unit (ranked source ids, or a
    whole-context arm's kept turns); None without evidence or without listed ids."""
    miss: Miss | None = None
    """For a wrong answer: `retrieval` (no evidence retrieved) or `reader` (evidence
    retrieved, answer wrong); None when right or when it cannot be told."""
    repeats: list[RepeatResult] = field(default_factory=list)
    """Repeats 1 .. N-1 of a `repeats=N` run (this result is repeat 0); omitted otherwise."""
    imported: Imported | None = None
    """Set on a result read from a published file (`bench.published`); omitted otherwise."""
    budgets: list[BudgetResult] = field(default_factory=list)
    """One answer per context budget of a `context_budgets=[...]` run, smallest first;
    omitted otherwise (bench/run/budgets.py)."""

    @classmethod
    def failed(cls, message: str) -> ArmResult:
        """An `error` result carrying a one-line reason."""
        return cls(status=ERROR, error=message.splitlines()[0][:500] if message else "error")


@dataclass(slots=True)
class QuestionRecord:
    """Everything known about one question and every arm's answer to it."""

    question_id: str
    """Dataset-unique question id, e.g. `conv-26:10`."""
    dataset: str
    """Name of the dataset (`dataset.name` in the config)."""
    conversation_id: str
    """Id of the conversation the question is asked about."""
    category: int
    """The dataset's question category (LoCoMo 1-5; 5 is adversarial)."""
    question: str
    """The question text."""
    gold: str | None
    """The gold answer; None where the dataset has none (e.g. LoCoMo category 5)."""
    evidence: list[str]
    """Dia_ids of the turns the gold answer rests on."""
    arms: dict[str, ArmResult]
    """Each arm's result, keyed by arm name."""
    adversarial_answer: str | None = None
    """LoCoMo category 5 trap answer: matching it counts as `trap_hit`."""
    question_type: str | None = None
    """LongMemEval question type (used for grouping); None for LoCoMo."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """Who wrote it: run, config hash, git commit/dirty, dataset/prompt SHA-256, model ids.

    Also `identity_fingerprint`: a `stable_hash` per identity key a resume compares
    (`bench.run.directory.fingerprint`); records before it carry the full `identity`.
    """
    errata_type: str | None = None
    """The answer-key audit's error type; None when the audit does not list the question."""
    corrected_gold: str | None = None
    """The audit's gold answer (equal to `gold` when only the citation is wrong)."""
    corrected_evidence: list[str] | None = None
    """The audit's evidence ids, when the audit lists the question."""
    rubric: list[str] | None = None
    """BEAM: the rubric items the official judge checks one by one; omitted elsewhere."""
    difficulty: str | None = None
    """BEAM: the question's difficulty as the dataset writes it; omitted elsewhere."""
    schema_version: int = SCHEMA_VERSION
    """Record format version; always first in the JSON (see `READABLE_VERSIONS`)."""

    def is_complete(self, arm_names: list[str]) -> bool:
        """True when every named arm has an `ok` result (invariant 2)."""
        return all(n in self.arms and self.arms[n].status == OK for n in arm_names)

    def to_json(self) -> dict[str, Any]:
        """A plain dict with `schema_version` first."""
        body = asdict(self)
        version = body.pop("schema_version")
        _drop_unset(body, _OPTIONAL_RECORD_KEYS)
        for typed, result in zip(self.arms.values(), body["arms"].values(), strict=True):
            result.update(plain_parts(typed.usage, typed.extraction, typed.retrieval))
            _drop_unset(result, _OPTIONAL_RESULT_KEYS)
            _drop_unset_judgement_keys(result)
        return {"schema_version": version, **body}

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "<record>") -> QuestionRecord:
        """Parse a record dict; raise ValueError naming `source` on an unknown version."""
        version = data.get("schema_version")
        if version not in READABLE_VERSIONS:
            raise ValueError(
                f"{source}: schema_version {version!r} is not readable by this armbench "
                f"(reads {list(READABLE_VERSIONS)}); upgrade armbench"
            )
        made = _RECORD_SHAPE.build(data)
        made.arms = {name: _arm_from_json(res) for name, res in data["arms"].items()}
        return made


_OPTIONAL_RECORD_KEYS = (
    "errata_type",
    "corrected_gold",
    "corrected_evidence",
    "rubric",
    "difficulty",
)
_OPTIONAL_RESULT_KEYS = (
    "correct_corrected", "corrected_judgements", "extraction", "retrieval", "write_path",
    "answer_path", "evidence_retrieved", "miss", "repeats", "context_cut_tokens", "truncated",
    "imported", "budgets",
)  # fmt: skip
"""Errata fields, extraction and retrieval health, a live arm's write path, the miss fields, the
fit/cap flags and the import marker, written only when set, so records of runs (and
arms) without them are unchanged."""


def _drop_unset_judgement_keys(result: dict[str, Any]) -> None:
    """Drop a judgement's unset `scores` in a result, its corrected verdicts and repeats."""
    tables = [result.get("judgements"), result.get("corrected_judgements")]
    tables += [
        r.get("judgements") for r in (result.get("repeats") or []) + (result.get("budgets") or [])
    ]
    for table in tables:
        for judgement in (table or {}).values():
            if judgement.get("scores") is None:
                judgement.pop("scores", None)


def _drop_unset(body: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        if body.get(key) in (None, {}) or (key in ("repeats", "budgets") and body.get(key) == []):
            body.pop(key, None)


class _Shape(Generic[_T]):
    """Builds a record dataclass from its parsed JSON fields, dropping keys it does not know.

    A newer writer may add fields; an older reader keeps the ones its class has. A
    missing required field raises TypeError, as the constructor does.
    """

    __slots__ = ("cls", "names", "types")

    def __init__(self, kind: type[_T], overrides: dict[str, Check] | None = None) -> None:
        """The shape of dataclass `kind`, read from its fields (and their annotated types)."""
        self.cls = kind
        self.names = tuple(f.name for f in fields(kind))  # type: ignore[arg-type]
        self.types = FieldChecks(kind, overrides)

    def build(self, data: dict[str, Any]) -> _T:
        """`cls(**data)` over the keys `cls` has (unknown keys dropped; types checked).

        Keywords are the class's own name strings: one that *is* a parameter's name matches
        by identity, a parser's copy is compared with every parameter by value (issue 28).
        """
        if (problem := self.types.problem(data)) is not None:
            raise TypeError(problem)  # "category is 'x', not int"
        return self.cls(**{name: data[name] for name in self.names if name in data})


_RECORD_SHAPE = _Shape(QuestionRecord)
_PARTS = {"usage": int_object, "extraction": int_object, "retrieval": int_object}
_RESULT_SHAPE = _Shape(ArmResult, {"scores": scalar_scores, **_PARTS})
_JUDGEMENT_SHAPE = _Shape(Judgement)
_REPEAT_SHAPE = _Shape(RepeatResult)
_IMPORTED_SHAPE = _Shape(Imported)
_BUDGET_SHAPE = _Shape(BudgetResult)


def _judgements(given: Any) -> dict[str, Judgement]:
    """Judge id -> Judgement of a result's (or repeat's) `judgements` value."""
    if not given:
        return {}
    build = _JUDGEMENT_SHAPE.build
    return {jid: build(j) for jid, j in given.items()}


def _repeat_from_json(data: dict[str, Any]) -> RepeatResult:
    made = _REPEAT_SHAPE.build(data)
    made.judgements = _judgements(made.judgements)
    return made


def _budget_from_json(data: dict[str, Any]) -> BudgetResult:
    made = _BUDGET_SHAPE.build(data)
    made.judgements = _judgements(made.judgements)
    return made


def _arm_from_json(data: dict[str, Any]) -> ArmResult:
    """The typed result; its judgements and repeats typed too (an empty `{}` kept as is)."""
    made = _RESULT_SHAPE.build(data)
    parts: Any = made  # usage and health still as parsed: objects of integers
    made.usage, made.extraction = read_usage(parts.usage), read_health(parts.extraction)
    made.retrieval = read_query(parts.retrieval)
    given: Any = made.judgements
    if given or given.__class__ is not dict:
        made.judgements = _judgements(given)
    given = made.corrected_judgements
    if given or given.__class__ is not dict:
        made.corrected_judgements = _judgements(given)
    given = made.repeats
    if given or given.__class__ is not list:
        made.repeats = [_repeat_from_json(r) for r in given] if given else []
    given = made.budgets
    if given:
        made.budgets = [_budget_from_json(b) for b in given]
    given = made.imported
    if given is not None:
        made.imported = _IMPORTED_SHAPE.build(given)
    return made


def record_path(run_dir: Path, file_stem: str) -> Path:
    """Where the record of a question lives inside a run directory."""
    return run_dir / "questions" / f"{file_stem}.json"


def write_record(run_dir: Path, file_stem: str, record: QuestionRecord) -> Path:
    """Atomically write one question record (checked to stay in `run_dir`); return its path."""
    from bench.paths import contained

    path = record_path(run_dir, file_stem)
    write_json_atomic(contained(path, run_dir), record.to_json())
    return path


def not_an_outcome(field: str, value: object) -> TypeError:
    """The error for an outcome field holding something other than true, false or null.

    `correct` and `correct_corrected` are counted as outcomes, never by truthiness: a
    hostile `"yes"` must not count as right.
    """
    return TypeError(f"{field} is {value!r}, not true, false or null")


def read_record(path: Path) -> QuestionRecord:
    """One record file; `UntrustedJSONError` (one line) for anything that is not a record."""
    fix = "move it away, or restore the record from the run's copy"
    data = read_json(path, fix=fix)
    try:
        return QuestionRecord.from_json(data, source=str(path))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        what = f"not a question record ({type(exc).__name__}: {str(exc)[:200]})"
        raise UntrustedJSONError(what, str(path), fix) from None


def iter_records(run_dir: Path) -> list[QuestionRecord]:
    """Every record in a run directory, sorted by question id."""
    paths = sorted((run_dir / "questions").glob("*.json"))
    return sorted((read_record(p) for p in paths), key=lambda r: natural_key(r.question_id))


def natural_key(question_id: str) -> tuple[Any, ...]:
    """Sort key putting `conv-26:10` after `conv-26:9` (ids without a number tail last)."""
    head, _, tail = question_id.rpartition(":")
    return (head, int(tail), "") if tail.isdigit() else (question_id, -1, question_id)
