"""`locomo_plus_official`: LoCoMo-Plus's judge, asked and parsed as upstream's script does.

One user message per answer: upstream's preamble (filled with `A`, `B`) followed by its
`Cognitive` template filled with the evidence and the answer (`gold` empty: the items
have no reference answer), at temperature 0 with upstream's completion cap (512);
upstream's default model is gpt-4o-mini. The evidence is what upstream's
`data/unified_input.py` gives its judge: the cue dialogue with the conversation's speaker
names, one `<speaker>：<text>` line per non-empty turn — upstream writes a full-width
colon there, and so does armbench (`plus_evidence`, from the question's speaker-mapped
cue in `gold`). The reply's label is read by upstream's rule (`verdicts.plus_label`),
scored by its `LABEL_TO_SCORE` (correct 1, partial 0.5, wrong 0, anything else 0); the
verdict is `score == 1`, and the judgement keeps `scores = {"score", "label"}`.

Where armbench differs, on purpose: a failed call is an `error` judgement (retried on
resume) where upstream's `call_llm` returns the text `[API Error: ...]` and scores it 0;
a question that is not a LoCoMo-Plus item is `skipped`.
"""

from __future__ import annotations

from bench.errors import raise_if_permanent
from bench.judge.official.base import OfficialBase
from bench.judge.official.plus_templates import COGNITIVE, PlusTemplates
from bench.judge.official.verdicts import plus_label
from bench.loaders.locomo_plus import RELATION_TYPES
from bench.providers.base import CallOptions, Message
from bench.providers.cache import repeat_version
from bench.records import ERROR, OK, SKIPPED, Judgement
from bench.types import Question

KIND = "locomo_plus_official"
PROMPT_FILE = "locomo-plus-prompt.py"
JUDGE_FILE = "locomo-plus-llm_as_judge.py"
OFFICIAL_MODEL = "gpt-4o-mini"
"""The judge script's default `--model` (checked against the file when built)."""
MAX_TOKENS = 512
"""The judge script's default `--max-tokens` (checked against the file when built)."""
FULLWIDTH_COLON = "\uff1a"


def plus_evidence(cue: str) -> str:
    """Upstream's judge evidence from armbench's cue (`Speaker: text` lines, as `Turn.render`).

    Each line is split at its first `": "` into speaker and text; lines without text are
    dropped (upstream skips empty turns) and the rest joined as `speaker：text`.
    """
    lines = []
    for line in cue.split("\n"):
        speaker, sep, text = line.partition(": ")
        if sep and text.strip():
            lines.append(f"{speaker}{FULLWIDTH_COLON}{text.strip()}")
    return "\n".join(lines)


class PlusOfficialJudge(OfficialBase[PlusTemplates]):
    """One run of LoCoMo-Plus's official judge; `judge(question, answer)` never raises."""

    kind = KIND
    official_model = OFFICIAL_MODEL
    options = CallOptions(max_tokens=MAX_TOKENS)

    def messages(self, question: Question, answer: str) -> list[Message]:
        """The single user message upstream sends."""
        evidence = plus_evidence(question.gold or "")
        return [{"role": "user", "content": self.templates.prompt(COGNITIVE, evidence, answer)}]

    def judge(self, question: Question, answer: str, repeat: int = 0) -> Judgement:
        """Upstream's label and score; the verdict is `score == 1`."""
        if question.question_type not in RELATION_TYPES or not question.gold:
            return self.stamped(SKIPPED, error="not a LoCoMo-Plus item (no cue)")
        messages = self.messages(question, answer)
        version = repeat_version(self.version, repeat)
        try:
            result = self.chat.complete(messages, prompt_version=version, options=self.options)
        except Exception as exc:  # any failure is an error verdict, retried on resume
            raise_if_permanent(exc)
            return self.stamped(ERROR, error=f"judge call failed: {type(exc).__name__}: {exc}")
        label = plus_label(result.text)
        score = self.templates.label_scores.get(label.strip().lower(), 0.0)
        return self.stamped(
            OK,
            verdict=score == 1.0,
            scores={"score": score, "label": label},
            raw=result.text,
            cached=result.cached,
        )
