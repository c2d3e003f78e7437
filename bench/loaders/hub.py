"""Fetch a dataset file from the HuggingFace Hub at a pinned revision (no local copy exists).

The file is fetched with `huggingface_hub.hf_hub_download` (the Hub client `datasets` is
built on) into the Hub's own cache (`$HF_HUB_CACHE`, `datasets--<org>--<name>/snapshots/
<revision>/`), and read from there. A fetch needs the commit (`dataset.hf_revision`, 40
hex digits: a branch moves); conf/dataset/ ships one per Hub dataset, as recorded by a
public pin table (not verified here: a commit that does not exist fails the fetch).
No SHA-256 is published for these files, so the checksum is trust-on-first-use
(`bench.loaders.resolve.hub_file`): with `dataset.sha256` set the bytes must match it (a
file changed in the cache or upstream is refused); without, the file's SHA-256 is
computed, recorded in run.json and one note says how to pin it.
`datasets.load_dataset` itself is not used: LongMemEval's `answer` column mixes strings
and integers, which pyarrow's schema inference rejects.

The cache is tried first, without network (`local_files_only`): with `HF_HUB_OFFLINE=1` a
cached revision is all that is needed. Otherwise, without network the Hub client retries
for ~25 s, logging each retry twice, before it fails; so the Hub's host (or the HTTPS proxy
in use) is probed first with one short TCP connect, and an unreachable Hub is one clear
error at once.
"""

from __future__ import annotations

import re
import socket
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from bench.errors import ConfigError, DatasetError
from bench.names import did_you_mean

LONGMEMEVAL_FILES = {
    "s": "longmemeval_s_cleaned.json",
    "m": "longmemeval_m_cleaned.json",
    "oracle": "longmemeval_oracle.json",
}
"""`dataset.variant` → its file in the cleaned release `xiaowu0162/longmemeval-cleaned`
(the default `dataset.hf_repo`; another repo names its file with `dataset.hf_split`)."""
VARIANTS = {"longmemeval": tuple(LONGMEMEVAL_FILES)}
"""`dataset.variant` values per loader (LongMemEval's three files)."""

_PIN = re.compile(r"[0-9a-f]{40}")


def check_variant(loader: str, variant: str | None) -> None:
    """Raise ConfigError for a `dataset.variant` the loader does not have."""
    known = VARIANTS.get(loader)
    if variant is None or known is None or variant in known:
        return
    raise ConfigError(
        f"dataset.variant={variant}: not a {loader} variant "
        f"(known: {', '.join(known)}){did_you_mean(variant, list(known))}"
    )


def hub_file_name(loader: str, variant: str | None, hf_split: str | None, filename: str) -> str:
    """The file to fetch: `dataset.hf_split` when given, else the variant's, else `filename`."""
    if hf_split:
        return hf_split
    if loader == "longmemeval" and variant in LONGMEMEVAL_FILES:
        return LONGMEMEVAL_FILES[variant]
    return filename


def require_revision(repo: str, revision: str | None, local: str) -> str:
    """The pinned commit (lower case); DatasetError when it is not 40 hex digits."""
    if revision is None or not _PIN.fullmatch(revision.lower()):
        raise DatasetError(
            f"dataset.hf_revision={revision}: a Hub fetch of {repo} needs a commit of 40 hex "
            f"digits (a branch or tag moves): pin dataset.hf_revision=<40-hex commit of "
            f"{repo}>, or {local}"
        )
    return revision.lower()


def fetch_pinned(repo: str, remote_name: str, revision: str, local: str) -> Path:
    """The Hub file `remote_name` of dataset `repo` at `revision`, from the Hub cache or fetched.

    `local` is the fix naming a local copy, for the errors.
    """
    try:
        from huggingface_hub import constants, hf_hub_download
    except ImportError as exc:  # pragma: no cover - installed with `datasets`
        raise DatasetError(f"{remote_name}: huggingface_hub is not installed: {local}") from exc
    where = f"{remote_name} of the Hub dataset {repo}@{revision[:12]}"

    def download(cached_only: bool) -> Path:
        return Path(
            str(
                hf_hub_download(
                    repo,
                    remote_name,
                    repo_type="dataset",
                    revision=revision,
                    local_files_only=cached_only,
                )
            )
        )

    try:
        return download(cached_only=True)
    except Exception:  # not in the cache (the client raises several types)
        pass
    if constants.HF_HUB_OFFLINE:
        raise DatasetError(
            f"{where}: not found locally nor in the Hub cache, and HF_HUB_OFFLINE is set: {local}"
        )
    unreachable = hub_unreachable(constants.ENDPOINT)
    if unreachable:
        raise DatasetError(
            f"{where}: not found locally and the Hub is unreachable ({unreachable}; "
            f"no network?): {local}, or check the network"
        )
    try:
        return download(cached_only=False)
    except Exception as exc:  # the Hub client raises many types (HTTP, offline, 404)
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise DatasetError(
            f"{where}: fetching failed ({type(exc).__name__}: {first}); check the network "
            f"and dataset.hf_repo/hf_split/hf_revision (the revision is a commit of that "
            f"repo: another repo needs its own), or {local}"
        ) from exc


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
