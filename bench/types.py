"""Typed values that flow through the pipeline: dataset items, contexts and answers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol


@dataclass(frozen=True)
class Turn:
    """One utterance of a conversation, with any shared image rendered as text."""

    speaker: str
    """Name of the speaker."""
    text: str
    """What was said."""
    dia_id: str
    """Dataset turn id (e.g. `D1:3`), the unit evidence and `source_ids` refer to."""
    session: int
    """1-based index of the session the turn belongs to."""
    image_caption: str | None = None
    """Caption of an image shared in the turn; None when there is none."""

    def render(self) -> str:
        """The turn as the models see it: `Speaker: text [shares a photo: caption]`."""
        line = f"{self.speaker}: {self.text}".rstrip()
        if self.image_caption:
            line += f" [shares a photo: {self.image_caption}]"
        return line


@dataclass(frozen=True)
class Session:
    """A dated session: the turns spoken in one sitting."""

    index: int
    """1-based session number, in conversation order."""
    date_time: str
    """The session's date/time as the dataset writes it."""
    turns: tuple[Turn, ...]
    """The session's turns in spoken order."""

    def header(self) -> str:
        """`[Session <n> — <date>]`, the header every arm uses for this session."""
        return f"[Session {self.index} — {self.date_time}]"


@dataclass(frozen=True)
class Correction:
    """A published audit's verdict on one question's answer key (LoCoMo errata)."""

    audit_id: str
    """The audit's own id, `locomo_<conversation index>_qa<0-based question index>`."""
    error_type: str
    """`WRONG_CITATION` (evidence only) or a kind of wrong gold (HALLUCINATION, ...)."""
    gold: str | None
    """The corrected gold answer (the official one when only the citation is wrong)."""
    evidence: tuple[str, ...]
    """The corrected evidence ids."""

    @property
    def score_affected(self) -> bool:
        """True when the audit changes the gold answer, not only the evidence."""
        return self.error_type != "WRONG_CITATION"


class AskedQuestion(Protocol):
    """What an arm is asked: the question-side fields only (the arm protocol's type).

    Never the gold answer, evidence, category, adversarial answer or any other key field:
    arms receive a `SealedQuestion` (`Question.sealed`), which has no such field.
    """

    @property
    def question_id(self) -> str:
        """Dataset-unique question id."""
        ...

    @property
    def conversation_id(self) -> str:
        """Id of the conversation the question is asked about."""
        ...

    @property
    def question(self) -> str:
        """The question text."""
        ...

    @property
    def question_date(self) -> str | None:
        """Date the question is asked on; None when undated."""
        ...


@dataclass(frozen=True)
class SealedQuestion:
    """The sealed view of a `Question` that arms receive: no gold, evidence or category."""

    question_id: str
    """Dataset-unique question id, e.g. `conv-26:10`."""
    conversation_id: str
    """Id of the conversation the question is asked about."""
    question: str
    """The question text."""
    question_date: str | None = None
    """Date the question is asked on (LongMemEval); None when undated."""


@dataclass(frozen=True)
class Question:
    """One benchmark question with its gold answer and evidence."""

    question_id: str
    """Dataset-unique question id, e.g. `conv-26:10`."""
    conversation_id: str
    """Id of the conversation the question is asked about."""
    question: str
    """The question text."""
    category: int
    """The dataset's question category (LoCoMo 1-5; 5 is adversarial)."""
    gold: str | None
    """The gold answer; None for LoCoMo category 5."""
    evidence: tuple[str, ...] = ()
    """Dia_ids of the turns the gold answer rests on."""
    adversarial_answer: str | None = None
    """LoCoMo category 5 trap answer; None otherwise."""
    question_type: str | None = None
    """LongMemEval question type; None for LoCoMo."""
    question_date: str | None = None
    """Date the question is asked on (LongMemEval); None when undated."""
    is_abstention: bool = False
    """True when the right answer is to abstain (LongMemEval `_abs` questions)."""
    stale_answer: str | None = None
    """A superseded value (supersession fixtures): it must not reach the context."""
    correction: Correction | None = None
    """The answer-key audit's entry for this question, when `dataset.errata` is on."""
    rubric: tuple[str, ...] = ()
    """BEAM: the rubric items a judge checks one by one (empty for other datasets)."""
    difficulty: str | None = None
    """BEAM: the question's difficulty as the dataset writes it (`easy`, `medium`, ...)."""

    def sealed(self) -> SealedQuestion:
        """What an arm may see of this question: id, conversation, text and date."""
        return SealedQuestion(
            self.question_id, self.conversation_id, self.question, self.question_date
        )

    @property
    def file_stem(self) -> str:
        """The record's file name without extension (`bench.paths.safe_name` of the id)."""
        from bench.paths import safe_name

        return safe_name(self.question_id)

    @property
    def legacy_file_stem(self) -> str:
        """The name records had before `safe_name` (read, never written, by resumes)."""
        return "".join(c if c.isalnum() or c in "-_." else "_" for c in self.question_id)


