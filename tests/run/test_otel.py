"""`otel=true`: a span per run and question, one `gen_ai.evaluation.result` event per verdict."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from bench.run.otel import EVENT, Exporters, use_exporters
from tests.export.test_export_inspect import stub_verdict
from tests.run.test_settings import compose_run
from tests.support.e2e_support import last_line, load_records, run_cli
from tests.support.judge_stub import JudgeStub

pytestmark = pytest.mark.otel
pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk not installed (armbench[otel])")

SECRET = "sk-otel-test-secret-123456"


@pytest.fixture
def captured() -> Iterator[Exporters]:
    """In-memory span and log-record exporters, in place of OTLP for the test."""
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporters = Exporters(InMemorySpanExporter(), InMemoryLogRecordExporter())  # type: ignore[no-untyped-call]
    use_exporters(exporters)
    yield exporters
    use_exporters(None)


def judged_run(out: Path, server: JudgeStub, *extra: str, key_env: str = "null") -> None:
    """A stub-judged smoke run of `raw` and `rag`, in this process, with otel on."""
    from bench.run.pipeline import run_benchmark

    cfg = compose_run(
        "dataset=smoke",
        "arms=[raw,rag]",
        f"out={out}",
        "progress=false",
        "judge=llm",
        "judges.0.endpoint.kind=openai",
        "judges.0.endpoint.model=stub-judge",
        f"judges.0.endpoint.base_url={server.base_url}",
        f"judges.0.endpoint.api_key_env={key_env}",
        "otel.enabled=true",
        *extra,
    )
    assert run_benchmark(cfg).errors == 0


def events(exporters: Exporters) -> list[Any]:
    """The evaluation events captured."""
    logs = exporters.logs.get_finished_logs()
    return [x.log_record for x in logs if x.log_record.event_name == EVENT]


def all_attribute_text(exporters: Exporters) -> str:
    """Every span's and log record's attributes, as one string."""
    spans = [dict(s.attributes or {}) for s in exporters.spans.get_finished_spans()]
    logs = [dict(x.log_record.attributes or {}) for x in exporters.logs.get_finished_logs()]
    return json.dumps([spans, logs], default=str)


@pytest.mark.slow
def test_one_event_per_verdict_no_content(
    tmp_path: Path, captured: Exporters, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TEST_KEY", SECRET)
    with JudgeStub(stub_verdict) as server:
        judged_run(tmp_path / "run", server, key_env="OTEL_TEST_KEY")
    records = load_records(tmp_path / "run")
    verdicts = {
        (qid, arm): res["judgements"]["llm"]["verdict"]
        for qid, r in records.items()
        for arm, res in r["arms"].items()
    }
    got = events(captured)
    assert len(got) == len(verdicts) == 2 * len(records)
    seen = {}
    for event in got:
        a = event.attributes
        assert a["gen_ai.evaluation.name"] == "llm"
        assert a["gen_ai.evaluation.score.label"] in ("correct", "incorrect")
        assert "gen_ai.evaluation.explanation" not in a
        qid, arm = a["gen_ai.response.id"].rsplit("/", 1)
        seen[qid, arm] = a["gen_ai.evaluation.score.value"] == 1.0
    assert seen == verdicts
    spans = captured.spans.get_finished_spans()
    names = [s.name for s in spans]
    assert names.count("armbench.run") == 1
    assert names.count("armbench.question") == len(records)
    (run,) = [s for s in spans if s.name == "armbench.run"]
    questions = [s for s in spans if s.name == "armbench.question"]
    assert all(q.parent.span_id == run.context.span_id for q in questions)
    by_span = {q.context.span_id: q.attributes["armbench.question_id"] for q in questions}
    for event in got:  # each event is emitted in its question's span
        assert by_span[event.span_id] == event.attributes["armbench.question_id"]
    text = all_attribute_text(captured)
    assert SECRET not in text and server.base_url not in text
    for record in records.values():
        assert record["question"] not in text
        for res in record["arms"].values():
            assert not res["answer"] or f'"{res["answer"]}"' not in text
        if record["gold"]:
            assert f'"{record["gold"]}"' not in text


def test_content_true_adds_texts(tmp_path: Path, captured: Exporters) -> None:
    with JudgeStub(stub_verdict) as server:
        judged_run(tmp_path / "run", server, "otel.content=true")
    records = load_records(tmp_path / "run")
    text = all_attribute_text(captured)
    assert all(r["question"] in text for r in records.values())
    assert all("gen_ai.evaluation.explanation" in e.attributes for e in events(captured))


class Collector:
    """A local OTLP/HTTP receiver on 127.0.0.1: keeps the path of every POST."""

    def __enter__(self) -> Collector:
        self.paths: list[str] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                self.rfile.read(int(self.headers["Content-Length"]))
                collector.paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.slow
def test_cli_exports_otlp_to_the_endpoint(tmp_path: Path) -> None:
    with Collector() as collector:
        proc = run_cli(
            "dataset=smoke",
            "arms=[raw]",
            f"out={tmp_path / 'run'}",
            "progress=false",
            "otel=true",
            f"otel.endpoint={collector.url}",
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {"/v1/traces", "/v1/logs"} <= set(collector.paths)


def test_otel_without_endpoint_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    proc = run_cli("dataset=smoke", "arms=[raw]", f"out={tmp_path}", "otel=true")
    assert proc.returncode == 2
    assert last_line(proc.stderr) == (
        "error: otel=true: no OTLP endpoint: set otel.endpoint=http://127.0.0.1:4318 "
        "or $OTEL_EXPORTER_OTLP_ENDPOINT"
    )
