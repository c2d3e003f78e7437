"""`python -m bench.suite.niah_write --out DIR [--sizes ...] [--seed 0]`: NIAH suites.

Writes `DIR/niah-<size>-s<seed>.json` (run them with `suite.adapter=niah`).

The haystack source is `$BENCH_DATA_DIR/locomo10.json` when present, else the LoCoMo
smoke fixture (`--source` names another LoCoMo-format file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bench.cli_errors import one_line_errors
from bench.errors import ConfigError
from bench.files import write_text_atomic
from bench.paths import PROJECT_ROOT
from bench.suite.model import suite_to_json
from bench.suite.niah import NiahSpec, niah_suite
from bench.tokens import TokenCounter

SMOKE = PROJECT_ROOT / "datasets/fixtures/smoke_locomo.json"


def default_source() -> Path:
    """LoCoMo from BENCH_DATA_DIR when there, else the smoke fixture."""
    data_dir = os.environ.get("BENCH_DATA_DIR")
    full = Path(data_dir) / "locomo10.json" if data_dir else None
    return full if full and full.is_file() else SMOKE


def write_niah(out: Path, sizes: list[int], seed: int, source: Path) -> list[Path]:
    """Generate one suite per size; return the files written (existing ones rewritten)."""
    from bench.loaders import load_locomo

    conversations = load_locomo(source).conversations
    tokens = TokenCounter()
    written = []
    for size in sizes:
        suite = niah_suite(conversations, NiahSpec(size=size, seed=seed), tokens)
        path = out / f"{suite.name}.json"
        write_text_atomic(path, json.dumps(suite_to_json(suite), ensure_ascii=False))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and write the suites; one-line errors, exit 2."""
    parser = argparse.ArgumentParser(prog="python -m bench.suite.niah_write")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--source", type=Path, default=None)
    args = parser.parse_args(argv)
    return one_line_errors(lambda: _write(args))


def _write(args: argparse.Namespace) -> int:
    """Write the suites `args` asks for and print their paths; 0."""
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        raise ConfigError(f"--sizes={args.sizes}: give comma-separated token counts") from None
    for path in write_niah(args.out, sizes, args.seed, args.source or default_source()):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
