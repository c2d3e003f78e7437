"""Fetch a dataset file from the HuggingFace Hub (only when no local copy exists).

The file is fetched with `huggingface_hub` (the Hub client `datasets` is built on) and
then read like a local JSON file. `datasets.load_dataset` itself is not used: LongMemEval's
`answer` column mixes strings and integers, which pyarrow's schema inference rejects.

Without network the Hub client retries for ~25 s, logging each retry twice, before it
fails; so the Hub's host (or the HTTPS proxy in use) is probed first with one short TCP
connect, and an unreachable Hub (or `HF_HUB_OFFLINE=1`) is one clear error at once.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from bench.errors import DatasetError


def download_from_hub(repo: str, remote_name: str, target: Path) -> None:
    """Copy `remote_name` from the Hub dataset repo `repo` to `target` atomically."""
    try:
        from huggingface_hub import constants, hf_hub_download
    except ImportError as exc:  # pragma: no cover - installed with `datasets`
        raise DatasetError(
            f"{target.name}: huggingface_hub is not installed; run `make install`, or set "
            f"BENCH_DATA_DIR=<dir with {target.name}>"
        ) from exc
    local = f"set BENCH_DATA_DIR=<dir with {target.name}> (or dataset.path=)"
    if constants.HF_HUB_OFFLINE:
        raise DatasetError(f"{target.name}: not found locally and HF_HUB_OFFLINE is set: {local}")
    unreachable = hub_unreachable(constants.ENDPOINT)
    if unreachable:
        raise DatasetError(
            f"{target.name}: not found locally and the Hub is unreachable ({unreachable}; "
            f"no network?): {local}, or check the network"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".hub-") as tmp:
        try:
            fetched = hf_hub_download(
                repo_id=repo, filename=remote_name, repo_type="dataset", local_dir=tmp
            )
        except Exception as exc:  # the Hub client raises many types (HTTP, offline, 404)
            raise DatasetError(
                f"{target.name}: fetching {remote_name} from the Hub dataset {repo} failed "
                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                f"check the network and dataset.hf_repo/hf_split, or set "
                f"BENCH_DATA_DIR=<dir with {target.name}>"
            ) from exc
        staged = Path(tmp) / f"{target.name}.part"
        shutil.move(fetched, staged)
        os.replace(staged, target)


def hub_unreachable(endpoint: str, timeout_s: float = 3.0) -> str | None:
    """Why `endpoint` (through the HTTPS proxy, when one is set) cannot be reached, or None.

    One TCP connect to the proxy, else to the endpoint's host: a name that does not
    resolve, a refused connection or a timeout all mean no request can succeed.
    """
    proxy = urllib.request.getproxies().get("https")
    if proxy and "://" not in proxy:
        proxy = f"http://{proxy}"
    url = urlsplit(proxy or endpoint)
    host = url.hostname or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        return f"{host}:{port}: {exc.strerror or type(exc).__name__}"
    return None
