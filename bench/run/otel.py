"""OpenTelemetry for a run (`otel=true`): spans, and one evaluation event per verdict.

A span `armbench.run` covers the session; each question record written gets a span
`armbench.question` under it (its start is the record's end minus its slowest arm's
retrieval + answer time, so the span is as long as the question took), with one child
`armbench.answer` per arm answered. Each verdict is a `gen_ai.evaluation.result` event
(OpenTelemetry GenAI semantic conventions), emitted through the Logs API (a log record
with `event_name`) in the question span's context, attributes:

- `gen_ai.evaluation.name`: the judge id, or the outcome rule (`f1>=0.5`) where no judge
  decides;
- `gen_ai.evaluation.score.value` 1.0 / 0.0 and `gen_ai.evaluation.score.label`
  `correct` / `incorrect`;
- `gen_ai.response.id`: `<question_id>/<arm>`, the answer judged (armbench's id: the
  records keep no provider response id);
- `gen_ai.evaluation.explanation` (the judge's reply) only with `otel.content=true`.

Without `otel.content=true` no attribute carries question, gold, answer or judge text;
no attribute ever carries a key or an endpoint URL. Export is OTLP/HTTP to
`otel.endpoint` (else `$OTEL_EXPORTER_OTLP_ENDPOINT`); headers such as a key come only
from `$OTEL_EXPORTER_OTLP_HEADERS`. `use_exporters` replaces OTLP with given exporters
(the tests' in-memory ones). A worker process (`workers=N`) starts its own telemetry on
its first record: its question spans are roots of their own traces.
"""

from __future__ import annotations

import atexit
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench.config import OtelConfig, RunConfig
from bench.errors import ConfigError
from bench.records import ArmResult, QuestionRecord

EVENT = "gen_ai.evaluation.result"
"""The GenAI semantic conventions' evaluation event name."""


@dataclass
class Exporters:
    """Span and log-record exporters to use instead of OTLP (tests, embedding)."""

    spans: Any
    """A `SpanExporter` (e.g. `InMemorySpanExporter`)."""
    logs: Any
    """A `LogRecordExporter` (e.g. `InMemoryLogRecordExporter`)."""


Attributes = dict[str, str | bool | int | float]
"""A span's or event's attributes (OpenTelemetry attribute values: scalars here)."""


@dataclass
class TelemetryState:
    """This process's telemetry (None outside a run) and the exporters `use_exporters` set."""

    exporters: Exporters | None = None
    """Where spans go: set by `use_exporters` (tests, a local collector); None means OTLP."""
    telemetry: Telemetry | None = None
    """The run's tracer and meter while a run with `otel=true` is under way, else None."""


STATE = TelemetryState()
"""The process's telemetry state (`use_exporters(None)` resets the exporters)."""


def use_exporters(exporters: Exporters | None) -> None:
    """Send spans and events to these exporters, synchronously (None: back to OTLP)."""
    STATE.exporters = exporters


def import_sdk() -> None:
    """Raise ConfigError (one line) when the `otel` extra is not installed."""
    try:
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise ConfigError(
            "otel=true: opentelemetry-sdk is not installed: pip install 'armbench[otel]'"
        ) from None


def processors(cfg: OtelConfig) -> tuple[Any, Any]:
    """(span processor, log-record processor): the `use_exporters` ones, else OTLP/HTTP."""
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, SimpleLogRecordProcessor
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    given = STATE.exporters
    if given is not None:
        return SimpleSpanProcessor(given.spans), SimpleLogRecordProcessor(given.logs)
    base = cfg.endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not base:
        raise ConfigError(
            "otel=true: no OTLP endpoint: set otel.endpoint=http://127.0.0.1:4318 "
            "or $OTEL_EXPORTER_OTLP_ENDPOINT"
        )
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    base = base.rstrip("/")
    spans = OTLPSpanExporter(endpoint=f"{base}/v1/traces")
    logs = OTLPLogExporter(endpoint=f"{base}/v1/logs")
    return BatchSpanProcessor(spans), BatchLogRecordProcessor(logs)


