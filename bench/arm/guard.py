"""Plug-in arms run guarded: one error line for a broken plug-in, a deadline on every call.

A plug-in arm (bench/arm/plugins.py) is someone else's code in the harness's process.

- Its import and construction run under `plugins.import_timeout_s`; an exception,
  `sys.exit`, `os._exit` or a hang there is one `ConfigError` line naming the plug-in
  and its distribution (exit 2), never a traceback (a `BenchError` the plug-in raises
  itself is already such a line and is passed on as it is).
- `GuardedArm` runs its `ingest`, `retrieve`, `fingerprint` and `close` in a worker
  thread under a total deadline (`plugins.ingest_timeout_s`, `plugins.retrieve_timeout_s`)
  with the live arms' circuit breaker (`bench.arm.breaker`): a call past its deadline is a
  `PluginTimeout` (an `error` result, retried on resume) and `plugins.breaker_timeouts`
  of them in a row open the breaker, so a hanging plug-in costs a bounded time.
- A plug-in that calls `os._exit` (or `sys.exit`) inside a guarded call does not end the
  run: while a plug-in is opened, `os._exit` called from a thread running a guarded call
  raises `PluginExited` in that thread instead (in any other thread or process it exits
  as before). The call is an `error` result and the arm's breaker opens with one log
  line naming the plug-in, so its later calls fail at once.

Design: threads in this process, not a child process. A plug-in is handed live objects
(the run's embedder and extractor with their caches and limits, progress callbacks)
that could only cross a process boundary through an RPC layer of their own. The limits
of that choice: a call past its deadline cannot be stopped, its daemon thread runs on
until the plug-in returns (the breaker keeps later calls away, and it never holds up
the end of the run), and a plug-in that ends the process by other means (a signal to
itself, a crash in native code, `os._exit` from a thread it started) still ends the run.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from bench.arm.breaker import CircuitBreaker
from bench.arm.plugins import plugin_arms
from bench.arm.registry import ARM_KINDS, arm_kind
from bench.arm.sealed import SealedArm
from bench.config import PluginConfig
from bench.errors import BenchError, ConfigError
from bench.names import load_symbol

if TYPE_CHECKING:
    from bench.arm import Arm
    from bench.types import AskedQuestion, Context, Conversation

T = TypeVar("T")
log = logging.getLogger("bench.arm")

_REAL_EXIT = os._exit
_inside = threading.local()


class PluginTimeout(BenchError):
    """A plug-in arm's call did not return within its deadline."""


class PluginExited(BenchError):
    """A plug-in arm tried to end the process (`os._exit`, `sys.exit`) in a guarded call."""


class _ExitRequested(BaseException):
    """Raised in the plug-in's thread by `os._exit`.

    Not an Exception, so a plug-in's `except Exception` cannot swallow it.
    """


def _guarded_exit(status: int) -> NoReturn:
    """`os._exit`, except in a thread of this process running a guarded plug-in call."""
    label = getattr(_inside, "label", None)
    if label is None or getattr(_inside, "pid", None) != os.getpid():
        _REAL_EXIT(status)
    raise _ExitRequested(f"{label} called os._exit({status}) in {_inside.what}")


