"""One arm, one question: retrieve → answer → score → judge, as typed steps."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from bench.answer.answer_prompt import AnswerPrompt, postprocess
from bench.answer.context_fit import usable
from bench.answer.repeat_plan import RepeatPlan
from bench.errors import ProviderError
from bench.judge.judges import needs_judgement, verdict_outcome, with_corrected_judgements
from bench.judge.protocol import Judge
from bench.providers.base import CallOptions, ChatProvider
from bench.providers.cache import repeat_version
from bench.records import OK, ArmResult
from bench.scoring.beam import offline_scores as beam_offline_scores
from bench.scoring.errata import with_corrected_scores
from bench.scoring.locomo import f1_outcome_name, outcome_from_f1, score_answer
from bench.scoring.miss import evidence_retrieved, miss_from
from bench.scoring.reach import gold_token_recall
from bench.scoring.rules import Outcome
from bench.tokens import TokenCounter
from bench.types import ChatResult, Context, Question

MAX_RETRIEVED_IDS = 50


@dataclass(frozen=True)
class AnswerStep:
    """Everything shared by every arm's answer: prompt, answerer, scoring and judges."""

    prompt: AnswerPrompt
    """The answer-format prompt every arm is asked with."""
    answerer: ChatProvider
    """The model that writes the answers."""
    tokens: TokenCounter
    """Counts `context_tokens`."""
    f1_threshold: float
    """Official F1 at or above which an answer is correct when no primary judge runs."""
    judges: tuple[Judge, ...] = ()
    """The LLM judges run on every answer."""
    primary_judge: str | None = None
    """Judge id whose verdict becomes `correct`; None means the F1 rule."""
    save_context: bool = False
    """Store the rendered context in each `ArmResult`."""
    repeats: RepeatPlan = RepeatPlan()
    """What `repeats=N` re-draws (bench/answer/repeats.py); a single draw by default."""
    options: CallOptions | None = None
    """Completion cap and stop sequences sent with every answer."""
    window: int | None = None
    """Tokens one request may use on the answerer's server; None skips the check."""
    truncate_to_fit: bool = False
    """Cut a context that would overflow `window` (recorded) instead of failing the answer."""
    budgets: tuple[int, ...] = ()
    """Context budgets every arm is also answered at (bench/run/budgets.py); none by default."""

    def answer(
        self, question: Question, context: Context, retrieve_ms: float, repeat: int = 0
    ) -> ArmResult:
        """Ask the answerer with this context, post-process, score; errors raise.

        `repeat` r >= 1 is cached under its own key (`repeat_version`).
        """
        if context.service_answer is None:
            text, cut = self._fit(question, context.text)
        else:
            text, cut = context.text, 0
        reply, latency_ms = self._reply(question, context, text, repeat)
        answer = postprocess(reply.text)
        if not answer:
            raise ProviderError(
                f"{reply.model}: empty answer (finish_reason={reply.finish_reason})"
            )
        scores = score_answer(answer, question)
        if (reachable := gold_token_recall(question.gold, context.text)) is not None:
            scores["gold_token_recall"] = round(reachable, 4)
        if question.stale_answer:
            scores["stale_in_context"] = question.stale_answer.lower() in context.text.lower()
        scores.update(beam_offline_scores(question, answer, context.text))
        found = evidence_retrieved(question.evidence, context.ranked_source_ids())
        correct = outcome_from_f1(scores, question, self.f1_threshold)
        result = ArmResult(
            status=OK,
            answer=answer,
            raw_answer=reply.text,
            correct=correct,
            evidence_retrieved=found,
            miss=miss_from(found, correct),
            outcome=f1_outcome_name(self.f1_threshold),
            scores=scores,
            context_tokens=self.tokens.count(text),
            tokenizer=self.tokens.name,
            context_truncated=context.truncated or cut > 0,
            context_cut_tokens=cut or None,
            truncated=True if reply.finish_reason == "length" else None,
            latency_ms=round(latency_ms, 3),
            retrieve_ms=round(retrieve_ms, 3),
            retrieved_ids=_source_ids(context),
            usage=reply.usage,
            cached=reply.cached,
            answerer=reply.model,
            context=context.text if self.save_context else None,
            write_path=context.write_path,
            answer_path=_answer_path(context),
        )
        return with_corrected_scores(result, question, self.f1_threshold)

    def _fit(self, question: Question, text: str) -> tuple[str, int]:
        """The context to send and the tokens cut from it to fit `window` (see context_fit).

        Without `truncate_to_fit` a prompt that cannot fit is never sent: ProviderError.
        """
        if self.window is None:
            return text, 0
        cap = self.options.max_tokens or 0 if self.options else 0
        messages = self.prompt.messages(question.question, text)
        need = sum(self.tokens.count(str(m["content"])) for m in messages) + cap
        room = usable(self.window)
        if need <= room:
            return text, 0
        if not self.truncate_to_fit:
            raise ProviderError(
                f"context overflow, not sent: prompt and answer cap need {need} tokens, over "
                f"the {room} usable of the server's {self.window}-token context per request; "
                "lower answer.max_context_tokens or set answer.truncate_to_fit=true"
            )
        have = self.tokens.count(text)
        kept, _ = self.tokens.truncate_left(text, max(0, have - (need - room)))
        return kept, have - self.tokens.count(kept)

    def _reply(
        self, question: Question, context: Context, text: str, repeat: int
    ) -> tuple[ChatResult, float]:
        """The answerer's reply to `text` (the fitted context) and its latency in ms.

        When the arm brought the service's own answer (`Context.service_answer`), that
        answer instead: no answerer call, no tokens.
        """
        if (given := context.service_answer) is not None:
            return ChatResult(text=given.text, model=given.source), given.ms
        messages = self.prompt.messages(question.question, text)
        started = time.perf_counter()
        version = repeat_version(self.prompt.version, repeat)
        reply = self.answerer.complete(messages, prompt_version=version, options=self.options)
        return reply, (time.perf_counter() - started) * 1000

    def judge(self, question: Question, result: ArmResult, rejudge: bool) -> ArmResult:
        """Add missing (or, with `rejudge`, all) verdicts; the primary one sets `correct`.

        An imported result (`bench.published`) is returned as it is, even with `rejudge`.
        """
        if result.status != OK or not self.judges or result.imported is not None:
            return result
        judgements = dict(result.judgements)
        for judge in self.judges:
            if needs_judgement(result, judge, rejudge=rejudge):
                judgements[judge.judge_id] = judge.judge(question, result.answer or "")
        updated = replace(result, judgements=judgements)
        updated = with_corrected_judgements(
            updated, question, self.judges, self.primary_judge, rejudge
        )
        if self.primary_judge:
            verdict = verdict_outcome(updated, self.primary_judge, self.judges)
            updated = replace(
                updated,
                correct=verdict,
                outcome=Outcome(judge_id=self.primary_judge).name,
                miss=miss_from(updated.evidence_retrieved, verdict),
            )
        return updated


def _answer_path(context: Context) -> str | None:
    """`service` or `harness` for live arms (they may answer themselves); None otherwise."""
    if context.service_answer is not None:
        return "service"
    return "harness" if context.write_path is not None else None


def _source_ids(context: Context) -> list[str]:
    """Source turn ids of the retrieved items, best first, without repeats."""
    seen = dict.fromkeys(sid for item in context.items for sid in item.source_ids)
    return list(seen)[:MAX_RETRIEVED_IDS]
