"""The live arms against a misbehaving memory service (tests/support/hostile_service.py, loopback).

Issue 29: ids a service hands back are checked before use, state.json entries are
checked before cleanup sends anything, an already-gone namespace counts as deleted.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections import deque
from pathlib import Path
from typing import Any, cast

import pytest

from arms.http import HttpArm, HttpConfig, fill_path
from arms.live_calls import CallTimeout
from arms.live_markers import split_marker, unit_marker, unit_tag
from arms.live_owner import ForeignNamespace
from arms.live_replies import ContractError, CrossNamespaceError
from bench.arm import ArmServices
from bench.arm.live_state import (
    Namespace,
    NamespaceError,
    NamespaceLedger,
    checked_namespace,
    namespace_name,
)
from bench.errors import BenchError, ConfigError
from bench.tokens import TokenCounter
from bench.types import Conversation, Question, Session, Turn
from tests.support.e2e_support import last_line, load_records, run_cli
from tests.support.hostile_service import NONCE, HostileService, write_state

OTHER = "victim42"
"""Another user's project on the same service: nothing may touch it."""


def conversation(cid: str) -> Conversation:
    """Two sessions, two speakers; a question about the first turn."""
    turns = (Turn("Ann", "I moved to Lisbon in March.", "D1:1", 1), Turn("Bo", "Nice!", "D1:2", 1))
    question = Question(f"{cid}_0", cid, "Where did Ann move?", 1, "Lisbon", ("D1:1",))
    return Conversation(cid, ("Ann", "Bo"), (Session(1, "1 April 2024", turns),), (question,))


def http_arm(service: HostileService, run_dir: Path, **options: Any) -> HttpArm:
    """The http arm on `service` (no start-up probe unless asked), its ledger in `run_dir`."""
    options.setdefault("probe", False)
    cfg = HttpConfig(base_url=service.url, **options)
    services = ArmServices(cast(Any, None), TokenCounter(), run_dir, run_dir)
    return HttpArm("http", cfg, services)


@pytest.mark.parametrize(
    "value",
    [f"zz/../{OTHER}", "..", "a..b", ".hidden", "", None, True, 1.5, "a b", "a%2Fb", "a?x=1",
     "a#b", "http://x", "x" * 129, ["p1"], {"id": "p1"}, -1],
)  # fmt: skip
def test_unsafe_namespace_ids_are_refused(value: object) -> None:
    with pytest.raises(NamespaceError, match="not a safe id"):
        checked_namespace(value, "where")


@pytest.mark.parametrize("value", ["p1", "0123456789abcdef", "proj_A-1.2", "x" * 128, 7])
def test_plain_namespace_ids_are_accepted(value: object) -> None:
    assert checked_namespace(value, "where") == str(value)


def test_path_values_are_one_segment() -> None:
    assert fill_path("/v1/projects/{namespace}", {"namespace": "a/../b?c#d"}) == (
        "/v1/projects/a%2F..%2Fb%3Fc%23d"
    )


@pytest.mark.parametrize("reply", [f"zz/../{OTHER}", None, "p0 x"])
def test_a_hostile_create_reply_never_reaches_another_project(
    tmp_path: Path, reply: object
) -> None:
    with HostileService() as service:
        service.add_project(OTHER, [{"text": "private", "bench": "x"}])
        service.mode.create_ids = deque([reply])
        arm = http_arm(service, tmp_path)
        with pytest.raises(ContractError, match="create reply for unit 'c1'.*not a safe id"):
            arm.ingest(conversation("c1"))
        arm.close()
        assert service.touched(OTHER) == []
        assert service.projects[OTHER] == [{"text": "private", "bench": "x"}]
        assert NamespaceLedger(tmp_path).namespaces() == []  # never recorded, never deleted


