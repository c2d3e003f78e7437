"""`armbench run` / `python -m bench.quick`: flags and .env turned into bench.run overrides."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from bench.quick.__main__ import main
from tests.support.e2e_support import load_records, run_cli
from tests.support.judge_stub import JudgeStub

SECRET = "sk-quick-test-secret-0123456789"


def printed(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The command `--print-only` prints (stderr), after checking the status is 0."""
    assert main([*argv[:2], "--print-only", *argv[2:]]) == 0
    return capsys.readouterr().err.strip()


def test_flags_become_the_printed_bench_run_command(capsys: pytest.CaptureFixture[str]) -> None:
    line = printed(
        capsys,
        "run",
        "locomo",
        "--answer-model",
        "qwen2.5-7b",
        "--answer-base-url",
        "http://127.0.0.1:8080/v1",
        "--judge",
        "mem0_locomo",
        "--judge-model",
        "gpt-4o-mini",
        "--arms",
        "raw,rag",
        "--per-category",
        "20",
        "--",
        "answer.max_context_tokens=29000",
    )
    assert line == (
        "python -m bench.run dataset=locomo provider=llamacpp provider.answerer.model=qwen2.5-7b"
        " provider.answerer.base_url=http://127.0.0.1:8080/v1 judge=mem0_locomo"
        " judges.0.endpoint.model=gpt-4o-mini 'arms=[raw,rag]' limit.per_category=20"
        " answer.max_context_tokens=29000"
    )
    openai = printed(capsys, "run", "smoke", "--answer-model", "gpt-4o-mini")
    assert "provider=openai provider.answerer.model=gpt-4o-mini" in openai


def test_env_file_fills_flags_and_keys_stay_out_of_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = tmp_path / "my.env"
    env.write_text(
        "# models\nANSWER_MODEL=from-env\nexport EVAL_MODEL='judge-env'\n"
        f'OPENAI_API_KEY="{SECRET}"\n',
        encoding="utf-8",
    )
    line = printed(capsys, "run", "smoke", "--env-file", str(env), "--answer-key-env", "none")
    assert (
        "provider.answerer.model=from-env" in line and "provider.answerer.api_key_env=null" in line
    )
    assert "judge=llm judges.0.endpoint.model=judge-env" in line
    assert SECRET not in line
    flag_wins = printed(capsys, "run", "smoke", "--env-file", str(env), "--answer-model", "flag")
    assert "provider.answerer.model=flag" in flag_wins and "from-env" not in flag_wins


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "locmo"], "error: unknown dataset 'locmo' in run locmo; did you mean 'locomo'?"),
        (["run", "smoke", "--judge", "mem0"], "did you mean 'mem0_locomo'?"),
        (
            ["run", "smoke", "--bogus"],
            "error: unrecognized arguments: --bogus (python -m bench.quick)",
        ),
        (["run", "smoke", "--per-category", "x"], "error: argument --per-category: invalid int"),
        (["run", "smoke", "--arms", ","], "error: --arms ',': no arm named"),
        ([], "error: the following arguments are required: command"),
    ],
)
def test_bad_flags_are_one_line_exit_2(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main([*argv, "--print-only"] if argv else argv)
    except SystemExit as exc:  # argparse's own errors leave through SystemExit
        status = int(str(exc.code))
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert expected in err, err


def test_malformed_env_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = tmp_path / ".env"
    env.write_text("ANSWER_MODEL=x\nthis is not a setting\n", encoding="utf-8")
    assert main(["run", "smoke", "--env-file", str(env), "--print-only"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {env}:2: not NAME=value: fix the line or remove it"
    )


def stub_reply(body: dict[str, Any]) -> str:
    """Answers and verdicts from one stub: a short answer, or a 'correct' verdict."""
    if body["model"] == "stub-judge":
        return json.dumps({"reasoning": "stub", "correct": True})
    return "7 May 2023"


@pytest.mark.slow
def test_smoke_against_a_local_stub_with_flags_only(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with JudgeStub(stub_reply) as server:
        proc = run_cli(
            "run",
            "smoke",
            "--answer-model",
            "stub-answer",
            "--answer-base-url",
            server.base_url,
            "--judge-model",
            "stub-judge",
            "--arms",
            "raw,rag",
            "--limit-questions",
            "2",
            "--out",
            str(out),
            "--",
            "progress=false",
            module="bench.quick",
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        command = proc.stderr.splitlines()[0]
        assert command.startswith("python -m bench.run dataset=smoke provider=llamacpp ")
        records = load_records(out)
        results = [r["arms"][a] for r in records.values() for a in ("raw", "rag")]
        assert results and all(x["answerer"] == "stub-answer" for x in results)
        assert all(x["judgements"]["llm"]["verdict"] is True for x in results)
        calls = len(server.bodies)
        again = run_cli(*shlex.split(command)[3:])  # the printed command, as a user would
        assert again.returncode == 0, again.stderr[-2000:]
        assert len(server.bodies) == calls  # the same run: every result already there
