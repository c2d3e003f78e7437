"""A request that timed out can be retried: the retry time cap exceeds the timeout.

`max_retry_time_s` counts from the call's start, so a cap no larger than `timeout_s`
(the shipped local-server profiles had 300 and 300) left a timed-out answer unretried.
Every shipped profile now leaves room, and a config that does not is one line, exit 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from bench.errors import ConfigError, ProviderError
from bench.paths import CONF_DIR
from bench.providers.retry import RetryPolicy, retry_budget_problem
from bench.run.settings import load_run_config
from tests.support.e2e_support import run_cli
from tests.support.fault_clients import quick_chat
from tests.support.fault_replies import echo_chat_fn
from tests.support.fault_server import Fault, FaultServer

MESSAGES = [{"role": "user", "content": "hello"}]
PROFILES = sorted(p.stem for p in (CONF_DIR / "provider").glob("*.yaml"))


def test_the_rule_matches_what_the_retry_loop_does() -> None:
    """Cap = timeout: the timed-out request is not retried; cap above timeout + 1 s: it is."""
    timeout = 0.3
    with FaultServer(chat_fn=echo_chat_fn) as server:
        for cap, retried in ((timeout, False), (timeout + 1.2, True)):
            server.clear_log()
            server.fail_next(Fault.slow(0.6))
            policy = RetryPolicy(max_attempts=6, max_retry_time_s=cap, backoff_base_s=0.01)
            chat = quick_chat(server.base_url, timeout_s=timeout, policy=policy)
            assert (retry_budget_problem(timeout, 6, cap) is None) is retried
            if retried:
                assert chat.complete(MESSAGES).text == "echo: hello"
            else:
                with pytest.raises(ProviderError, match="timed out"):
                    chat.complete(MESSAGES)
            assert len(server.requests) == (2 if retried else 1)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_shipped_profile_retries_a_timed_out_request(profile: str) -> None:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"provider={profile}", "judge=llm"])
        run = load_run_config(cfg)  # raises ConfigError when a cap is too short
    for endpoint in (run.provider.answerer, run.provider.extractor, run.provider.embedder):
        problem = retry_budget_problem(
            endpoint.timeout_s, endpoint.max_attempts, endpoint.max_retry_time_s
        )
        assert problem is None, (profile, problem)


def test_a_cap_not_above_the_timeout_is_refused_in_one_line(tmp_path: Path) -> None:
    """...and the refused command leaves no run folder behind (Hydra made it and its
    log before the job ran), while a folder that was there already keeps what it held."""
    with (
        initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"),
        pytest.raises(ConfigError, match=r"^provider.answerer: max_retry_time_s=300 "),
    ):
        load_run_config(
            compose(
                config_name="config",
                overrides=["provider=vllm", "provider.answerer.max_retry_time_s=300"],
            )
        )
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "note.txt").write_text("mine")
    for out in (tmp_path / "new" / "run", kept):
        proc = run_cli(
            "provider=vllm",
            "provider.answerer.timeout_s=120",
            "provider.answerer.max_retry_time_s=100",
            "dataset=smoke",
            f"out={out}",
        )
        assert proc.returncode == 2
        assert proc.stderr.strip().splitlines() == [
            "error: provider.answerer: max_retry_time_s=100 leaves no time to retry a request "
            "that timed out after timeout_s=120: set provider.answerer.max_retry_time_s above "
            "121 (e.g. 360) or lower timeout_s"
        ]
    assert not (tmp_path / "new" / "run").exists()
    assert (kept / "note.txt").read_text() == "mine"
