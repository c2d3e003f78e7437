"""`beam_official`: BEAM's rubric judge and event-equivalence check, asked as upstream asks.

For each answer to a BEAM question (one with rubric items), every rubric item is judged
on its own: one user message, upstream's template with `<rubric_item>` and then
`<llm_response>` replaced (`BeamTemplates.rubric_prompt`), at temperature 0; the reply's
JSON `score` is read as upstream reads it (`verdicts.beam_item_score`). For event
ordering, each reply line is compared with the unused reference items in order by
upstream's yes/no question (a system and a user message); the arithmetic (rubric mean
with upstream's `int()` cast and with 0.5 kept, precision/recall/F1, Kendall τ-b) is
`bench.scoring.beam.judge_question`. Every call goes through the judge's chat provider,
so it is cached (one cache entry per item or comparison) and counted like any judge call.

The judgement carries the figures in `scores` and no binary verdict (`verdict` None):
BEAM defines scores, not a right/wrong label, so this judge cannot be a run's primary
judge. A failed call is an `error` judgement (asked again on resume; the calls already
answered come from the cache); a reply upstream's parser cannot read is `unparseable`
(upstream falls back to the `json_repair` package, which armbench does not run, or
stops), its reply dropped from the cache. A question without rubric is `skipped`.

One upstream call is not made: `evaluate_event_ordering` first asks the model to split
the reply into facts and then discards the result (it overwrites it with the reply's
lines), so the call cannot change a score.
"""

from __future__ import annotations

import json

from bench.errors import raise_if_permanent
from bench.judge.official.base import OfficialBase
from bench.judge.official.beam_templates import FLOAT_ABILITIES, BeamTemplates
from bench.judge.official.verdicts import beam_item_score, beam_same_event
from bench.judgement import JudgeStatus
from bench.providers.base import CallOptions, Message
from bench.providers.cache import forget_reply, repeat_version
from bench.records import ERROR, OK, SKIPPED, UNPARSEABLE, Judgement
from bench.scoring.beam import judge_question
from bench.types import Question

KIND = "beam_official"
PROMPTS_FILE = "beam-prompts.py"
METRICS_FILE = "beam-compute_metrics.py"
OFFICIAL_MODEL = "gpt-4.1-mini"
"""Upstream's `gpt_llm` (`src/llm.py` at the pinned commit: gpt-4.1-mini, temperature 0)."""


class _NoScore(Exception):
    """A call failed (`status` error) or its reply is unreadable (`status` unparseable)."""

    def __init__(self, status: JudgeStatus, message: str, raw: str | None = None) -> None:
        super().__init__(message)
        self.status, self.raw = status, raw


class _Asker:
    """The `BeamJudge` of one answer: each item or comparison is one cached call."""

    def __init__(self, judge: BeamOfficialJudge, ability: str, version: str) -> None:
        self.judge, self.version = judge, version
        self.keep_float = ability in FLOAT_ABILITIES
        self.replies: list[str] = []
        self.items: list[float] = []
        self.all_cached = True

    def _ask(self, messages: list[Message]) -> str:
        chat, options = self.judge.chat, self.judge.options
        try:
            result = chat.complete(messages, prompt_version=self.version, options=options)
        except Exception as exc:  # any failure is an error judgement, retried on resume
            raise_if_permanent(exc)
            raise _NoScore(ERROR, f"judge call failed: {type(exc).__name__}: {exc}") from None
        self.replies.append(result.text)
        self.all_cached = self.all_cached and result.cached
        return result.text

    def _forget(self, messages: list[Message]) -> None:
        chat, options = self.judge.chat, self.judge.options
        forget_reply(chat, messages, prompt_version=self.version, options=options)

    def score_item(self, rubric_item: str, response: str) -> float:
        """Upstream's rubric judge on one item (the judged score, before upstream's cast)."""
        prompt = self.judge.templates.rubric_prompt(rubric_item, response)
        messages: list[Message] = [{"role": "user", "content": prompt}]
        reply = self._ask(messages)
        try:
            score = beam_item_score(reply, self.keep_float)
        except ValueError as exc:
            self._forget(messages)
            raise _NoScore(UNPARSEABLE, f"unparsable rubric score: {exc}", reply) from None
        self.items.append(score)
        return score

    def same_event(self, reference: str, system: str) -> bool:
        """Upstream's yes/no question: the reference item first, the reply line second."""
        templates = self.judge.templates
        messages: list[Message] = [
            {"role": "system", "content": templates.equivalence_system},
            {"role": "user", "content": templates.equivalence_user_text(reference, system)},
        ]
        return beam_same_event(self._ask(messages))


class BeamOfficialJudge(OfficialBase[BeamTemplates]):
    """One run of BEAM's official judge; `judge(question, answer)` never raises."""

    kind = KIND
    official_model = OFFICIAL_MODEL
    options = CallOptions()

    def judge(self, question: Question, answer: str, repeat: int = 0) -> Judgement:
        """Every rubric item (and event comparison) judged; the figures in `scores`."""
        if not question.rubric:
            return self.stamped(SKIPPED, error="not a BEAM question (no rubric items)")
        asker = _Asker(self, question.question_type or "", repeat_version(self.version, repeat))
        try:
            scores: dict[str, object] = judge_question(question, answer, asker)
        except _NoScore as exc:
            return self.stamped(exc.status, raw=exc.raw, error=str(exc))
        scores["rubric_items"] = asker.items
        raw = json.dumps(asker.replies, ensure_ascii=False)
        return self.stamped(OK, scores=scores, raw=raw, cached=asker.all_cached)
