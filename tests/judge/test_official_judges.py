"""The official judges against a local stub: upstream's prompts, parameters and verdict rules.

The oracle is upstream's own code, read from the shared copies: the test compiles just
upstream's `get_anscheck_prompt` and `evaluate_llm_judge` (not the modules, which import
packages the project does not need) and compares what they would send with what the
stub received, byte for byte.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench.config import CacheConfig, EndpointConfig, JudgeConfig, ProviderConfig
from bench.errors import ConfigError, DatasetError
from bench.judge.judge_set import build_judges, judge_meta, key_meta
from bench.judge.official.registry import JUDGE_FILES, judge_file, resolve_judge_file
from bench.judge.official.verdicts import mem0_extract_json
from bench.loaders.locomo import load_locomo
from bench.loaders.longmemeval import load_longmemeval
from bench.providers.factory import build_providers
from bench.scoring.judge_runs import group_verdict
from bench.types import Question
from tests.support.judge_stub import JudgeStub, shared_data_dir

SHARED = shared_data_dir()
pytestmark = pytest.mark.skipif(SHARED is None, reason="shared data (judges/) absent")
ROOT = Path(__file__).resolve().parents[2]


OPEN: list[Any] = []


@pytest.fixture(autouse=True)
def _offline_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("BENCH_DATA_DIR", str(SHARED))
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "data-cache"))
    yield
    while OPEN:
        OPEN.pop().close()


def _upstream(name: str, wanted: set[str], namespace: dict[str, Any]) -> dict[str, Any]:
    """Compile only the named top-level definitions of an upstream file into `namespace`."""
    tree = ast.parse((SHARED / "judges" / name).read_text(encoding="utf-8"))  # type: ignore[operator]
    keep = []
    for node in tree.body:
        names = {getattr(node, "name", "")}
        if isinstance(node, ast.Assign):
            names = {ast.unparse(t) for t in node.targets}
        if names & wanted:
            keep.append(node)
    exec(compile(ast.Module(body=keep, type_ignores=[]), name, "exec"), namespace)  # noqa: S102
    return namespace


def _judges(server: JudgeStub, kind: str, tmp: Path, **extra: Any) -> list[Any]:
    model = extra.pop("model", "gpt-4o-mini" if kind == "mem0_locomo" else "gpt-4o-2024-08-06")
    endpoint = EndpointConfig(
        kind="openai",
        model=model,
        base_url=server.base_url,
        temperature=0.0,
        max_tokens=1024 if kind == "mem0_locomo" else 10,
        json_schema=kind == "mem0_locomo",
        max_attempts=1,
    )
    cfg = JudgeConfig(kind, kind, JUDGE_FILES_FOR[kind], endpoint, **extra)
    providers = build_providers(ProviderConfig(cache=CacheConfig("readwrite")), tmp)
    OPEN.append(providers)
    return list(build_judges([cfg], providers, 2))


JUDGE_FILES_FOR = {
    "longmemeval_official": "longmemeval-evaluate_qa.py",
    "mem0_locomo": "mem0-llm_judge.py",
}


def _lme_questions() -> list[Question]:
    data = load_longmemeval(SHARED / "longmemeval-s-subset16.json")  # type: ignore[operator]
    found = [q for c in data.conversations for q in c.questions]
    model = found[0]
    extra = [
        ("x_abs", model.question, "The user never said.", "multi-session"),
        ("p1", model.question, "Likes jazz", "single-session-preference"),
        ("a1", "Braces {0} {x}?", "7 {days}", "single-session-assistant"),
    ]
    made = [Question(i, i, q, 0, g, question_type=t) for i, q, g, t in extra]
    return [*found, *made]


def test_longmemeval_sends_upstreams_prompt_and_parameters(tmp_path: Path) -> None:
    ns = _upstream("longmemeval-evaluate_qa.py", {"get_anscheck_prompt"}, {})
    with JudgeStub(lambda body: "Yes.") as server:
        (judge,) = _judges(server, "longmemeval_official", tmp_path)
        questions = _lme_questions()
        verdicts = [judge.judge(q, f"answer {{}} {i}") for i, q in enumerate(questions)]
    assert len(server.bodies) == len(questions) == 19
    for i, (q, body) in enumerate(zip(questions, server.bodies, strict=True)):
        expected = ns["get_anscheck_prompt"](
            q.question_type,
            q.question,
            q.gold,
            f"answer {{}} {i}",
            abstention="_abs" in q.question_id,
        )
        assert body["messages"] == [{"role": "user", "content": expected}]
        assert (body["model"], body["temperature"], body["max_tokens"]) == (
            "gpt-4o-2024-08-06",
            0.0,
            10,
        )
        assert "response_format" not in body
    assert all(v.status == "ok" and v.verdict is True for v in verdicts)
    digest = hashlib.sha256((SHARED / "judges/longmemeval-evaluate_qa.py").read_bytes())  # type: ignore[operator]
    assert {v.prompt_hash for v in verdicts} == {digest.hexdigest()}


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [("Yes.", True), ("no", False), ("No, not yes.", True), ("  YES  ", True), ("No.", False)],
)
def test_longmemeval_verdict_follows_upstream(tmp_path: Path, reply: str, verdict: bool) -> None:
    with JudgeStub(lambda body: reply) as server:
        (judge,) = _judges(server, "longmemeval_official", tmp_path)
        got = judge.judge(_lme_questions()[0], "whatever")
    assert (got.status, got.verdict, got.raw) == ("ok", verdict, reply)
    assert ("yes" in reply.strip().lower()) is verdict  # upstream's own expression


def _locomo_questions() -> list[Question]:
    data = load_locomo(SHARED / "locomo10.json")  # type: ignore[operator]
    return list(data.conversations[0].questions)


class _FakeClient:
    """Upstream's `client.chat.completions.create`, recording its kwargs."""

    def __init__(self, content: str) -> None:
        self.kwargs: dict[str, Any] = {}
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))
        self.content = content

    def _create(self, **kwargs: Any) -> Any:
        self.kwargs = kwargs
        message = SimpleNamespace(content=self.content)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])


