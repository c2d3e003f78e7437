"""Data resolution: explicit path, BENCH_DATA_DIR, cache, download, checksums, dispatch."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from bench.config import DatasetConfig
from bench.errors import ConfigError, DatasetError
from bench.loaders import load_dataset, resolve, resolve_data_file, sha256_file
from bench.loaders.resolve import PROJECT_ROOT, cache_dir

FIXTURES = PROJECT_ROOT / "datasets" / "fixtures"
SMOKE = FIXTURES / "smoke_locomo.json"
SMOKE_SHA = hashlib.sha256(SMOKE.read_bytes()).hexdigest()
WRONG_SHA = "0" * 64


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No inherited BENCH_DATA_DIR, a private cache, and no proxy for 127.0.0.1."""
    monkeypatch.delenv("BENCH_DATA_DIR", raising=False)
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


def _cfg(**kw: object) -> DatasetConfig:
    """A LoCoMo config whose canonical file is `smoke.json` and has no download source."""
    base = DatasetConfig(name="smoke", filename="smoke.json", url=None, sha256=SMOKE_SHA)
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def test_sha256_file_matches_hashlib(tmp_path: Path) -> None:
    """The hash of a known byte string, and a rehash after the file changes."""
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    assert sha256_file(path) == hashlib.sha256(b"abc").hexdigest()
    path.write_bytes(b"abcd" * 1000)
    assert sha256_file(path) == hashlib.sha256(b"abcd" * 1000).hexdigest()


def test_cache_dir_default_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """Default is <project root>/datasets/.cache, independent of the cwd."""
    assert cache_dir().name == "cache"
    monkeypatch.delenv("BENCH_CACHE_DIR")
    monkeypatch.chdir("/")
    assert cache_dir() == PROJECT_ROOT / "datasets" / ".cache"


def test_bench_data_dir_checksum_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$BENCH_DATA_DIR/<filename> is used when its SHA-256 matches."""
    shutil.copy(SMOKE, tmp_path / "smoke.json")
    monkeypatch.setenv("BENCH_DATA_DIR", str(tmp_path))
    assert resolve_data_file(_cfg()) == tmp_path / "smoke.json"
    ds = load_dataset(_cfg())
    assert ds.sha256 == SMOKE_SHA
    assert ds.path == str(tmp_path / "smoke.json")


def test_canonical_checksum_mismatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file found under its canonical name with the wrong hash is a one-line error."""
    shutil.copy(SMOKE, tmp_path / "smoke.json")
    monkeypatch.setenv("BENCH_DATA_DIR", str(tmp_path))
    with pytest.raises(DatasetError) as info:
        resolve_data_file(_cfg(sha256=WRONG_SHA))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'smoke.json'}: SHA-256 mismatch")
    assert f"expected {WRONG_SHA}, got {SMOKE_SHA}" in message


def test_cache_checksum_mismatch(tmp_path: Path) -> None:
    """The cached canonical file is checked too."""
    (tmp_path / "cache").mkdir()
    shutil.copy(SMOKE, tmp_path / "cache" / "smoke.json")
    assert resolve_data_file(_cfg()) == tmp_path / "cache" / "smoke.json"
    with pytest.raises(DatasetError, match="SHA-256 mismatch"):
        resolve_data_file(_cfg(sha256=WRONG_SHA))


def test_data_dir_before_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """BENCH_DATA_DIR wins over the cache when both hold the file."""
    for d in ("data", "cache"):
        (tmp_path / d).mkdir()
        shutil.copy(SMOKE, tmp_path / d / "smoke.json")
    monkeypatch.setenv("BENCH_DATA_DIR", str(tmp_path / "data"))
    assert resolve_data_file(_cfg()) == tmp_path / "data" / "smoke.json"


def test_explicit_path_is_not_checksummed(tmp_path: Path) -> None:
    """dataset.path to another file is accepted; its own SHA-256 is recorded."""
    other = tmp_path / "subset.json"
    other.write_text(SMOKE.read_text().replace("Porto", "Braga"))
    ds = load_dataset(_cfg(path=str(other)))
    assert ds.sha256 == sha256_file(other) != SMOKE_SHA


def test_relative_path_from_project_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative dataset.path not under the cwd is taken from the project root."""
    monkeypatch.chdir(tmp_path)
    path = resolve_data_file(_cfg(path="datasets/fixtures/smoke_locomo.json"))
    assert path == PROJECT_ROOT / "datasets" / "fixtures" / "smoke_locomo.json"


def test_missing_everywhere_is_one_line(tmp_path: Path) -> None:
    """No path, no file, no download source: the error names the file and the fix."""
    with pytest.raises(DatasetError) as info:
        resolve_data_file(_cfg())
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("smoke.json: not found")
    assert "BENCH_DATA_DIR=<dir with smoke.json>" in message
    with pytest.raises(DatasetError, match=r"dataset.path=nope.json: file not found"):
        resolve_data_file(_cfg(path="nope.json"))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """A local HTTP server on 127.0.0.1 serving the fixtures folder; stopped afterwards."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Keep test output clean."""

    handler = functools.partial(Quiet, directory=str(FIXTURES))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_download_verified_into_cache(server: str, tmp_path: Path) -> None:
    """No local copy: the URL is fetched into the cache, checked, and then reused."""
    cfg = _cfg(url=f"{server}/smoke_locomo.json")
    path = resolve_data_file(cfg)
    assert path == tmp_path / "cache" / "smoke.json"
    assert path.read_bytes() == SMOKE.read_bytes()
    assert len(load_dataset(cfg).questions()) == 16
    assert resolve_data_file(_cfg(url=f"{server}/gone.json")) == path


