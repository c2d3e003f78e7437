"""The official judges: upstream's prompt, upstream's parameters, upstream's verdict rule.

`longmemeval_official` (LongMemEval `evaluate_qa.py`): one user message holding
`get_anscheck_prompt(type, question, answer, response, abstention='_abs' in id)` — the
per-type template filled by `str.format` with the question, the gold answer and the
answer; temperature 0, `max_tokens` 10; correct iff `yes` is in the lower-cased reply.

`mem0_locomo` (Mem0 `evaluation/metrics/llm_judge.py`, the LoCoMo "J" score): one user
message holding `ACCURACY_PROMPT.format(question=..., gold_answer=..., generated_answer=...)`;
temperature 0, `response_format={"type": "json_object"}`; correct iff the JSON `label`
is `CORRECT`. Category 5 is not judged (upstream skips it): a `skipped` judgement, no call.

Both send nothing else: no system message, no repair turn after a bad reply (upstream has
none; a bad Mem0 reply is `unparseable`). The values are passed to `str.format` as
upstream passes them, so braces inside an answer are never expanded. Every verdict
records the model used and the upstream file's SHA-256 (`prompt_hash`); the official
model, the endpoint and the file's URL go into run.json (`JudgeMeta`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench.errors import ConfigError, raise_if_permanent
from bench.judge.official import beam_judge, plus_judge
from bench.judge.official.base import OfficialBase
from bench.judge.official.beam_templates import beam_templates
from bench.judge.official.plus_templates import plus_templates
from bench.judge.official.registry import JudgeFile, read_judge_file
from bench.judge.official.templates import ABSTENTION, longmemeval_templates, mem0_prompt
from bench.judge.official.verdicts import longmemeval_verdict, mem0_verdict
from bench.judge.protocol import JudgeSpec
from bench.providers.base import CallOptions, ChatProvider, JsonSchema, Message
from bench.providers.cache import forget_reply, repeat_version
from bench.records import ERROR, OK, SKIPPED, UNPARSEABLE, Judgement
from bench.types import Question


class JsonObjectMode(JsonSchema):
    """`response_format={"type": "json_object"}` (JSON mode), sent where a schema would be."""

    def response_format(self) -> dict[str, object]:
        """The OpenAI JSON-mode body, as Mem0 sends it."""
        return {"type": "json_object"}


JSON_OBJECT = JsonObjectMode("json_object", {})


@dataclass(frozen=True)
class OfficialSpec:
    """What defines one official judge besides its template."""

    kind: str
    """The `judges.N.kind` that selects it."""
    file: str
    """Its registered upstream file (`bench.judge.official.registry`)."""
    official_model: str
    """The model upstream asks (a run may override it; the record says which was used)."""
    max_tokens: int | None
    """Upstream's completion cap; None where upstream sends none (the endpoint's is sent)."""
    json_object: bool
    """Upstream asks for JSON mode."""


LONGMEMEVAL = OfficialSpec(
    "longmemeval_official", "longmemeval-evaluate_qa.py", "gpt-4o-2024-08-06", 10, False
)
MEM0 = OfficialSpec("mem0_locomo", "mem0-llm_judge.py", "gpt-4o-mini", None, True)
BEAM = OfficialSpec(
    beam_judge.KIND, beam_judge.PROMPTS_FILE, beam_judge.OFFICIAL_MODEL, None, False
)
PLUS = OfficialSpec(
    plus_judge.KIND, plus_judge.PROMPT_FILE, plus_judge.OFFICIAL_MODEL, plus_judge.MAX_TOKENS, False
)
OFFICIAL_SPECS = {s.kind: s for s in (LONGMEMEVAL, MEM0, BEAM, PLUS)}
SCORE_ONLY_KINDS = frozenset({BEAM.kind})
"""Official judges that give scores, not a right/wrong verdict: never a primary judge."""
MEM0_SKIPPED_CATEGORY = 5


def longmemeval_prompt(templates: dict[str, str], question: Question, answer: str) -> str:
    """The filled template, or KeyError naming a question type upstream has none for."""
    key = ABSTENTION if "_abs" in question.question_id else question.question_type
    if key not in templates:
        raise KeyError(f"question type {key!r} has no upstream template")
    return templates[str(key)].format(question.question, question.gold, answer)


def mem0_filled(template: str, question: Question, answer: str) -> str:
    """`ACCURACY_PROMPT` filled by keyword, as Mem0's `evaluate_llm_judge` does."""
    return template.format(
        question=question.question, gold_answer=question.gold, generated_answer=answer
    )


