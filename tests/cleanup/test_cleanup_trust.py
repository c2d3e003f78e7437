"""`bench.cleanup` trusts nothing in state.json but what the run created (issue 40, 1, 2, 11).

state.json names the namespaces a run created; how to reach and authorise the service
(URL, token variable, request templates) comes from the command, and every namespace
is checked with the service to be this run's before it is deleted. Each test runs the
CLI against services on loopback (tests/support/hostile_service.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.arm.live_state import NamespaceLedger, endpoint_hash, namespace_name
from tests.support.e2e_support import last_line, run_cli
from tests.support.hostile_service import NONCE, HostileService, write_state

VICTIM = "victim42"
"""Another user's project on the same service: nothing may touch it."""
KEY = "sk-real-openai-key-5d1c9a7e"
"""A key in the environment that no state.json may send anywhere."""


def victim_and_own(service: HostileService) -> None:
    """The victim's project, and p1: what this run created (listed under its name)."""
    service.add_project(VICTIM, [{"text": "private", "bench": "x"}])
    service.add_project("p1", [], name=namespace_name("http", "c1", NONCE))


def cleanup(run_dir: Path, *overrides: str) -> tuple[int, str, str]:
    """`python -m bench.cleanup run_dir overrides...` with KEY in OPENAI_API_KEY."""
    done = run_cli(str(run_dir), *overrides, module="bench.cleanup", env={"OPENAI_API_KEY": KEY})
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def test_recorded_url_token_and_templates_are_ignored(tmp_path: Path) -> None:
    """Defects 1 and 2: a hostile state.json names a URL, a token variable, a template."""
    with HostileService() as bait, HostileService() as service:
        victim_and_own(service)
        legacy = {
            "base_url": bait.url,
            "token_env": "OPENAI_API_KEY",
            "delete": {"method": "DELETE", "path": f"/v1/projects/{VICTIM}"},
        }
        write_state(tmp_path, "http", [("p1", "c1", "run")], {"kind": "http", "options": legacy})
        rc, out, err = cleanup(tmp_path, f"arm_options.http.base_url={service.url}")
        assert rc == 0, err
        assert "recorded options (URL, token variable, request templates) are ignored" in out
        assert "http: deleted 1 namespace(s)" in out
        assert bait.log == []  # the recorded URL is never contacted
        assert set(service.headers) == {""}  # no token: the command named no token_env
        assert [e for e in service.log if e[0] == "DELETE"] == [("DELETE", "p1", "delete")]
        assert service.projects[VICTIM] == [{"text": "private", "bench": "x"}]
        assert json.loads((tmp_path / "state.json").read_text())["namespaces"] == []


def test_a_foreign_id_in_state_json_deletes_nothing(tmp_path: Path) -> None:
    """Defect 2: a plain foreign id, with no name or with a forged one, is refused."""
    for name in ("", "run"):
        with HostileService() as service:
            victim_and_own(service)
            write_state(tmp_path, "http", [("p1", "c1", "run"), (VICTIM, "c2", name)])
            rc, _, err = cleanup(tmp_path, f"arm_options.http.base_url={service.url}")
            assert rc == 2
            line = last_line(err)
            assert line.startswith("error: state.json: namespace 'victim42' of arm http")
            assert (
                "recorded name '' is not one this run created" in line
                if not name
                else 'the service lists it as "victim42\'s notes"' in line
            )
            assert [e for e in service.log if e[0] == "DELETE"] == []  # p1 neither
            assert VICTIM in service.projects and "p1" in service.projects
            assert len(NamespaceLedger(tmp_path).namespaces()) == 2


def test_without_a_listing_a_namespace_holding_foreign_items_is_refused(tmp_path: Path) -> None:
    with HostileService() as service:
        victim_and_own(service)
        write_state(tmp_path, "http", [(VICTIM, "c2", "run")])
        rc, _, err = cleanup(
            tmp_path, f"arm_options.http.base_url={service.url}", "arm_options.http.list_path=null"
        )
        assert rc == 2 and "holds an item marked 'x', not this run's" in last_line(err)
        assert VICTIM in service.projects and not [e for e in service.log if e[0] == "DELETE"]


def test_a_command_pointing_at_another_endpoint_is_refused(tmp_path: Path) -> None:
    with HostileService() as used, HostileService() as other:
        victim_and_own(other)
        arm = {"kind": "http", "endpoint": endpoint_hash(used.url)}
        write_state(tmp_path, "http", [("p1", "c1", "run")], arm)
        rc, _, err = cleanup(tmp_path, f"arm_options.http.base_url={other.url}")
        assert rc == 2 and other.log == [] and used.log == []
        assert last_line(err) == (
            f"error: arm_options.http: {other.url} is not the endpoint the run in "
            f"{tmp_path / 'state.json'} used; pass the run's arm_options.http (base_url, "
            "url or command)"
        )
        rc, out, err = cleanup(tmp_path, f"arm_options.http.base_url={used.url}/")
        assert rc == 0 and "http: deleted 1 namespace(s)" in out, err  # gone there: not listed
        assert [e for e in used.log if e[0] == "DELETE"] == []


def test_wrong_typed_options_are_one_line(tmp_path: Path) -> None:
    """Defect 11: recorded options of the wrong type are ignored; a bad override is one line."""
    with HostileService() as service:
        victim_and_own(service)
        legacy = {"timeout_s": "abc", "health": 5, "breaker_timeouts": [1]}
        write_state(tmp_path, "http", [("p1", "c1", "run")], {"kind": "http", "options": legacy})
        rc, _, err = cleanup(tmp_path, "arm_options.http.timeout_s=abc")
        assert rc == 2 and last_line(err).startswith("error: ") and service.log == []
        assert "timeout_s" in last_line(err)
        rc, out, err = cleanup(tmp_path, f"arm_options.http.base_url={service.url}")
        assert rc == 0 and "ignored" in out and "http: deleted 1 namespace(s)" in out, err