@dataclass(frozen=True)
class Conversation:
    """A conversation (or a LongMemEval haystack) and the questions asked about it."""

    conversation_id: str
    """Dataset id of the conversation (or haystack)."""
    speakers: tuple[str, ...]
    """The speakers' names."""
    sessions: tuple[Session, ...]
    """The sessions in order."""
    questions: tuple[Question, ...] = ()
    """The questions asked about this conversation."""

    def sealed(self) -> Conversation:
        """What an arm may see of this conversation: everything but its questions."""
        return replace(self, questions=()) if self.questions else self

    def turns(self) -> list[Turn]:
        """All turns in session order."""
        return [t for s in self.sessions for t in s.turns]

    def transcript(self) -> str:
        """Every session as a dated header followed by its turns, in session order.

        The whole haystack as the raw arm shows it, and what coverage is measured against.
        """
        lines: list[str] = []
        for session in self.sessions:
            lines.append(session.header())
            lines.extend(turn.render() for turn in session.turns)
        return "\n".join(lines)

    def session(self, index: int) -> Session:
        """The session with this 1-based index."""
        for s in self.sessions:
            if s.index == index:
                return s
        raise KeyError(index)


@dataclass(frozen=True)
class ErrataSource:
    """Where an applied answer-key audit came from and how much of the key it changes."""

    path: str
    """The audit file applied, as resolved (cache, download or given path)."""
    sha256: str
    """SHA-256 of the audit file's bytes."""
    entries: int
    """Audit entries applied (questions outside a limited dataset are not counted)."""
    score_affected: int
    """Entries whose gold answer changes (the rest only correct the evidence)."""


@dataclass(frozen=True)
class HubSource:
    """The Hugging Face Hub file a dataset was read from, at a pinned commit."""

    repo: str
    """The Hub dataset (`dataset.hf_repo`)."""
    revision: str
    """The commit it was read at (`dataset.hf_revision`, 40 hex digits)."""
    file: str
    """The file inside the repo (`longmemeval_s_cleaned.json`, `data/100K-…parquet`)."""
    sha256_verified: bool
    """True when its SHA-256 was checked against `dataset.sha256`; False when none was
    pinned and the hash was only recorded (trust on first use)."""


@dataclass(frozen=True)
class SampleInfo:
    """A seeded stratified sample of a dataset's questions (`limit.per_category` / `fraction`)."""

    seed: int
    """The sample's seed (`limit.seed`)."""
    per_category: int | None
    """At most this many questions per category, or None."""
    fraction: float | None
    """ceil(fraction x n) questions of each category's n, or None."""
    strata: tuple[tuple[str, int, int], ...]
    """(category key, questions kept, questions offered) per category, keys sorted."""
    ids_sha256: str
    """SHA-256 of the kept question ids, sorted and newline-joined: the sample's fingerprint."""

    @property
    def kept(self) -> int:
        """Questions in the sample."""
        return sum(k for _, k, _ in self.strata)

    @property
    def offered(self) -> int:
        """Questions the sample was drawn from."""
        return sum(n for _, _, n in self.strata)

    def to_json(self) -> dict[str, Any]:
        """The `sample` object of run.json."""
        return {
            "method": "stratified by category, sha256(seed:question_id) order",
            "seed": self.seed,
            "per_category": self.per_category,
            "fraction": self.fraction,
            "questions": self.kept,
            "of": self.offered,
            "strata": {key: {"kept": k, "of": n} for key, k, n in self.strata},
            "ids_sha256": self.ids_sha256,
        }


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset: its conversations plus where it came from."""

    name: str
    """Dataset name (`dataset.name` in the config)."""
    path: str
    """File the dataset was loaded from."""
    sha256: str
    """SHA-256 of that file, recorded in the run's identity."""
    conversations: tuple[Conversation, ...]
    """The conversations in file order."""
    errata: ErrataSource | None = None
    """The answer-key audit applied to the questions, when `dataset.errata` is on."""
    sample: SampleInfo | None = None
    """The stratified sample drawn (`limit.per_category` / `limit.fraction`), None if none."""
    hub: HubSource | None = None
    """The Hub file at its pinned commit, when the data came from the Hub; None otherwise."""

    def questions(self) -> list[Question]:
        """Every question in conversation order."""
        return [q for c in self.conversations for q in c.questions]


