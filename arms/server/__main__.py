"""`python -m arms.server --port N [--data DIR]`: the reference memory server on 127.0.0.1.

`--mcp-stdio` serves the same stores as an MCP server over stdin/stdout instead.
`--token-env NAME` requires `Authorization: Bearer $NAME` on every /v1 route.
Without `--data` the stores live in a temporary folder removed at exit, a SIGTERM's
included (uvicorn re-raises the signal after its graceful shutdown; `_exit_on_sigterm`
turns it into `SystemExit`, so the folder's context manager still runs).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

HOST = "127.0.0.1"


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(prog="python -m arms.server", description=__doc__)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--data", type=Path, default=None, help="persistent store folder")
    parser.add_argument("--mcp-stdio", action="store_true", help="serve MCP over stdio")
    parser.add_argument("--token-env", default=None, help="env var holding a bearer token")
    parser.add_argument("--log-level", default="warning")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Start the server; returns the exit status (2 on bad options)."""
    args = parse(argv)
    token = os.environ.get(args.token_env) if args.token_env else None
    if args.token_env and not token:
        print(f"error: --token-env {args.token_env}: variable is not set", file=sys.stderr)
        return 2
    _exit_on_sigterm()
    scratch = (
        nullcontext(str(args.data))
        if args.data
        else tempfile.TemporaryDirectory(prefix="armbench-server-")
    )
    with scratch as folder:
        data = Path(folder)
        from arms.server.service import MemoryService
        from bench.providers.offline_embed import WordLlamaEmbedder

        service = MemoryService(data, WordLlamaEmbedder())
        if args.mcp_stdio:
            from arms.server.mcp_tools import build_mcp

            logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
            try:
                build_mcp(service).run("stdio")
            finally:
                service.close()
            return 0
        import uvicorn

        from arms.server.rest import build_app

        uvicorn.run(build_app(service, token), host=HOST, port=args.port, log_level=args.log_level)
    return 0


def _exit_on_sigterm() -> None:
    """Make SIGTERM a `SystemExit(143)` (128 + 15), so `finally` blocks and `with` exits run."""

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


if __name__ == "__main__":
    sys.exit(main())
