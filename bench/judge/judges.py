"""LLM judges: a versioned prompt, one chat call, a strictly parsed JSON verdict.

The judge sees (LoCoMo, category 4, abridged)::

    system: You grade answers to questions about a long conversation ... Reply with one
            JSON object ... {"correct": true, "reasoning": "<one short sentence>"}
    user:   Question: What did Ilse sell last spring?
            Gold answer: Her old bicycle
            Model's answer: an old bicycle
            Grading rule: The answer is correct if it refers to the same thing ...

and must reply `{"correct": true, "reasoning": "..."}` (the verdict first, then at most
`REASONING_MAX_CHARS` characters of reasoning); when the endpoint honours JSON Schemas
(`json_schema: true`) the reply is constrained to `VERDICT_SCHEMA`. Parsing is
strict: the reply is one JSON object (optionally inside a single ```json fence) whose
`correct` is a JSON boolean or the string "true"/"false". An unparsable reply is asked
again (the bad reply and a one-line correction appended) up to `attempts` asks in all;
still unparsable, it is a `Judgement(status="unparseable")` holding the attempts and the
last reply, kept on resume (only `scoring.rejudge=true` asks again). A failed call is a
`Judgement(status="error")`, retried on the next run. Neither is ever counted as
incorrect. Unparsable replies are deleted from the response cache (`forget_reply`) so a
rejudge really asks the server. Token and call accounting lives in the provider layer
(`ProviderSet.accounting()`), not here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from bench.config import JudgeConfig
from bench.end_tokens import strip_end_tokens
from bench.errors import ConfigError, raise_if_permanent
from bench.judge.judge_prompt import JudgePrompt, fill, load_judge_prompt
from bench.judge.protocol import Judge, JudgeIdentity, JudgeSpec, judge_run_ids
from bench.providers.base import (
    CallOptions,
    ChatProvider,
    JsonSchema,
    Message,
    supports_json_schema,
)
from bench.providers.cache import forget_reply, repeat_version
from bench.records import ERROR, OK, SKIPPED, UNPARSEABLE, ArmResult, Judgement
from bench.runmeta import JudgeMeta
from bench.scoring.errata import corrected_question
from bench.scoring.judge_runs import group_verdict, run_version
from bench.types import Question
from bench.untrusted import UntrustedJSONError, parse_json

NO_GOLD = "(none: the conversation does not contain this information)"
REASONING_MAX_CHARS = 200
"""Bound on the verdict's `reasoning` (one short sentence): a small judge cannot loop in it."""
VERDICT_SCHEMA = JsonSchema(
    "verdict",
    {
        "type": "object",
        "properties": {
            "correct": {"type": "boolean"},
            "reasoning": {"type": "string", "maxLength": REASONING_MAX_CHARS},
        },
        "required": ["correct", "reasoning"],
        "additionalProperties": False,
    },
)
"""`correct` first, so the verdict is written before any reasoning; `reasoning` bounded."""
REPAIR = (
    'That reply is not a verdict. Reply with exactly one JSON object: {"correct": true, '
    '"reasoning": "<one short sentence>"} or {"correct": false, "reasoning": "..."}.'
)
_LEADING_VERDICT = re.compile(r'\A\s*\{\s*"correct"\s*:\s*(true|false)\s*[,}]')


def parse_verdict(text: str) -> bool:
    """The `correct` field of a JSON verdict; raise ValueError on anything not strictly valid.

    A chat-template end token and what follows it are dropped first (`bench.end_tokens`).
    One exception to strictness: a reply that is not complete JSON but opens with
    `{"correct": true,` or `{"correct": false,` (the schema's first field, then a comma)
    gives that verdict — the model committed to it before its reasoning was cut off.

    >>> parse_verdict('{"correct": "false", "reasoning": "another date"}')
    False
    >>> parse_verdict('{"correct": true, "reasoning": "same day, written as')
    True
    """
    body = strip_end_tokens(text).strip()
    if body.startswith("```"):
        lines = body.splitlines()
        if len(lines) < 3 or lines[-1].strip() != "```":
            raise ValueError("unterminated code fence")
        body = "\n".join(lines[1:-1]).strip()
    try:  # bench.untrusted: a reply nested 100,000 deep is refused, not a RecursionError
        data = parse_json(body, "judge reply", allow_nan=True)
    except UntrustedJSONError as exc:
        leading = _LEADING_VERDICT.match(body)
        if leading:
            return leading.group(1) == "true"
        raise ValueError(f"not a JSON object: {exc.what}") from None
    if not isinstance(data, dict) or "correct" not in data:
        raise ValueError('JSON verdict has no "correct" field')
    value = data["correct"]
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f'"correct" must be true or false, got {value!r}')


