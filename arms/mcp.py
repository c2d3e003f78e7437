"""The `mcp` arm: any MCP server with a store tool and a search tool (official `mcp` SDK).

Connects over stdio (`command: [prog, args...]`, started by the arm) or streamable
HTTP (`url`). Tool names and their arguments are configurable (argument templates
like the `http` arm's bodies). Discovery lists the server's tools at start-up and
refuses, in one line naming the server and the tool, when a mapped tool is missing
or a mapped argument is not in its input schema. Tool results are read from the
structured content (or the first text block parsed as JSON).

The SDK is async; the arm is sync, so one client session lives in an event loop in a
background thread (anyio blocking portal) for the arm's lifetime.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal

from arms.live import LiveMemoryArm, LiveOptions, reconnect_and_delete
from arms.live_calls import CallTimeout, CircuitBreaker
from arms.live_owner import listed_names
from arms.live_replies import ContractError, at, fill
from arms.neuromorphic.exchange import Exchange
from bench.arm import ArmServices
from bench.arm.live_state import NamespaceLedger
from bench.errors import BenchError, ConfigError
from bench.providers.secrets import redact
from bench.untrusted import UntrustedJSONError, parse_json


def _args(template: dict[str, Any]) -> Any:
    return field(default_factory=lambda: dict(template))


@dataclass
class McpConfig(LiveOptions):
    """How to reach the MCP server and which tools/arguments mean what."""

    kind: str = "mcp"
    """The arm kind: always `mcp`."""
    command: list[str] | None = None
    """Start the server over stdio, e.g. [python, -m, arms.server, --mcp-stdio]."""
    url: str | None = None
    """Or connect over streamable HTTP, e.g. http://127.0.0.1:8765/mcp."""
    timeout_s: float = 60.0
    """Seconds to wait for the server to start, and in all for each tool call."""
    create_tool: str = "create_project"
    """Tool that creates a namespace (its id is read at `create_id_path`)."""
    delete_tool: str = "delete_project"
    """Tool that deletes a namespace (cleanup)."""
    capture_tool: str = "capture"
    """Tool for the `capture` write path (one exchange of messages)."""
    remember_tool: str = "remember"
    """Tool for the `remember` write path (one unit's text, verbatim)."""
    search_tool: str = "search"
    """Tool that searches a namespace."""
    create_args: dict[str, Any] = _args({"name": "{name}"})
    """Arguments template for `create_tool`; `{name}` is filled."""
    delete_args: dict[str, Any] = _args({"project_id": "{namespace}"})
    """Arguments template for `delete_tool`; `{namespace}` is filled."""
    list_tool: str = "list_projects"
    """Tool that lists every namespace (id and name, read at `list_path`): a new
    namespace and one about to be deleted are checked against it (arms/live_owner.py)."""
    list_args: dict[str, Any] = _args({})
    """Arguments template for `list_tool`."""
    capture_args: dict[str, Any] = _args(
        {
            "project_id": "{namespace}",
            "messages": "{messages}",
            "date_time": "{date_time}",
            "session": "{session}",
        }
    )
    """Arguments template for `capture_tool` (`{messages}`, `{date_time}`, ...)."""
    remember_args: dict[str, Any] = _args(
        {
            "project_id": "{namespace}",
            "text": "{text}",
            "bench": "{unit_id}",
            "date_time": "{date_time}",
        }
    )
    """Arguments template for `remember_tool` (`{text}`, `{unit_id}`, ...)."""
    search_args: dict[str, Any] = _args(
        {"project_id": "{namespace}", "query": "{query}", "k": "{k}"}
    )
    """Arguments template for `search_tool` (`{namespace}`, `{query}`, `{k}`)."""


GONE_PHRASES = ("not found", "no such", "does not exist", "unknown project", "already deleted")
"""Lower-case phrases of a delete tool's error that mean the namespace is already gone."""


