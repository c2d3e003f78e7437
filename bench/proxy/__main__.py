"""`python -m bench.proxy [--port N] [--out DIR] [hydra overrides]`: the accounting proxy alone.

Serves the OpenAI-compatible chat and embeddings API on 127.0.0.1 through the providers
the overrides configure (the run's defaults: `provider=offline`), for a memory system
run outside `bench.run` whose LLM calls should still be cached, rate limited and
counted per arm and phase. Point its OpenAI base URL at
`http://127.0.0.1:<port>/arm/<arm>/<ingest|retrieve>/v1`. The response cache is
`<out>/cache/responses.sqlite` (unless `provider.cache.path` says otherwise); on
Ctrl-C or SIGTERM the accounting is written to `<out>/proxy_accounting.json`.

Examples::

    python -m bench.proxy --port 8790
    python -m bench.proxy --port 8790 provider=openai provider.extractor.model=gpt-4o-mini
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from bench.cli_errors import exit_status, one_line_errors
from bench.config import ProviderConfig
from bench.errors import ConfigError
from bench.files import write_json_atomic


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.proxy", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--port", type=int, default=8790, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--out", default="results/proxy", help="cache and accounting folder")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. provider=openai")
    return parser.parse_args(argv)


def _provider(overrides: list[str]) -> ProviderConfig:
    """The ProviderConfig composed from conf/config.yaml and `overrides`."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from bench.paths import CONF_DIR
    from bench.run.hydra_job import one_line
    from bench.run.settings import check_group_overrides, load_run_config

    check_group_overrides(overrides)
    try:
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            composed = compose("config", overrides=overrides)
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(f"override: {one_line(exc)}") from None
    return load_run_config(composed).provider


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted; 0 after writing the accounting, 2 on bad input."""
    args = _parse(argv)
    return one_line_errors(lambda: _serve(args.out, args.port, args.overrides))


def _serve(out_arg: str, port: int, overrides: list[str]) -> int:
    """Build the providers, serve them on `port` until SIGINT/SIGTERM, write the accounting."""
    from bench.providers.factory import build_providers
    from bench.providers.proxy import AccountingProxy, ProxyBackend

    out = Path(out_arg)
    out.mkdir(parents=True, exist_ok=True)
    providers = build_providers(_provider(overrides), out, answerer=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        backend = ProxyBackend(providers.proxy_chat, providers.proxy_embedder, providers.accounting)
        proxy = AccountingProxy(backend, port)
    except (OSError, OverflowError) as exc:  # in use, not allowed, or not a port number
        providers.close()
        why = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(
            f"--port {port} on 127.0.0.1: {why}: use another port (0: any free)"
        ) from None
    print(
        f"armbench proxy on {proxy.base_url}/arm/<arm>/<ingest|retrieve>/v1",
        file=sys.stderr,
        flush=True,
    )
    stop.wait()
    proxy.close()
    write_json_atomic(out / "proxy_accounting.json", providers.accounting())
    providers.close()
    print(json.dumps(providers.accounting()["total"]), file=sys.stderr)
    return 0


def console() -> None:
    """The `armbench-proxy` console script (pyproject.toml), as `python -m bench.proxy`."""
    raise SystemExit(exit_status(main))


if __name__ == "__main__":
    console()
