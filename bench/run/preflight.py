"""Checks before Hydra or the pipeline touch anything: a usable `out`, positive limits.

Hydra creates `out` (it holds `run.log`) before `bench.run` sees the config, so a bad
`out` must be refused here, in one line, rather than in Hydra's traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from bench.errors import ConfigError

if TYPE_CHECKING:
    from bench.config import Endpoint, LimitConfig, RunConfig


def check_out(out: str) -> bool:
    """Refuse an `out` that is a file, lies under a file, or cannot be created.

    An existing folder is accepted even when read-only: a finished run there can still
    be resumed (it has nothing to write). Returns whether `out` is (or can be made) a
    writable folder, so the caller can keep Hydra from opening `run.log` in it.
    """
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"out={out}: is an existing file, not a folder: pass out=<new folder>")
    if path.is_dir():
        return os.access(path, os.W_OK | os.X_OK)
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(
                    f"out={out}: {parent} is a file, so the folder cannot be created: "
                    "pass out=<a folder path>"
                )
            if not os.access(parent, os.W_OK | os.X_OK):
                raise ConfigError(
                    f"out={out}: cannot create it in {parent} (not writable, or a read-only "
                    "filesystem): pass out= a writable place"
                )
            _try_create(out, parent / path.relative_to(parent).parts[0])
            return True
    return True


def _try_create(out: str, first: Path) -> None:
    """Create and remove `first` (the first missing folder of `out`), or one ConfigError.

    Permission bits do not tell everything: `/proc` and `/sys` look writable to root, yet
    nothing can be made in them, and Hydra would fail there with a traceback.
    """
    try:
        first.mkdir()
    except FileExistsError:
        return  # made meanwhile (another worker of the run): usable
    except OSError as exc:
        raise ConfigError(
            f"out={out}: cannot create {first} ({(exc.strerror or type(exc).__name__).lower()}"
            "): pass out= a writable place"
        ) from None
    first.rmdir()


def check_retry_budgets(run: RunConfig) -> None:
    """Every HTTP endpoint's retry time cap leaves room to retry a timed-out request.

    Raises:
        ConfigError: one line naming the endpoint, both settings and the fix.
    """
    from bench.providers.retry import retry_budget_problem

    provider = run.provider
    endpoints: list[tuple[str, Endpoint]] = [
        ("provider.answerer", provider.answerer),
        ("provider.extractor", provider.extractor),
        ("provider.embedder", provider.embedder),
    ]
    endpoints += [(f"judges[{j.judge_id}].endpoint", j.endpoint) for j in run.judges]
    for where, endpoint in endpoints:
        if endpoint.kind != "openai":
            continue  # offline: nothing is sent, nothing times out
        problem = retry_budget_problem(
            endpoint.timeout_s, endpoint.max_attempts, endpoint.max_retry_time_s
        )
        if problem:
            raise ConfigError(
                f"{where}: {problem}: set {where}.max_retry_time_s above "
                f"{endpoint.timeout_s + 1:g} (e.g. {3 * endpoint.timeout_s:g}) or lower timeout_s"
            )


def check_limits(limit: LimitConfig) -> None:
    """Every `limit.*` count must be null or a positive integer.

    (A negative limit would silently drop the last items; zero would be an empty "ok" run.)
    """
    for name in ("conversations", "questions", "per_conversation"):
        value = getattr(limit, name, None)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(
                f"limit.{name}={value}: must be a positive integer; use null for no limit"
            )