def _mem0_upstream(content: str) -> tuple[Callable[..., int], _FakeClient]:
    client = _FakeClient(content)
    ns = {"client": client, "json": json, "extract_json": mem0_extract_json}
    _upstream("mem0-llm_judge.py", {"ACCURACY_PROMPT", "evaluate_llm_judge"}, ns)
    return ns["evaluate_llm_judge"], client


def test_mem0_sends_upstreams_prompt_and_parameters(tmp_path: Path) -> None:
    questions = [q for q in _locomo_questions() if q.category != 5][:25]
    with JudgeStub(lambda body: '{"label": "CORRECT"}') as server:
        (judge,) = _judges(server, "mem0_locomo", tmp_path)
        verdicts = [judge.judge(q, f"{{gold}} answer {i}") for i, q in enumerate(questions)]
    upstream, client = _mem0_upstream('{"label": "CORRECT"}')
    for i, (q, body) in enumerate(zip(questions, server.bodies, strict=True)):
        assert upstream(q.question, q.gold, f"{{gold}} answer {i}") == 1
        sent = client.kwargs
        assert body["messages"] == sent["messages"]
        assert (body["model"], body["temperature"]) == (sent["model"], sent["temperature"])
        assert body["response_format"] == sent["response_format"] == {"type": "json_object"}
    assert all(v.status == "ok" and v.verdict is True for v in verdicts)


@pytest.mark.parametrize(
    "reply",
    [
        '{"label": "CORRECT"}',
        '{"label": "WRONG"}',
        '{"label": "correct"}',
        '```json\n{"label": "CORRECT"}\n```',
        '{"reasoning": "same date", "label": "CORRECT"}',
        "CORRECT",
        '{"verdict": "CORRECT"}',
        '["CORRECT"]',
    ],
)
def test_mem0_label_parsing_follows_upstream(tmp_path: Path, reply: str) -> None:
    question = next(q for q in _locomo_questions() if q.category == 2)
    upstream, _ = _mem0_upstream(reply)
    try:
        expected: str | int = upstream(question.question, question.gold, "an answer")
    except (ValueError, KeyError, TypeError):
        expected = "raises"
    with JudgeStub(lambda body: reply) as server:
        (judge,) = _judges(server, "mem0_locomo", tmp_path)
        got = judge.judge(question, "an answer")
    if expected == "raises":
        assert (got.status, got.verdict, got.raw) == ("unparseable", None, reply)
    else:
        assert (got.status, got.verdict) == ("ok", expected == 1)


def test_mem0_skips_category_5_without_a_call(tmp_path: Path) -> None:
    question = next(q for q in _locomo_questions() if q.category == 5)
    with JudgeStub(lambda body: '{"label": "CORRECT"}') as server:
        (judge,) = _judges(server, "mem0_locomo", tmp_path)
        got = judge.judge(question, "not mentioned")
    assert server.bodies == []
    assert (got.status, got.verdict) == ("skipped", None)
    assert "category 5" in (got.error or "")


