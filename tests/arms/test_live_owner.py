"""A create reply naming an existing project writes nothing and deletes nothing (issue 40, 3).

A service, or a proxy in front of it, may answer `POST /v1/projects` with the id of a
project that already holds someone's data. The arm checks each new namespace before its
first write (arms/live_owner.py): the service must list it under the name just sent
(which echoes the run's nonce), or, with no listing, it must be empty. Anything else
stops the arm in one line.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from arms.http import HttpArm, HttpConfig
from arms.live_calls import CircuitOpen
from arms.live_owner import ForeignNamespace
from bench.arm import ArmServices
from bench.arm.live_state import NamespaceLedger
from bench.tokens import TokenCounter
from bench.types import Conversation, Question, Session, Turn
from tests.support.create_proxy import CreateProxy
from tests.support.e2e_support import last_line, load_records, run_cli
from tests.support.hostile_service import HostileService
from tests.support.live_server import reference_server

VICTIM_ITEMS = [{"text": "Alice's bank PIN is 4821", "bench": "alice-1"}]
"""What another user's project holds."""


def conversation(cid: str) -> Conversation:
    """One session of two turns and one question."""
    turns = (Turn("Ann", "I moved to Lisbon in March.", "D1:1", 1), Turn("Bo", "Nice!", "D1:2", 1))
    question = Question(f"{cid}_0", cid, "Where did Ann move?", 1, "Lisbon", ("D1:1",))
    return Conversation(cid, ("Ann", "Bo"), (Session(1, "1 April 2024", turns),), (question,))


def arm_on(service: HostileService, run_dir: Path, **options: Any) -> HttpArm:
    """The http arm on `service` without its start-up probe."""
    cfg = HttpConfig(base_url=service.url, probe=False, **options)
    return HttpArm("http", cfg, ArmServices(cast(Any, None), TokenCounter(), run_dir, run_dir))


@pytest.mark.parametrize("list_path", ["projects", None])
def test_a_create_reply_naming_an_existing_project_stops_the_arm(
    tmp_path: Path, list_path: str | None
) -> None:
    with HostileService() as service:
        service.add_project("victim", list(VICTIM_ITEMS))
        service.mode.create_ids = deque(["victim"])
        arm = arm_on(service, tmp_path, list_path=list_path)
        with pytest.raises(ForeignNamespace) as caught:
            arm.ingest(conversation("c1"))
        with pytest.raises(CircuitOpen):  # the arm stopped: the next unit sends nothing
            arm.ingest(conversation("c2"))
        arm.close()
        assert service.projects["victim"] == VICTIM_ITEMS
        assert [e[2] for e in service.touched("victim")] in (["search"], [])  # read, no write
        assert NamespaceLedger(tmp_path).namespaces() == []  # never recorded, never deleted
    problem = 'lists it as "victim\'s notes"' if list_path else "already holds items (marker"
    assert "'victim' is not the one just created under 'armbench http c1 " in str(caught.value)
    assert problem in str(caught.value) and "\n" not in str(caught.value)


def test_without_a_listing_an_empty_new_namespace_is_used(tmp_path: Path) -> None:
    with HostileService() as service:
        arm = arm_on(service, tmp_path, list_path=None)
        namespace = arm.ingest(conversation("c1"))["namespace"]
        assert arm.retrieve(conversation("c1").questions[0]).items
        arm.close()
        assert namespace not in service.projects and NamespaceLedger(tmp_path).namespaces() == []


def victim_project(url: str) -> str:
    """Another user's project on the reference server, holding one memory; its id."""
    pid = str(httpx.post(f"{url}/v1/projects", json={"name": "alice"}, timeout=60).json()["id"])
    memory = {"text": "Alice's bank PIN is 4821", "metadata": {"bench": "alice-1"}}
    httpx.post(f"{url}/v1/projects/{pid}/memories", json=memory, timeout=60).raise_for_status()
    return pid


def victim_intact(url: str, pid: str) -> bool:
    """The victim's project still exists and still holds its one memory."""
    listed = httpx.get(f"{url}/v1/projects", timeout=60).json()["projects"]
    found = httpx.post(
        f"{url}/v1/projects/{pid}/search", json={"query": "PIN", "k": 5}, timeout=60
    ).json()["results"]
    return {"id": pid, "name": "alice"} in listed and len(found) == 1


@pytest.mark.slow  # a reference server and two smoke runs through the proxy (~20 s)
def test_a_proxy_answering_creates_with_an_existing_id_touches_nothing(tmp_path: Path) -> None:
    with reference_server(tmp_path / "data") as upstream:
        pid = victim_project(upstream)
        with CreateProxy(upstream, pid) as proxy:
            base = [
                "dataset=smoke",
                "progress=false",
                "arms=[http]",
                f"arm_options.http.base_url={proxy.url}",
            ]
            probed = run_cli(*base, f"out={tmp_path / 'a'}")
            assert probed.returncode == 2, probed.stderr[-2000:]
            line = last_line(probed.stderr)
            assert line.startswith(
                f"error: {proxy.url} create reply for unit 'probe': namespace "
                f"'{pid}' is not the one just created"
            )
            unprobed = run_cli(*base, f"out={tmp_path / 'b'}", "arm_options.http.probe=false")
            assert unprobed.returncode == 1, unprobed.stderr[-2000:]
            errors = [r["arms"]["http"]["error"] for r in load_records(tmp_path / "b").values()]
            assert len(errors) == 16 and all(
                "is not the one just created" in e or "circuit breaker is open" in e for e in errors
            )
        assert "Traceback" not in probed.stderr + unprobed.stderr
        sent = [(m, p) for m, p in proxy.log if pid in p]
        assert sent == []  # never written, searched or deleted through the proxy
        assert victim_intact(upstream, pid)