def call_within(label: str, what: str, budget: float, fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a daemon thread; its result within `budget` seconds, else PluginTimeout.

    An exception of `fn` is raised here as it is; `sys.exit` and `os._exit` in that
    thread are PluginExited.
    """
    box: dict[str, Any] = {}

    def body() -> None:
        _inside.label, _inside.pid, _inside.what = label, os.getpid(), what
        try:
            box["value"] = fn(*args)
        except _ExitRequested as exc:
            box["error"] = PluginExited(str(exc))
        except SystemExit as exc:
            box["error"] = PluginExited(f"{label} called sys.exit({exc.code}) in {what}")
        except BaseException as exc:  # handed to the caller, whatever it is
            box["error"] = exc
        finally:
            _inside.label = None

    thread = threading.Thread(target=body, name=f"plugin-{what}", daemon=True)
    thread.start()
    thread.join(budget)
    if thread.is_alive():
        raise PluginTimeout(f"{label}: {what} did not return within {budget:g}s")
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def _check_limits(limits: PluginConfig) -> None:
    for name in ("import_timeout_s", "ingest_timeout_s", "retrieve_timeout_s", "breaker_timeouts"):
        value = getattr(limits, name)
        if not value > 0:
            raise ConfigError(f"plugins.{name}={value}: use a positive number")


def load_arm_config(kind: str, setting: str, limits: PluginConfig) -> Any:
    """The config dataclass of an arm kind (a plug-in's import guarded)."""
    path = arm_kind(kind, setting).config
    if kind in ARM_KINDS:
        return load_symbol(path)
    return load_plugin_symbol(plugin_arms(set(ARM_KINDS))[kind].label, path, limits)


def open_arm(kind: str, setting: str, limits: PluginConfig, *args: Any) -> SealedArm:
    """An arm of `kind` constructed with `args`, gold sealed (`SealedArm`); a plug-in guarded."""
    path = arm_kind(kind, setting).implementation
    if kind in ARM_KINDS:
        return SealedArm(load_symbol(path)(*args))
    return SealedArm(open_plugin(plugin_arms(set(ARM_KINDS))[kind].label, path, limits, *args))


def load_plugin_symbol(label: str, path: str, limits: PluginConfig) -> Any:
    """`load_symbol(path)` for a plug-in: any failure or hang is one ConfigError naming it."""
    _check_limits(limits)
    os._exit = _guarded_exit
    fix = "fix or reinstall the plug-in"
    return _setup_step(label, f"importing {path}", fix, limits, load_symbol, path)


def open_plugin(label: str, path: str, limits: PluginConfig, *args: Any) -> GuardedArm:
    """The plug-in's arm class at `path` constructed with `args`, guarded (`GuardedArm`)."""
    cls = load_plugin_symbol(label, path, limits)
    fix = "fix the plug-in or its options"
    return GuardedArm(_setup_step(label, "construction", fix, limits, cls, *args), label, limits)


def _setup_step(
    label: str, what: str, fix: str, limits: PluginConfig, fn: Callable[..., T], *args: Any
) -> T:
    """`fn(*args)` within `import_timeout_s`; any failure or hang one ConfigError naming it."""
    try:
        return call_within(label, what, limits.import_timeout_s, fn, *args)
    except (PluginTimeout, PluginExited) as exc:
        raise ConfigError(f"{exc}; {fix}") from None
    except BenchError:  # the plug-in's own one-line error (a missing extra, ...)
        raise
    except Exception as exc:
        raise ConfigError(f"{label}: {what} failed: {type(exc).__name__}: {exc}; {fix}") from None


class GuardedArm:
    """A plug-in arm whose calls run under deadlines and a circuit breaker.

    Attributes it does not define (`requested_k`, `probe_store`, ...) are the arm's own.
    """

    def __init__(self, arm: Arm, label: str, limits: PluginConfig) -> None:
        self._arm, self._label, self._limits = arm, label, limits
        self.name: str = str(getattr(arm, "name", label))
        self.breaker = CircuitBreaker(self.name, limits.breaker_timeouts)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self._arm, attribute)

    def fingerprint(self) -> dict[str, Any]:
        """The arm's fingerprint (under the retrieve deadline)."""
        return self._call("fingerprint", self._limits.retrieve_timeout_s, self._arm.fingerprint)

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """The arm's ingestion of one conversation (under `ingest_timeout_s`)."""
        return self._call("ingest", self._limits.ingest_timeout_s, self._arm.ingest, conversation)

    def retrieve(self, question: AskedQuestion) -> Context:
        """The arm's context for one question (under `retrieve_timeout_s`)."""
        budget = self._limits.retrieve_timeout_s
        return self._call("retrieve", budget, self._arm.retrieve, question)

    def close(self) -> None:
        """Close the arm (not once its breaker opened); a failure or hang is logged."""
        if self.breaker.is_open:
            return
        try:
            self._call("close", self._limits.retrieve_timeout_s, self._arm.close)
        except Exception as exc:
            log.warning("%s: close failed: %s: %s", self._label, type(exc).__name__, exc)

    def _call(self, what: str, budget: float, fn: Callable[..., T], *args: Any) -> T:
        where = f"{self._label} {what}"
        self.breaker.check(where)
        try:
            result = call_within(self._label, what, budget, fn, *args)
        except PluginTimeout:
            self.breaker.timed_out(where)
            raise
        except PluginExited as exc:
            self.breaker.trip(str(exc))
            raise
        self.breaker.succeeded()
        return result