def test_three_runs_make_three_real_calls_and_a_majority(tmp_path: Path) -> None:
    replies = iter(['{"label": "CORRECT"}', '{"label": "WRONG"}', '{"label": "CORRECT"}'])
    question = next(q for q in _locomo_questions() if q.category == 1)
    with JudgeStub(lambda body: next(replies)) as server:
        judges = _judges(server, "mem0_locomo", tmp_path, runs=3)
        verdicts = {j.judge_id: j.judge(question, "an answer") for j in judges}
        again = {j.judge_id: j.judge(question, "an answer") for j in judges}
    assert list(verdicts) == ["mem0_locomo#1", "mem0_locomo#2", "mem0_locomo#3"]
    assert [v.verdict for v in verdicts.values()] == [True, False, True]
    assert len(server.bodies) == 3  # three real calls; the rerun is served by the cache
    assert all(v.cached for v in again.values())
    assert group_verdict(verdicts, "mem0_locomo") is True
    (meta,) = judge_meta(judges)
    assert (meta.judge_id, meta.runs, meta.model_differs) == ("mem0_locomo", 3, False)
    assert meta.prompt_source == judge_file("mem0-llm_judge.py").url
    assert meta.endpoint == server.base_url


def test_even_runs_and_other_temperatures_are_refused(tmp_path: Path) -> None:
    with JudgeStub(lambda body: "yes") as server, pytest.raises(ConfigError, match="odd number"):
        _judges(server, "mem0_locomo", tmp_path, runs=2)
    endpoint = EndpointConfig(kind="openai", model="m", base_url="http://127.0.0.1:9/v1")
    endpoint.temperature = 0.7
    cfg = JudgeConfig("lme", "longmemeval_official", "", endpoint)
    providers = build_providers(ProviderConfig(cache=CacheConfig("readwrite")), tmp_path)
    OPEN.append(providers)
    with pytest.raises(ConfigError, match="temperature=0.7"):
        build_judges([cfg], providers, 2)


def test_an_overridden_model_is_recorded_and_flagged(tmp_path: Path) -> None:
    with JudgeStub(lambda body: "yes") as server:
        judges = _judges(server, "longmemeval_official", tmp_path, model="gpt-4.1")
        got = judges[0].judge(_lme_questions()[0], "x")
    (meta,) = judge_meta(judges)
    assert (got.model, meta.model, meta.official_model) == (
        "gpt-4.1",
        "gpt-4.1",
        "gpt-4o-2024-08-06",
    )
    assert meta.model_differs is True
    assert server.bodies[0]["model"] == "gpt-4.1"


def test_a_judge_file_with_another_checksum_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    (data / "judges").mkdir(parents=True)
    original = (SHARED / "judges" / "mem0-llm_judge.py").read_text()  # type: ignore[operator]
    (data / "judges" / "mem0-llm_judge.py").write_text(original + "\n# edited\n")
    monkeypatch.setenv("BENCH_DATA_DIR", str(data))
    with pytest.raises(DatasetError, match="SHA-256 mismatch"):
        resolve_judge_file(judge_file("mem0-llm_judge.py"))


def test_registry_matches_the_shared_copies() -> None:
    for entry in JUDGE_FILES.values():
        digest = hashlib.sha256((SHARED / "judges" / entry.name).read_bytes()).hexdigest()  # type: ignore[operator]
        assert digest == entry.sha256, entry.name
        assert entry.url.startswith(
            f"https://raw.githubusercontent.com/{entry.repo}/{entry.commit}/"
        )


