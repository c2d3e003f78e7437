"""Progress bars with ETA on long phases (tqdm), silent when disabled."""

from __future__ import annotations

from typing import Any

from bench.config import RunConfig


def progress(*, total: int, desc: str, cfg: RunConfig) -> Any:
    """A tqdm bar on stderr with rate and ETA; disabled by `progress=false`."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="q", disable=not cfg.progress, dynamic_ncols=True)