def test_a_reused_namespace_id_is_an_error_naming_the_reply(tmp_path: Path) -> None:
    with HostileService() as service:
        arm = http_arm(service, tmp_path)
        same = arm.ingest(conversation("c1"))["namespace"]
        service.mode.create_ids = deque([same])
        with pytest.raises(
            ForeignNamespace,
            match=f"'{same}' is not the one just created .*lists it as 'armbench http c1 ",
        ):
            arm.ingest(conversation("c2"))
        writes = [e for e in service.log if e[1] == same and e[2] == "capture"]
        assert len(writes) == 1  # c1's single exchange only: c2 wrote nothing into it
        arm.close()  # the arm stopped: c1's namespace stays listed for bench.cleanup
        assert same in service.projects and len(NamespaceLedger(tmp_path).namespaces()) == 1


def test_cleanup_refuses_a_hostile_state_entry_and_sends_nothing(tmp_path: Path) -> None:
    with HostileService() as service:
        service.add_project(OTHER, [{"text": "private", "bench": "x"}])
        service.add_project("p1", [])
        write_state(tmp_path, "http", [("p1", "c", "run"), (f"zz/../{OTHER}", "c", "run")])
        url = f"arm_options.http.base_url={service.url}"
        done = run_cli(str(tmp_path), url, module="bench.cleanup")
        assert done.returncode == 2
        line = last_line(done.stderr)
        assert line.startswith("error: ") and "namespaces[1]" in line and "not a safe id" in line
        assert "Traceback" not in done.stderr
        assert service.log == []  # refused before any request, the valid entry included
        assert OTHER in service.projects and "p1" in service.projects


@pytest.mark.parametrize(
    "state",
    [[], {"arms": [], "namespaces": []}, {"arms": {}, "namespaces": {}},
     {"arms": {}, "namespaces": [7]}, {"arms": {}, "namespaces": [{"arm": 1, "namespace": "p"}]},
     {"arms": {"http": "x"}, "namespaces": []}],
)  # fmt: skip
def test_cleanup_refuses_wrong_types_in_one_line(tmp_path: Path, state: Any) -> None:
    (tmp_path / "state.json").write_text(json.dumps(state))
    done = run_cli(str(tmp_path), module="bench.cleanup")
    assert done.returncode == 2, done.stderr
    assert last_line(done.stderr).startswith("error: ") and "state.json" in last_line(done.stderr)
    assert "Traceback" not in done.stderr


def test_cleanup_counts_a_namespace_already_gone_as_deleted(tmp_path: Path) -> None:
    with HostileService() as service:
        service.add_project("p1", [], name=namespace_name("http", "c1", NONCE))
        write_state(tmp_path, "http", [("p1", "c1", "run"), ("gone1", "c2", "run")])
        url = f"arm_options.http.base_url={service.url}"
        done = run_cli(str(tmp_path), url, module="bench.cleanup")
        assert done.returncode == 0, done.stderr
        assert "http: deleted 2 namespace(s)" in done.stdout
        assert NamespaceLedger(tmp_path).namespaces() == [] and "p1" not in service.projects
        assert [e for e in service.log if e[0] == "DELETE"] == [("DELETE", "p1", "delete")]


