"""`python -m bench.loaders PATH [--loader locomo|longmemeval|beam]`: load, print its stats.

Prints the path, SHA-256 and `dataset_stats` as JSON; a malformed file prints its one-line
error and exits 2.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.cli_errors import one_line_errors
from bench.config import DatasetConfig
from bench.loaders import dataset_stats, load_dataset


def main(argv: list[str] | None = None) -> int:
    """Load FILE with the named loader and print its statistics and SHA-256 as JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.loaders", description=__doc__)
    parser.add_argument("file", type=Path)
    parser.add_argument("--loader", default="locomo")
    args = parser.parse_args(argv)
    cfg = DatasetConfig(name=args.file.stem, loader=args.loader, path=str(args.file))
    return one_line_errors(lambda: _print_stats(cfg))


def _print_stats(cfg: DatasetConfig) -> int:
    """Load the dataset and print its path, SHA-256 and statistics as JSON."""
    ds = load_dataset(cfg)
    print(json.dumps({"path": ds.path, "sha256": ds.sha256, **dataset_stats(ds)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