def test_no_upstream_prompt_text_in_the_project() -> None:
    """No template's distinctive opening is in armbench's source, config, docs or tests."""
    from bench.judge.official.templates import longmemeval_templates, mem0_prompt

    lme = (SHARED / "judges" / "longmemeval-evaluate_qa.py").read_text()  # type: ignore[operator]
    mem0 = (SHARED / "judges" / "mem0-llm_judge.py").read_text()  # type: ignore[operator]
    texts = [*longmemeval_templates(lme).values(), mem0_prompt(mem0)]
    needles = {t.strip()[:60] for t in texts} | {t.strip()[-60:] for t in texts}
    files = [p for d in ("bench", "conf", "docs", "tests") for p in (ROOT / d).rglob("*")]
    files += [ROOT / "README.md", ROOT / "CHANGELOG.md"]
    for path in files:
        if path.is_file() and path.suffix in (".py", ".md", ".yaml", ".txt", ".json"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not any(n in text for n in needles), path


def test_judge_meta_from_keys_reads_the_rest_from_the_configuration() -> None:
    """The fan-out parent keys judges without building them; run.json still names all."""
    from bench.run.resume import JudgeKey

    endpoint = EndpointConfig(
        kind="openai", model="gpt-4.1", base_url="https://user:secret@example.org/v1?k=1"
    )
    cfg = JudgeConfig("mem0_locomo", "mem0_locomo", "mem0-llm_judge.py", endpoint, runs=3)
    keys = [JudgeKey(f"mem0_locomo#{k}", "gpt-4.1", "ab" * 32) for k in (1, 2, 3)]
    (meta,) = key_meta(keys, [cfg])
    assert (meta.runs, meta.kind, meta.official_model, meta.model_differs) == (
        3,
        "mem0_locomo",
        "gpt-4o-mini",
        True,
    )
    assert meta.endpoint == "https://example.org/v1"  # no user info, no query
    assert meta.prompt_source == judge_file("mem0-llm_judge.py").url


def test_a_judge_file_is_fetched_once_into_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No local copy: downloaded from its URL (here a loopback server), checked, cached."""
    import functools
    import http.server
    import threading

    from bench.judge.official import registry
    from bench.loaders import resolve

    served = tmp_path / "served"
    served.mkdir()
    original = SHARED / "judges" / "mem0-llm_judge.py"  # type: ignore[operator]
    (served / "mem0-llm_judge.py").write_bytes(original.read_bytes())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/mem0-llm_judge.py"
    monkeypatch.delenv("BENCH_DATA_DIR")
    monkeypatch.setattr(resolve, "SHARED_DATA", tmp_path / "no-shared")
    monkeypatch.setattr(registry.JudgeFile, "url", property(lambda self: url))
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    try:
        path = resolve_judge_file(judge_file("mem0-llm_judge.py"))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert path == tmp_path / "data-cache" / "judges" / "mem0-llm_judge.py"
    assert path.read_bytes() == original.read_bytes()
    assert resolve_judge_file(judge_file("mem0-llm_judge.py")) == path  # server gone: cached


def test_armbenchs_own_judge_runs_three_times_too(tmp_path: Path) -> None:
    """`runs` is not only for official judges: three cache keys, three calls, `#k` ids."""
    replies = iter(
        ['{"reasoning": "a", "correct": true}', '{"reasoning": "b", "correct": false}'] * 2
    )
    with JudgeStub(lambda body: next(replies)) as server:
        endpoint = EndpointConfig(
            kind="openai", model="m", base_url=server.base_url, max_attempts=1
        )
        prompt = "conf/prompts/judge_locomo_v2.txt"
        cfg = JudgeConfig("llm", "locomo", prompt, endpoint, runs=3)
        providers = build_providers(ProviderConfig(cache=CacheConfig("readwrite")), tmp_path)
        OPEN.append(providers)
        judges = build_judges([cfg], providers, 2)
        question = _locomo_questions()[0]
        got = {j.judge_id: j.judge(question, "an answer") for j in judges}
    assert list(got) == ["llm#1", "llm#2", "llm#3"]
    assert [g.verdict for g in got.values()] == [True, False, True]
    assert len(server.bodies) == 3
    assert group_verdict(got, "llm") is True


def test_a_longmemeval_run_reports_upstreams_metrics_on_its_scale(tmp_path: Path) -> None:
    """End to end: bench.run with the official judge, then the summary's header and table."""
    from bench.summarise.render import render_markdown
    from bench.summarise.render_json import summary_to_json
    from bench.summarise.summary import summarise_run
    from tests.support.e2e_support import run_cli

    out = tmp_path / "run"
    with JudgeStub(lambda body: "Yes") as server:
        proc = run_cli(
            "dataset=smoke_longmemeval",
            "arms=[raw]",
            f"out={out}",
            "progress=false",
            "judge=longmemeval_official",
            f"judges.0.endpoint.base_url={server.base_url}",
            "judges.0.endpoint.api_key_env=null",
            "judges.0.endpoint.model=local-model",
            env={"BENCH_DATA_DIR": str(SHARED)},
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        sent = len(server.bodies)
    summary = summarise_run(out)
    md = render_markdown(summary)
    assert "## LongMemEval metrics (as print_qa_metrics.py)" in md
    assert "NOT the official model gpt-4o-2024-08-06" in md
    assert judge_file("longmemeval-evaluate_qa.py").url in md
    metrics = summary_to_json(summary)["longmemeval"]["raw"]
    assert sum(t["n"] for t in metrics["by_type"].values()) == sent == 3
    assert metrics["overall"] == 1.0  # the stub says yes to every prompt here