def locomo_rubric(question: Question) -> str:
    """LoCoMo: `adversarial` for category 5, `temporal` for category 2, else `default`."""
    return {5: "adversarial", 2: "temporal"}.get(question.category, "default")


def longmemeval_rubric(question: Question) -> str:
    """LongMemEval: `abstention` when question_id ends in `_abs`, else the question type."""
    if question.question_id.endswith("_abs"):
        return "abstention"
    return question.question_type or "default"


RUBRIC_CHOOSERS: dict[str, Callable[[Question], str]] = {
    "locomo": locomo_rubric,
    "longmemeval": longmemeval_rubric,
}
REQUIRED_RUBRICS = {"locomo": ("adversarial",), "longmemeval": ("abstention",)}


class LLMJudge:
    """armbench's LLM judge, one run: `judge(question, answer)` returns a Judgement, never raises.

    Made whole by its constructor (the `bench.judge.protocol.Judge` seam): `spec` names
    the configuration, `endpoint` the public base URL, and the run comes from `spec`.
    """

    def __init__(
        self,
        spec: JudgeSpec,
        prompt: JudgePrompt,
        chat: ChatProvider,
        rubric_for: Callable[[Question], str],
        endpoint: str = "",
    ) -> None:
        self.spec = spec
        self.prompt = prompt
        self.chat = chat
        self.rubric_for = rubric_for
        self.endpoint = endpoint
        self.judge_id = spec.judge_id or spec.config.judge_id
        self.attempts = max(1, spec.attempts)
        self.options = (
            CallOptions(json_schema=VERDICT_SCHEMA) if supports_json_schema(chat) else None
        )
        self.model: str = chat.model
        self.prompt_hash = prompt.sha256
        self.version = run_version(prompt.version, spec.run)
        """The response-cache version of this judge's calls (a run k >= 2 adds `#run<k>`)."""
        self.meta = JudgeMeta(
            judge_id=spec.config.judge_id,
            model=self.model,
            prompt_hash=self.prompt_hash,
            kind=spec.config.kind,
            endpoint=endpoint or None,
            prompt_source=prompt.path,
            runs=1,
        )

    def with_run(self, judge_id: str, run: int) -> LLMJudge:
        """The same judge as run `run` (its own cache key), stored under `judge_id`."""
        spec = replace(self.spec, judge_id=judge_id, run=run)
        return LLMJudge(spec, self.prompt, self.chat, self.rubric_for, self.endpoint)

    def messages(self, question: Question, answer: str) -> list[Message]:
        """The system and user messages the judge model sees for this answer."""
        values = {
            "question": question.question,
            "gold": NO_GOLD if question.gold is None else str(question.gold),
            "answer": answer,
            "trap": question.adversarial_answer or "",
            "question_date": question.question_date or "unknown",
        }
        values["rubric"] = fill(self.prompt.rubric(self.rubric_for(question)), values)
        return [
            {"role": "system", "content": self.prompt.system},
            {"role": "user", "content": fill(self.prompt.user, values)},
        ]

    def judge(self, question: Question, answer: str, repeat: int = 0) -> Judgement:
        """Ask the model (again after an unparsable reply, up to `attempts` asks).

        A failed call is an `error` verdict (retried on resume); replies still unparsable
        after `attempts` asks make an `unparseable` verdict. Unparsable replies are dropped
        from the provider's response cache, so a rejudge asks the server again. `repeat`
        r >= 1 (a `repeats=N` draw) is cached under its own key.
        """
        messages = self.messages(question, answer)
        version = repeat_version(self.version, repeat)
        problem, last = "", ""
        for attempt in range(1, self.attempts + 1):
            try:
                result = self.chat.complete(messages, prompt_version=version, options=self.options)
            except Exception as exc:  # any failure is an error verdict, retried on resume
                raise_if_permanent(exc)
                return self._error(f"judge call failed: {type(exc).__name__}: {exc}", None)
            try:
                verdict = parse_verdict(result.text)
            except ValueError as exc:
                forget_reply(self.chat, messages, prompt_version=version, options=self.options)
                problem, last = str(exc), result.text
                messages = [
                    *messages,
                    {"role": "assistant", "content": result.text},
                    {"role": "user", "content": REPAIR},
                ]
                continue
            return Judgement(
                judge_id=self.judge_id,
                status=OK,
                verdict=verdict,
                model=self.model,
                prompt_hash=self.prompt_hash,
                raw=result.text,
                cached=result.cached,
                attempts=attempt,
            )
        message = f"unparsable verdict after {self.attempts} attempt(s): {problem}"
        return replace(self._error(message, last), status=UNPARSEABLE, attempts=self.attempts)

    def _error(self, message: str, raw: str | None, cached: bool = False) -> Judgement:
        line = (message.splitlines() or ["error"])[0][:500]
        return Judgement(
            judge_id=self.judge_id,
            status=ERROR,
            model=self.model,
            prompt_hash=self.prompt_hash,
            raw=raw,
            error=line,
            cached=cached,
        )