def test_download_wrong_checksum_leaves_nothing(server: str, tmp_path: Path) -> None:
    """A download that fails its checksum is deleted and reported on one line."""
    with pytest.raises(DatasetError) as info:
        resolve_data_file(_cfg(url=f"{server}/smoke_locomo.json", sha256=WRONG_SHA))
    message = str(info.value)
    assert "\n" not in message
    assert f"SHA-256 mismatch for the download from {server}/smoke_locomo.json" in message
    assert list((tmp_path / "cache").iterdir()) == []


def test_download_http_error(server: str, tmp_path: Path) -> None:
    """A 404 is a one-line DatasetError naming the URL; nothing stays in the cache."""
    with pytest.raises(DatasetError) as info:
        resolve_data_file(_cfg(url=f"{server}/missing.json"))
    assert "\n" not in str(info.value)
    assert f"download from {server}/missing.json failed (HTTP Error 404" in str(info.value)
    assert list((tmp_path / "cache").iterdir()) == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("offline", ["endpoint unreachable", "HF_HUB_OFFLINE"])
def test_hub_without_network_fails_once_quietly(tmp_path: Path, offline: str) -> None:
    """No local copy and no Hub: one clear error line, exit 2, no retry warnings."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env |= {"BENCH_DATA_DIR": str(tmp_path / "data"), "BENCH_CACHE_DIR": str(tmp_path / "c")}
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{_closed_port()}"  # nothing listens: no network
    if offline == "HF_HUB_OFFLINE":
        env["HF_HUB_OFFLINE"] = "1"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.run",
            "dataset=longmemeval",
            f"out={tmp_path / 'run'}",
            f"dataset.hf_revision={'0' * 40}",
            f"dataset.sha256={'0' * 64}",
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Retry" not in done.stderr and "huggingface_hub" not in done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "not found locally" in errors[0], done.stderr[-2000:]
    assert "BENCH_DATA_DIR=<dir with longmemeval_s.json>" in errors[0]
    assert ("unreachable" if offline != "HF_HUB_OFFLINE" else "HF_HUB_OFFLINE") in errors[0]


def test_unknown_loader_did_you_mean() -> None:
    """An unknown loader fails before any file is looked for, with a suggestion."""
    with pytest.raises(ConfigError, match="did you mean 'locomo'"):
        load_dataset(_cfg(loader="locmo"))


@pytest.mark.parametrize(
    "name", ["locomo", "longmemeval", "smoke", "smoke_longmemeval", "beam", "locomo_plus"]
)
def test_dataset_yaml_matches_config(name: str) -> None:
    """Each conf/dataset file has exactly the DatasetConfig fields."""
    data = yaml.safe_load((PROJECT_ROOT / "conf" / "dataset" / f"{name}.yaml").read_text())
    assert set(data) == {f.name for f in dataclasses.fields(DatasetConfig)}
    cfg = DatasetConfig(**data)
    assert cfg.name == name
    if cfg.path:
        assert (PROJECT_ROOT / cfg.path).is_file()


def test_locomo_yaml_matches_readme() -> None:
    """The checksum and URL in conf/dataset/locomo.yaml are the ones the README publishes."""
    cfg = DatasetConfig(**yaml.safe_load((PROJECT_ROOT / "conf/dataset/locomo.yaml").read_text()))
    readme = (PROJECT_ROOT / "datasets" / "locomo" / "README.md").read_text()
    assert cfg.sha256 and cfg.sha256 in readme
    assert cfg.url and cfg.url in readme
    assert cfg.filename == "locomo10.json"


def test_the_shared_copy_beside_the_checkout_is_used_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No $BENCH_DATA_DIR, an empty cache, no download source: `../shared/data/` serves it."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shutil.copy(SMOKE, shared / "smoke.json")
    monkeypatch.setattr(resolve, "SHARED_DATA", shared)
    assert resolve_data_file(_cfg()) == shared / "smoke.json"
    with pytest.raises(DatasetError, match="SHA-256 mismatch"):
        resolve_data_file(_cfg(sha256=WRONG_SHA))  # a differing copy is never used
    with pytest.raises(DatasetError, match="no download source"):
        resolve_data_file(_cfg(sha256=None))  # unchecked: the shared copy is not trusted