class Telemetry:
    """This process's tracer and logger, and the run span when one is open."""

    def __init__(self, cfg: OtelConfig) -> None:
        """Build the providers (their own, never the global ones) for `cfg`."""
        import_sdk()
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider

        span_processor, log_processor = processors(cfg)
        resource = Resource.create({"service.name": cfg.service_name})
        self.content = cfg.content
        self.tracers = TracerProvider(resource=resource)
        self.tracers.add_span_processor(span_processor)
        self.loggers = LoggerProvider(resource=resource)
        self.loggers.add_log_record_processor(log_processor)
        self.tracer = self.tracers.get_tracer("armbench")
        self.logger = self.loggers.get_logger("armbench")
        self.run_context: Any = None

    def shutdown(self) -> None:
        """Flush and close both providers."""
        self.tracers.shutdown()
        self.loggers.shutdown()

    def question(self, record: QuestionRecord) -> None:
        """The question's span, an answer span per arm, an event per verdict."""
        from opentelemetry import trace

        end = time.time_ns()
        took = max((arm_ms(r) for r in record.arms.values()), default=0.0)
        start = end - int(took * 1e6)
        span = self.tracer.start_span(
            "armbench.question",
            context=self.run_context,
            attributes=question_attributes(record, self.content),
            start_time=start,
        )
        context = trace.set_span_in_context(span)
        for arm, res in record.arms.items():
            answer = self.tracer.start_span(
                "armbench.answer",
                context=context,
                start_time=start,
                attributes=answer_attributes(arm, res, self.content),
            )
            answer.end(end_time=end)
            for name, correct, explanation in verdicts(res):
                attributes = event_attributes(record.question_id, arm, name, correct)
                if self.content and explanation:
                    attributes["gen_ai.evaluation.explanation"] = explanation
                self.logger.emit(event_name=EVENT, attributes=attributes, context=context)
        span.end(end_time=end)


def arm_ms(res: ArmResult) -> float:
    """Milliseconds an arm spent on the question: retrieval + answer (0 when unknown)."""
    return (res.retrieve_ms or 0.0) + (res.latency_ms or 0.0)


def verdicts(res: ArmResult) -> Iterator[tuple[str, bool, str | None]]:
    """(name, correct, explanation) per verdict: each judge's, else the outcome rule's."""
    judged = False
    for judge_id, j in sorted(res.judgements.items()):
        if j.status == "ok" and j.verdict is not None:
            judged = True
            yield judge_id, j.verdict, j.raw
    if not judged and res.correct is not None and res.outcome:
        yield res.outcome, res.correct, None


def event_attributes(question_id: str, arm: str, name: str, correct: bool) -> Attributes:
    """The evaluation event's attributes without content (names, ids and numbers)."""
    return {
        "gen_ai.evaluation.name": name,
        "gen_ai.evaluation.score.value": 1.0 if correct else 0.0,
        "gen_ai.evaluation.score.label": "correct" if correct else "incorrect",
        "gen_ai.response.id": f"{question_id}/{arm}",
        "armbench.question_id": question_id,
        "armbench.arm": arm,
    }


def question_attributes(record: QuestionRecord, content: bool) -> Attributes:
    """The question span's attributes: ids and category; its text and gold with content."""
    out: Attributes = {
        "armbench.question_id": record.question_id,
        "armbench.conversation_id": record.conversation_id,
        "armbench.dataset": record.dataset,
        "armbench.category": record.category,
    }
    if record.question_type:
        out["armbench.question_type"] = record.question_type
    if content:
        out["armbench.question"] = record.question
        out["armbench.gold"] = record.gold or ""
    return out


def answer_attributes(arm: str, res: ArmResult, content: bool) -> Attributes:
    """An arm's answer span: status, outcome, model, token counts; the answer with content."""
    out: Attributes = {"armbench.arm": arm, "armbench.status": res.status}
    if res.correct is not None:
        out["armbench.correct"] = res.correct
    if res.answerer:
        out["gen_ai.request.model"] = res.answerer
    if res.context_tokens is not None:
        out["armbench.context_tokens"] = res.context_tokens
    if res.usage is not None:
        out["gen_ai.usage.input_tokens"] = res.usage.prompt_tokens
        out["gen_ai.usage.output_tokens"] = res.usage.completion_tokens
    if content and res.answer is not None:
        out["armbench.answer"] = res.answer
    return out


@contextmanager
def run_telemetry(cfg: RunConfig, dataset: str) -> Iterator[None]:
    """The session's `armbench.run` span when `otel.enabled` (nothing otherwise)."""
    if not cfg.otel.enabled:
        yield
        return
    from opentelemetry import trace

    telemetry = Telemetry(cfg.otel)
    STATE.telemetry = telemetry
    attributes = {"armbench.dataset": dataset, "armbench.arms": list(cfg.arms)}
    span = telemetry.tracer.start_span("armbench.run", attributes=attributes)
    telemetry.run_context = trace.set_span_in_context(span)
    try:
        yield
    finally:
        span.end()
        telemetry.shutdown()
        STATE.telemetry = None


def record_written(cfg: RunConfig, record: QuestionRecord) -> None:
    """Emit a written record's spans and events (a worker starts its telemetry here)."""
    if not cfg.otel.enabled:
        return
    telemetry = STATE.telemetry
    if telemetry is None:  # a worker process: no run span here; flushed at exit
        telemetry = STATE.telemetry = Telemetry(cfg.otel)
        atexit.register(telemetry.shutdown)
    telemetry.question(record)
