"""Fetch a dataset file from the HuggingFace Hub (only when no local copy exists).

The file is fetched with `huggingface_hub` (the Hub client `datasets` is built on) and
then read like a local JSON file. `datasets.load_dataset` itself is not used: LongMemEval's
`answer` column mixes strings and integers, which pyarrow's schema inference rejects.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from bench.errors import DatasetError


def download_from_hub(repo: str, remote_name: str, target: Path) -> None:
    """Copy `remote_name` from the Hub dataset repo `repo` to `target` atomically."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:  # pragma: no cover - installed with `datasets`
        raise DatasetError(
            f"{target.name}: huggingface_hub is not installed; run `make install`, or set "
            f"BENCH_DATA_DIR=<dir with {target.name}>"
        ) from exc
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