@dataclass(frozen=True)
class ContextItem:
    """One retrieved item: its rendered text, score and the turns it came from."""

    text: str
    """The item as rendered into the context block."""
    score: float = 0.0
    """The arm's retrieval score (higher is better; 0.0 when unscored)."""
    source_ids: tuple[str, ...] = ()
    """Dia_ids of the turns the item came from."""
    kind: str = "turn"
    """What the item is: `turn`, `chunk` (rag) or `fact` (neuromorphic)."""


@dataclass(frozen=True)
class ServiceAnswer:
    """A memory service's own answer to a question (a live arm's optional answer endpoint)."""

    text: str
    """The answer the service returned."""
    ms: float
    """Wall time of the answer call, in milliseconds (recorded as the answer latency)."""
    source: str
    """Who answered, as the service reported it (or `service` when it reports nothing)."""


@dataclass(frozen=True)
class Context:
    """What an arm retrieved for a question, rendered as the block the answerer sees."""

    text: str
    """The rendered context block the answerer sees."""
    items: tuple[ContextItem, ...] = ()
    """The retrieved items behind `text`, best first."""
    truncated: bool = False
    """True when the context was cut to fit the token budget."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Arm-specific extras (e.g. raw's `whole_transcript`)."""
    unranked_source_ids: tuple[str, ...] = ()
    """Whole-context arms (raw) rank nothing: the turns their context holds, most
    recent first (the order truncation keeps them in)."""
    write_path: str | None = None
    """How a live arm wrote the memories searched (`capture` or `remember`); it changes
    what is measured, so it is copied into every record. None for in-process arms."""
    service_answer: ServiceAnswer | None = None
    """The service's own answer, when a live arm asked its answer endpoint; the harness
    then records it instead of asking the configured answerer."""

    def ranked_source_ids(self) -> list[str]:
        """Source unit ids, best first, without repeats.

        The items' ids in rank order (a window or fact contributes its turns in their
        own order), else the unranked ids of a whole-context arm.
        """
        if self.items:
            return ranked_ids(item.source_ids for item in self.items)
        return list(self.unranked_source_ids)


def ranked_ids(source_ids: Iterable[Sequence[str]]) -> list[str]:
    """The source ids of ranked items, best first, each at its first place.

    A window or fact contributes its turns in their own order; a turn two items share
    keeps the better item's place.
    """
    return list(dict.fromkeys(sid for ids in source_ids for sid in ids))


@dataclass(frozen=True)
class Usage:
    """Token usage of one model call (0 when the provider reports none)."""

    prompt_tokens: int = 0
    """Input tokens the provider reported."""
    completion_tokens: int = 0
    """Output tokens the provider reported (a reasoning model's hidden reasoning included)."""
    reasoning_tokens: int = 0
    """Of `completion_tokens`, those spent on hidden reasoning
    (`usage.completion_tokens_details.reasoning_tokens`); billed as output tokens."""


@dataclass(frozen=True)
class ChatResult:
    """A chat completion: the text, tool calls, usage and how it was produced."""

    text: str
    """The completion's text."""
    model: str
    """The model that produced it."""
    usage: Usage = Usage()
    """Token usage of the call."""
    finish_reason: str = "stop"
    """Why generation stopped, as the provider reported it (`stop`, `length`, ...)."""
    tool_calls: tuple[dict[str, Any], ...] = ()
    """Tool calls the model requested, in the provider's dict form."""
    cached: bool = False
    """True when the result came from the response cache."""
    latency_ms: float = 0.0
    """Wall time of the call in milliseconds."""