class OfficialJudge(OfficialBase[str]):
    """One run of LongMemEval's or Mem0's official judge; `judge(question, answer)` never raises."""

    def __init__(
        self,
        spec: JudgeSpec,
        official: OfficialSpec,
        chat: ChatProvider,
        entry: JudgeFile,
        source: str,
        endpoint: str = "",
    ) -> None:
        self.kind = official.kind
        self.official_model = official.official_model
        self.official = official
        json_schema = JSON_OBJECT if official.json_object else None
        self.options = CallOptions(max_tokens=official.max_tokens, json_schema=json_schema)
        super().__init__(spec, chat, (entry,), source, endpoint)
        self._fill: Callable[[Question, str], str] = self._filler(source)

    def _filler(self, source: str) -> Callable[[Question, str], str]:
        if self.official is LONGMEMEVAL:
            templates = longmemeval_templates(source)
            return lambda q, a: longmemeval_prompt(templates, q, a)
        template = mem0_prompt(source)
        return lambda q, a: mem0_filled(template, q, a)

    def messages(self, question: Question, answer: str) -> list[Message]:
        """The single user message upstream sends."""
        return [{"role": "user", "content": self._fill(question, answer)}]

    def judge(self, question: Question, answer: str, repeat: int = 0) -> Judgement:
        """Upstream's verdict on `answer`; `skipped`, `error` or `unparseable` when none."""
        locomo = question.question_type is None
        if self.official is MEM0 and locomo and question.category == MEM0_SKIPPED_CATEGORY:
            return self.stamped(SKIPPED, error="category 5 is not judged by Mem0's judge")
        try:
            messages = self.messages(question, answer)
        except (KeyError, IndexError, ValueError) as exc:
            return self.stamped(ERROR, error=f"no upstream prompt: {exc}")
        version = repeat_version(self.version, repeat)
        try:
            result = self.chat.complete(messages, prompt_version=version, options=self.options)
        except Exception as exc:  # any failure is an error verdict, retried on resume
            raise_if_permanent(exc)
            return self.stamped(ERROR, error=f"judge call failed: {type(exc).__name__}: {exc}")
        if self.official is LONGMEMEVAL:
            verdict = longmemeval_verdict(result.text)
        else:
            try:
                verdict = mem0_verdict(result.text)
            except ValueError as exc:
                forget_reply(self.chat, messages, prompt_version=version, options=self.options)
                return self.stamped(UNPARSEABLE, raw=result.text, error=f"unparsable: {exc}")
        return self.stamped(OK, verdict=verdict, raw=result.text, cached=result.cached)


def build_official_judge(
    spec: JudgeSpec, chat: ChatProvider, endpoint: str
) -> OfficialJudge | beam_judge.BeamOfficialJudge | plus_judge.PlusOfficialJudge:
    """The official judge `cfg.kind` names, its template read from the checksummed file.

    ConfigError when the endpoint's temperature is not upstream's 0, or when the file no
    longer has the shape the template is read from.
    """
    cfg = spec.config
    official = OFFICIAL_SPECS[cfg.kind]
    if cfg.endpoint.temperature != 0:
        raise ConfigError(
            f"judges.{cfg.judge_id}.endpoint.temperature={cfg.endpoint.temperature}: "
            f"{cfg.kind} asks at temperature 0 as upstream; remove the override"
        )
    if official is BEAM:
        return _build_beam(spec, chat, endpoint)
    if official is PLUS:
        return _build_plus(spec, chat, endpoint)
    entry, source = read_judge_file(official.file)
    try:
        return OfficialJudge(spec, official, chat, entry, source, endpoint)
    except ValueError as exc:
        raise ConfigError(f"judges.{cfg.judge_id}: {entry.source}: {exc}") from None


def _build_beam(spec: JudgeSpec, chat: ChatProvider, endpoint: str) -> beam_judge.BeamOfficialJudge:
    """BEAM's judge from its two checksummed files; ConfigError when a shape changed."""
    prompts, prompts_source = read_judge_file(beam_judge.PROMPTS_FILE)
    metrics, metrics_source = read_judge_file(beam_judge.METRICS_FILE)
    try:
        templates = beam_templates(prompts_source, metrics_source)
    except ValueError as exc:
        raise ConfigError(f"judges.{spec.config.judge_id}: {metrics.source}: {exc}") from None
    return beam_judge.BeamOfficialJudge(spec, chat, (prompts, metrics), templates, endpoint)


def _build_plus(spec: JudgeSpec, chat: ChatProvider, endpoint: str) -> plus_judge.PlusOfficialJudge:
    """LoCoMo-Plus's judge from its two checksummed files; ConfigError when a shape changed."""
    cfg = spec.config
    prompt, prompt_source = read_judge_file(plus_judge.PROMPT_FILE)
    script, script_source = read_judge_file(plus_judge.JUDGE_FILE)
    try:
        templates = plus_templates(prompt_source, script_source)
    except ValueError as exc:
        raise ConfigError(f"judges.{cfg.judge_id}: {script.source}: {exc}") from None
    expected = {"model": PLUS.official_model, "temperature": 0.0, "max_tokens": PLUS.max_tokens}
    got = {k: templates.defaults[k] for k in expected}
    if got != expected:
        raise ConfigError(
            f"judges.{cfg.judge_id}: {script.source}: defaults {got}, expected {expected}"
        )
    return plus_judge.PlusOfficialJudge(spec, chat, (prompt, script), templates, endpoint)