def _is_timeout(exc: BaseException) -> bool:
    """True for the SDK's own read timeout (an error whose message says it timed out)."""
    return isinstance(exc, TimeoutError) or "timed out" in str(exc).lower()


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class McpBackend:
    """MCP transport: one client session in a background event loop."""

    def __init__(self, name: str, cfg: McpConfig) -> None:
        from mcp import Client, StdioServerParameters

        if bool(cfg.command) == bool(cfg.url):
            raise ConfigError(f"arm_options.{name}: set exactly one of command (stdio) or url")
        self.name, self.cfg = name, cfg
        target: Any
        if cfg.command:
            self.where = "mcp stdio `" + " ".join(cfg.command) + "`"
            program = sys.executable if cfg.command[0] == "python" else cfg.command[0]
            target = StdioServerParameters(command=program, args=list(cfg.command[1:]))
        else:
            self.where = f"mcp {cfg.url}"
            target = cfg.url
        self._client = Client(target, read_timeout_seconds=cfg.timeout_s)
        self.breaker = CircuitBreaker(name, cfg.breaker_timeouts)
        self._portal_cm = start_blocking_portal()
        self._portal: BlockingPortal = self._portal_cm.__enter__()
        self._stop = threading.Event()
        self._ready: Future[None] = Future()
        self._done = self._portal.start_task_soon(self._hold)
        try:
            self._ready.result(timeout=cfg.timeout_s)
        except Exception as exc:
            self._shutdown()
            leaf = _leaf(exc)
            raise BenchError(
                f"{self.where}: cannot connect ({type(leaf).__name__}: "
                f"{str(leaf)[:200]}); check arm_options.{name}"
            ) from None

    async def _hold(self) -> None:
        import anyio

        try:
            async with self._client:
                self._ready.set_result(None)
                while not self._stop.is_set():
                    await anyio.sleep(0.05)
        except Exception as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                raise

    def _call(self, tool: str, template: dict[str, Any], values: dict[str, Any]) -> Any:
        """Call `tool` within `timeout_s` in all; its result as JSON.

        A call that runs out of time is a CallTimeout (counted by the circuit breaker);
        a lost connection opens the breaker at once (every later call would fail too).
        """
        arguments = fill(template, values)
        where = f"{self.where} tool {tool}"
        self.breaker.check(where)
        try:
            result = self._portal.call(self._bounded, tool, arguments)
        except TimeoutError:
            self.breaker.timed_out(where)
            raise CallTimeout(
                f"{where}: no result within timeout_s={self.cfg.timeout_s:g}; "
                f"check the server or raise arm_options.{self.name}.timeout_s"
            ) from None
        except Exception as exc:  # the SDK's errors for a closed or broken session vary
            leaf = _leaf(exc)
            if _is_timeout(leaf):
                self.breaker.timed_out(where)
                raise CallTimeout(
                    f"{where}: no result within timeout_s={self.cfg.timeout_s:g}"
                ) from None
            self.breaker.trip(f"connection lost: {type(leaf).__name__}")
            raise BenchError(
                redact(f"{where}: connection lost ({type(leaf).__name__}: {str(leaf)[:200]})")
            ) from None
        self.breaker.succeeded()
        if result.is_error:
            text = redact(" ".join(getattr(c, "text", "") for c in result.content)[:200])
            raise ContractError(f"{where}: tool error {text!r}; check arm_options.{self.name}")
        if result.structured_content is not None:
            return result.structured_content
        for block in result.content:
            if getattr(block, "text", None):
                try:
                    return parse_json(block.text, where)
                except UntrustedJSONError as exc:  # nested too deep, huge numbers, ...
                    raise ContractError(
                        f"{where}: result is not usable JSON ({exc.what})"
                    ) from None
        return None

    async def _bounded(self, tool: str, arguments: Any) -> Any:
        """The tool call, cancelled (TimeoutError) once `timeout_s` has passed."""
        import anyio

        with anyio.fail_after(self.cfg.timeout_s):
            return await self._client.call_tool(tool, arguments)

    def probe(self) -> None:
        """Discovery: every mapped tool exists and takes the mapped arguments."""
        listed = self._portal.call(self._client.list_tools)
        tools = {t.name: t for t in listed.tools}
        c = self.cfg
        mapping = {
            c.create_tool: c.create_args,
            c.delete_tool: c.delete_args,
            c.search_tool: c.search_args,
            **({c.list_tool: c.list_args} if c.list_path is not None else {}),
            c.capture_tool if c.write_path == "capture" else c.remember_tool: c.capture_args
            if c.write_path == "capture"
            else c.remember_args,
        }
        for tool, args in mapping.items():
            if tool not in tools:
                none = " (or list_path=null: no listing)" if tool == c.list_tool else ""
                raise ContractError(
                    f"{self.where}: no tool '{tool}' (server has: "
                    f"{', '.join(sorted(tools)) or 'none'}); fix the *_tool "
                    f"names in arm_options.{self.name}{none}"
                )
            known = set((tools[tool].input_schema or {}).get("properties", {}))
            extra = sorted(set(args) - known)
            if extra:
                raise ContractError(
                    f"{self.where}: tool '{tool}' takes no argument "
                    f"{', '.join(extra)} (takes: {', '.join(sorted(known))}); "
                    f"fix arm_options.{self.name}"
                )

    def create(self, name: str) -> Any:
        """Create a namespace named `name`; its id."""
        reply = self._call(self.cfg.create_tool, self.cfg.create_args, {"name": name})
        where = f"{self.where} tool {self.cfg.create_tool}"
        return at(reply, self.cfg.create_id_path, where, f"arm_options.{self.name}.create_id_path")

    def names(self) -> dict[str, str] | None:
        """Every namespace the server lists, id -> name; None without `list_path`."""
        if self.cfg.list_path is None:
            return None
        reply = self._call(self.cfg.list_tool, self.cfg.list_args, {})
        return listed_names(reply, self.cfg, f"{self.where} tool {self.cfg.list_tool}", self.name)

    def delete(self, namespace: str) -> None:
        """Delete a namespace; a tool error saying it is gone (`GONE_PHRASES`) counts as deleted.

        A stdio server that kept its stores in a temporary folder loses them when a run
        is killed; the next run must still be able to clear state.json.
        """
        try:
            self._call(self.cfg.delete_tool, self.cfg.delete_args, {"namespace": namespace})
        except ContractError as exc:
            if not any(phrase in str(exc).lower() for phrase in GONE_PHRASES):
                raise

    def capture(self, namespace: str, exchange: Exchange, messages: list[Any]) -> None:
        """Write one exchange through the service's capture path."""
        self._call(
            self.cfg.capture_tool,
            self.cfg.capture_args,
            {
                "namespace": namespace,
                "messages": messages,
                "date_time": exchange.date_time,
                "session": exchange.session,
            },
        )

    def remember(self, namespace: str, text: str, unit_id: str, date_time: str) -> None:
        """Store one unit's text verbatim, with its marker."""
        self._call(
            self.cfg.remember_tool,
            self.cfg.remember_args,
            {"namespace": namespace, "text": text, "unit_id": unit_id, "date_time": date_time},
        )

    def search(self, namespace: str, query: str, k: int) -> Any:
        """The raw search reply for `query` (top `k`)."""
        return self._call(
            self.cfg.search_tool,
            self.cfg.search_args,
            {"namespace": namespace, "query": query, "k": k},
        )

    def _shutdown(self) -> None:
        """End the session (the SDK stops a stdio server it started), then the loop."""
        self._stop.set()
        with contextlib.suppress(Exception):  # the session is gone either way
            self._done.result(timeout=self.cfg.timeout_s)
        with contextlib.suppress(Exception):  # a broken session's error, already reported
            self._portal_cm.__exit__(None, None, None)

    def close(self) -> None:
        """Release the connection."""
        self._shutdown()


class McpArm(LiveMemoryArm):
    """The `mcp` arm: `LiveMemoryArm` over `McpBackend`."""

    def __init__(self, name: str, config: McpConfig, services: ArmServices) -> None:
        super().__init__(name, config, services, McpBackend(name, config))


def delete_leftovers(name: str, options: McpConfig, ledger: NamespaceLedger) -> int:
    """bench.cleanup's hook: connect with the command's options, delete what is listed."""
    return reconnect_and_delete(name, options, ledger, McpBackend)