def test_cleanup_after_a_killed_mcp_stdio_run_is_never_stuck(tmp_path: Path) -> None:
    """The stdio server kept its stores in a temporary folder: the namespace is gone."""
    write_state(tmp_path, "mcp", [("0123456789abcdef", "c1", "run")])
    stdio = [
        "arm_options.mcp.command=[python,-m,arms.server,--mcp-stdio]",
        "arm_options.mcp.url=null",
    ]
    done = run_cli(str(tmp_path), *stdio, module="bench.cleanup", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mcp: deleted 1 namespace(s)" in done.stdout
    assert NamespaceLedger(tmp_path).namespaces() == []


TOKEN = "tok-7f3a9c2e51d04b8e"
"""A service token the hostile service echoes without its `Bearer ` prefix."""


def test_a_token_echoed_in_a_4xx_body_is_masked_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARMBENCH_HOSTILE_TOKEN", TOKEN)
    with HostileService() as service:
        service.mode.echo_token = ("post",)
        arm = http_arm(service, tmp_path, token_env="ARMBENCH_HOSTILE_TOKEN")
        with pytest.raises(ContractError) as caught:
            arm.ingest(conversation("c1"))
        arm.close()
    message = str(caught.value)
    assert "HTTP 422" in message and "token *** may not" in message
    assert TOKEN not in message and TOKEN[:8] not in message and TOKEN[-8:] not in message


def test_a_token_too_short_to_mask_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARMBENCH_HOSTILE_TOKEN", "short")
    with HostileService() as service, pytest.raises(ConfigError, match="shorter than 8"):
        http_arm(service, tmp_path, token_env="ARMBENCH_HOSTILE_TOKEN")


@pytest.mark.slow
def test_an_echoed_token_reaches_no_record_log_or_file(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with HostileService() as service:
        service.mode.echo_token = ("search",)
        done = run_cli(
            "dataset=smoke",
            f"out={out}",
            "progress=false",
            "arms=[http]",
            f"arm_options.http.base_url={service.url}",
            "arm_options.http.probe=false",
            "arm_options.http.token_env=ARMBENCH_HOSTILE_TOKEN",
            env={"ARMBENCH_HOSTILE_TOKEN": TOKEN},
            timeout=300,
        )
    assert done.returncode == 1, done.stderr[-2000:]  # finished, every answer in error
    seen = done.stdout + done.stderr
    for path in out.rglob("*"):
        if path.is_file():
            seen += path.read_bytes().decode("utf-8", "replace")
    assert "HTTP 422" in seen and "token *** may not do that" in seen
    for fragment in (TOKEN, TOKEN[:8], TOKEN[-8:]):
        assert fragment not in seen


def questions(n: int) -> list[Question]:
    """`n` questions about conversation c1."""
    return [Question(f"c1_{i}", "c1", f"Where did Ann move ({i})?", 1, "Lisbon") for i in range(n)]


def test_a_trickling_reply_ends_within_the_total_deadline(tmp_path: Path) -> None:
    """10 bytes every 0.4 s never trip a per-read timeout; the total deadline ends it."""
    with HostileService() as service:
        arm = http_arm(service, tmp_path, timeout_s=1.0, max_attempts=2, max_retry_time_s=3.0)
        arm.ingest(conversation("c1"))
        service.mode.trickle = True
        started = time.monotonic()
        with pytest.raises(CallTimeout, match=r"no complete reply in time \(2 attempt"):
            arm.retrieve(questions(1)[0])
        elapsed = time.monotonic() - started
        service.mode.trickle = False
        arm.close()
    assert 1.0 <= elapsed < 3.5, elapsed  # two 1 s attempts and a backoff, never more than 3 s


def test_the_call_deadline_bounds_every_attempt_and_wait(tmp_path: Path) -> None:
    with HostileService() as service:
        arm = http_arm(service, tmp_path, timeout_s=2.0, max_attempts=9, max_retry_time_s=1.5)
        arm.ingest(conversation("c1"))
        service.mode.hang_s = 30
        started = time.monotonic()
        with pytest.raises(CallTimeout):
            arm.retrieve(questions(1)[0])
        elapsed = time.monotonic() - started
        service.mode.hang_s = 0
        arm.close()
    assert elapsed < 1.9, elapsed  # max_retry_time_s, although timeout_s alone allows 2 s


def test_the_circuit_breaker_ends_a_hanging_arm_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with HostileService() as service:
        arm = http_arm(service, tmp_path, timeout_s=0.5, max_attempts=1, breaker_timeouts=2)
        arm.ingest(conversation("c1"))
        service.mode.hang_s = 30
        started, failures = time.monotonic(), []
        for question in questions(6):
            with pytest.raises(BenchError) as caught:
                arm.retrieve(question)
            failures.append(type(caught.value).__name__)
        elapsed = time.monotonic() - started
        arm.close()  # the breaker is open: nothing is sent, the namespace stays listed
        searches = [e for e in service.log if e[2] == "search"]
        deletes = [e for e in service.log if e[0] == "DELETE"]
    assert failures == ["CallTimeout"] * 2 + ["CircuitOpen"] * 4
    assert len(searches) == 2 and deletes == [] and elapsed < 1.6, elapsed
    assert len(NamespaceLedger(tmp_path).namespaces()) == 1
    opened = [r for r in caplog.records if "circuit breaker open" in r.getMessage()]
    assert len(opened) == 1


def test_retry_after_is_honoured(tmp_path: Path) -> None:
    with HostileService() as service:
        arm = http_arm(service, tmp_path, max_attempts=3)
        arm.ingest(conversation("c1"))
        service.mode.retry_after, service.mode.retry_after_s = 1, "1"
        started = time.monotonic()
        context = arm.retrieve(questions(1)[0])
        elapsed = time.monotonic() - started
        arm.close()
    assert context.items and 1.0 <= elapsed < 2.0, elapsed
    assert [e[2] for e in service.log].count("search") == 2


def test_a_retry_after_past_the_deadline_is_not_waited_for(tmp_path: Path) -> None:
    with HostileService() as service:
        arm = http_arm(service, tmp_path, max_attempts=3, max_retry_time_s=2.0)
        arm.ingest(conversation("c1"))
        service.mode.retry_after, service.mode.retry_after_s = 1, "30"
        started = time.monotonic()
        with pytest.raises(BenchError, match="HTTP 429 after retries"):
            arm.retrieve(questions(1)[0])
        assert time.monotonic() - started < 1.0
        arm.close()


@pytest.mark.slow  # about 12 s each: a stdio server start, a 4 s timeout or a death, the stop
@pytest.mark.parametrize(
    ("how", "first"),
    [("hang", "no result within timeout_s=4"), ("die", "connection lost (MCPError")],
)
def test_a_hanging_or_dying_mcp_stdio_server_gives_error_results_and_is_stopped(
    tmp_path: Path, how: str, first: str
) -> None:
    pidfile, out = tmp_path / "server.pid", tmp_path / "run"
    started = time.monotonic()
    done = run_cli(
        "dataset=smoke",
        f"out={out}",
        "progress=false",
        "arms=[mcp]",
        "arm_options.mcp.url=null",
        f"arm_options.mcp.command=[python,tests/support/hostile_mcp.py,{pidfile},{how}]",
        "arm_options.mcp.probe=false",
        "arm_options.mcp.timeout_s=4",
        "arm_options.mcp.breaker_timeouts=1",
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stderr[-2000:]  # finished, with results in error
    assert "Traceback" not in done.stderr and elapsed < 60
    assert "hidden cap" not in done.stderr  # a hung search is failed queries, not a cap
    errors = [r["arms"]["mcp"]["error"] for r in load_records(out).values()]
    # the first search is the post-ingestion store probe (retrieval health): its failure is
    # logged, the breaker opens, and every question's search fails at once
    assert first in (out / "run.log").read_text()
    assert len(errors) == 16 and all("circuit breaker is open" in e for e in errors)
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # a zombie is reaped by its parent, which has exited
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


def test_a_search_answered_from_another_namespace_is_a_health_error(tmp_path: Path) -> None:
    with HostileService() as service:
        arm = http_arm(service, tmp_path)
        first, second = conversation("c1"), conversation("c2")  # the same turn ids, D1:1 ...
        arm.ingest(first)
        arm.ingest(second)
        own = arm.retrieve(first.questions[0])
        assert [i.source_ids for i in own.items] == [("D1:1",), ("D1:2",)]
        assert own.meta["unmapped_items"] == 0
        service.mode.foreign = arm.retrieve(second.questions[0]).meta["namespace"]
        with pytest.raises(CrossNamespaceError, match=r"retrieval health: .* \(unit 'c1'\)"):
            arm.retrieve(first.questions[0])
        arm.close()


def test_a_shared_namespace_keeps_only_the_units_own_items(tmp_path: Path) -> None:
    with HostileService() as service:
        service.add_project("shared", [])
        arm = http_arm(service, tmp_path, namespace="shared")
        first, second = conversation("c1"), conversation("c2")
        arm.ingest(first)
        arm.ingest(second)
        got = arm.retrieve(first.questions[0])  # four items: two are c2's
        assert [i.source_ids for i in got.items] == [("D1:1",), ("D1:2",), (), ()]
        assert got.meta["unmapped_items"] == 2
        arm.close()
        assert "shared" in service.projects  # never created here, never deleted


def test_markers_carry_the_unit_tag() -> None:
    marker = unit_marker("conv-26", "D1:3", NONCE)
    assert split_marker(marker) == (unit_tag("conv-26", NONCE), "D1:3")
    assert unit_tag("conv-26", NONCE) != unit_tag("conv-30", NONCE)
    assert "/" not in unit_tag("x", NONCE)
    assert unit_tag("conv-26", NONCE) != unit_tag("conv-26", "f" * 32)  # another run
    assert split_marker("D1:3") == (None, "D1:3")
    assert split_marker("notatag/D1:3") == (None, "notatag/D1:3")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"results": [{"text": "x", "score": "high"}], "context": ""}', "'high', not a number"),
        (b'{"results": [{"text": "x", "score": 1' + b"0" * 400 + b'}], "context": ""}',
         "not usable JSON (an integer of 401 digits"),
        (b'{"results": [{"text": "x", "score": 1e999}], "context": ""}',
         "not usable JSON (a number out of range"),
        (b'{"results": [{"text": "x", "score": NaN}], "context": ""}', "not usable JSON (NaN"),
        (b"[" * 100_000 + b"]" * 100_000, "not usable JSON (JSON nested deeper than 64 levels)"),
        (b'{"results": [{"text": "x", "score": 1' + b"0" * 5000 + b'}]}', "not usable JSON"),
        (b"\xff\xfe not utf-8", "not usable JSON"),
    ],
)  # fmt: skip
def test_a_malformed_search_reply_is_one_contract_error(
    tmp_path: Path, body: bytes, expected: str
) -> None:
    with HostileService() as service:
        arm = http_arm(service, tmp_path)
        arm.ingest(conversation("c1"))
        service.mode.search_body = body
        with pytest.raises(ContractError, match=re.escape(expected)):
            arm.retrieve(questions(1)[0])
        service.mode.search_body = None
        arm.close()


def test_a_killed_mcp_stdio_run_resumes_without_manual_edits(tmp_path: Path) -> None:
    """The next run's arm deletes what a dead process listed, though the server lost it."""
    from arms.mcp import McpArm, McpConfig

    dead = f"{socket.gethostname()}:999999999"  # no such process on this host
    elsewhere = "another-host:1"  # never judged gone from here
    write_state(tmp_path, "mcp", [("0123456789abcdef", "c1", "run")], owner=dead)
    ledger = NamespaceLedger(tmp_path)
    ledger.add(
        Namespace("mcp", "fedcba9876543210", "c2", elsewhere, namespace_name("mcp", "c2", NONCE))
    )
    cfg = McpConfig(command=["python", "-m", "arms.server", "--mcp-stdio"], url=None, probe=False)
    services = ArmServices(cast(Any, None), TokenCounter(), tmp_path, tmp_path)
    arm = McpArm("mcp", cfg, services)
    arm.close()
    left = [n.namespace for n in NamespaceLedger(tmp_path).namespaces()]
    assert left == ["fedcba9876543210"]  # another host's process may still use it
