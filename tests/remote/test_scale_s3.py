"""`out=s3://...` against a real S3-compatible server (moto) on 127.0.0.1.

Needs the `s3` extra (`pip install -e '.[s3]'`); skipped without it. CI runs it in the
scale-out step (`pytest -m s3`). The server runs in this process on a free port; the
runs are subprocesses that find it through `AWS_ENDPOINT_URL`, as a user's would.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e_support import (
    ROOT,
    load_records,
    run_cli,
    strip_timings,
    two_conversation_slice,
)

pytestmark = pytest.mark.s3
boto3 = pytest.importorskip("boto3", reason="needs the s3 extra: .[s3]")
moto_server = pytest.importorskip("moto.server", reason="needs the s3 extra: .[s3]")

QUIET = (*two_conversation_slice(), "progress=false", "heartbeat_s=0")
SECRET = "s3-test-secret-value-7c1e"
BUCKET = "bench-runs"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server.start()
    url = f"http://127.0.0.1:{port}"
    _client(url).create_bucket(Bucket=BUCKET)
    yield url
    server.stop()


def _client(url: str) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key=SECRET,
    )


def _env(url: str, cache: Path) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL": url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
        "ARMBENCH_S3_CACHE": str(cache),
    }


def _objects(url: str, prefix: str) -> dict[str, bytes]:
    s3 = _client(url)
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix + "/").get("Contents", [])
    assert len(listed) < 1000  # one page is all of it
    return {
        o["Key"][len(prefix) + 1 :]: s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read()
        for o in listed
    }


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "run"
    done = run_cli(*QUIET, f"out={out}")
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def test_a_run_on_s3_equals_a_local_run_and_resumes_from_s3_alone(
    endpoint: str, local_run: Path, tmp_path: Path
) -> None:
    uri = f"s3://{BUCKET}/runs/smoke"
    done = run_cli(*QUIET, f"out={uri}", env=_env(endpoint, tmp_path / "cache1"))
    assert done.returncode == 0, done.stderr[-2000:]
    total = len(load_records(local_run))
    assert f"{total} records written" in done.stderr
    assert not (ROOT / "s3:").exists()  # Hydra's run.log went to the staging folder

    objects = _objects(endpoint, "runs/smoke")
    records = {
        k: json.loads(v)
        for k, v in objects.items()
        if k.startswith("questions/") and k.endswith(".json")
    }
    local = load_records(local_run)
    assert sorted(r["question_id"] for r in records.values()) == sorted(local)
    for record in records.values():
        assert strip_timings(record) == strip_timings(local[record["question_id"]])
    assert {"run.json", "MANIFEST.json"} <= set(objects)
    assert any(
        k.startswith("stores/neuromorphic/") and k.endswith("checkpoint.json") for k in objects
    )
    assert not any(SECRET.encode() in body for body in objects.values())

    # A second machine (empty staging folder) resumes from S3 alone: nothing left to do.
    again = run_cli(*QUIET, f"out={uri}", env=_env(endpoint, tmp_path / "cache2"))
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"{total} questions, 0 records written" in again.stderr
    assert _objects(endpoint, "runs/smoke").keys() >= objects.keys() - {"run.log"}


def test_summarise_reads_an_s3_run_back(endpoint: str, local_run: Path, tmp_path: Path) -> None:
    uri = f"s3://{BUCKET}/runs/summarised"
    done = run_cli(*QUIET, f"out={uri}", env=_env(endpoint, tmp_path / "run-cache"))
    assert done.returncode == 0, done.stderr[-2000:]
    env = _env(endpoint, tmp_path / "reader-cache")
    remote = run_cli(uri, "--json", module="bench.summarise", env=env)
    assert remote.returncode == 0, remote.stderr[-2000:]
    here = run_cli(str(local_run), "--json", module="bench.summarise")
    assert here.returncode == 0, here.stderr[-2000:]
    got, want = json.loads(remote.stdout), json.loads(here.stdout)
    assert got["n_questions"] == want["n_questions"]
    assert want["n_questions"]["all"] == len(load_records(local_run))
    assert set(got["arms"]) == {"raw", "rag", "neuromorphic", "tuned"}
    assert _scores(got) == _scores(want)


def _scores(summary: dict[str, Any]) -> dict[str, Any]:
    keys = ("n_all", "correct_all", "f1_all", "correct_scored", "errors")
    return {arm: [stats[k] for k in keys] for arm, stats in summary["arms"].items()}


def test_a_bad_bucket_is_one_line_and_exit_2(endpoint: str, tmp_path: Path) -> None:
    done = run_cli(*QUIET, "out=s3://no-such-bucket/x", env=_env(endpoint, tmp_path / "c"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("error: s3://no-such-bucket/x: list")
    assert "Traceback" not in done.stderr


def test_ray_tasks_sync_their_units_with_s3(endpoint: str, local_run: Path, tmp_path: Path) -> None:
    """Under `executor=ray` every task pulls and pushes its own unit."""
    pytest.importorskip("ray", reason="needs the ray extra: .[ray]")
    uri = f"s3://{BUCKET}/runs/ray"
    env = {**_env(endpoint, tmp_path / "cache"), "RAY_AUTH_MODE": "disabled"}
    done = run_cli(
        *QUIET, f"out={uri}", "executor=ray", "ray.address=local", "ray.num_cpus=2", env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    objects = _objects(endpoint, "runs/ray")
    records = [json.loads(v) for k, v in objects.items() if k.startswith("questions/")]
    local = load_records(local_run)
    assert sorted(r["question_id"] for r in records) == sorted(local)
    for record in records:
        assert strip_timings(record) == strip_timings(local[record["question_id"]])