def build_judge(
    cfg: JudgeConfig, chat: ChatProvider, attempts: int = 2, endpoint: str = ""
) -> LLMJudge:
    """A judge of kind `locomo` or `longmemeval` reading its versioned prompt file (run 1)."""
    if attempts < 1:
        raise ConfigError(f"scoring.judge_attempts={attempts}: must be at least 1")
    chooser = RUBRIC_CHOOSERS.get(cfg.kind)
    if chooser is None:
        known = ", ".join(sorted(RUBRIC_CHOOSERS))
        raise ConfigError(f"judges.{cfg.judge_id}.kind={cfg.kind}: unknown; use one of {known}")
    prompt = load_judge_prompt(cfg.prompt, REQUIRED_RUBRICS[cfg.kind])
    return LLMJudge(JudgeSpec(cfg, attempts), prompt, chat, chooser, endpoint)


def needs_judgement(result: ArmResult, judge: JudgeIdentity, *, rejudge: bool = False) -> bool:
    """True unless the result holds an `ok`, `unparseable` or `skipped` verdict by this judge.

    Only verdicts by this judge's model and prompt hash count; an `unparseable` one was
    asked `attempts` times already, so only `rejudge` asks again. An imported result
    (`bench.published`) is never judged: its verdicts are the publisher's.
    """
    if result.status != OK or result.answer is None or result.imported is not None:
        return False
    if rejudge:
        return True
    old = result.judgements.get(judge.judge_id)
    return not (
        old is not None
        and old.status in (OK, UNPARSEABLE, SKIPPED)
        and old.model == judge.model
        and old.prompt_hash == judge.prompt_hash
    )


def judge_model_warning(cfg: JudgeConfig, answerer_model: str) -> str | None:
    """A warning line when a judge grades answers written by its own model, else None."""
    if cfg.endpoint.model != answerer_model:
        return None
    return (
        f"judge {cfg.judge_id} uses the answering model {answerer_model}; self-judging inflates "
        "accuracy — set judges.N.endpoint.model to a different model"
    )


def verdict_outcome(
    result: ArmResult, judge_id: str, judges: Sequence[JudgeIdentity] | None = None
) -> bool | None:
    """The primary judge's verdict as the binary outcome; None while it is missing or errored.

    A judge with several runs (`<id>#<k>`) gives the majority of its runs
    (`bench.scoring.judge_runs.group_verdict`); `judges` (the built judges) names the
    runs configured now.
    """
    ids = None if judges is None else judge_run_ids(judges, judge_id)
    return group_verdict(result.judgements, judge_id, ids)


def with_corrected_judgements(
    result: ArmResult,
    question: Question,
    judges: Sequence[Judge],
    primary: str | None,
    rejudge: bool,
) -> ArmResult:
    """Judge the answer against the corrected gold (affected questions only).

    A verdict already present by the same judge model and prompt is kept unless
    `rejudge`; with a primary judge its corrected verdict sets `correct_corrected`.
    """
    fixed = corrected_question(question)
    if fixed is None or result.status != OK or result.answer is None or not judges:
        return result
    verdicts = dict(result.corrected_judgements)
    for judge in judges:
        old = verdicts.get(judge.judge_id)
        fresh = (
            old is not None
            and old.status == OK
            and old.model == judge.model
            and old.prompt_hash == judge.prompt_hash
        )
        if rejudge or not fresh:
            verdicts[judge.judge_id] = judge.judge(fixed, result.answer)
    updated = replace(result, corrected_judgements=verdicts)
    if primary:
        ids = judge_run_ids(judges, primary)
        updated = replace(updated, correct_corrected=group_verdict(verdicts, primary, ids))
    return updated
