"""`python -m bench.published`: import, merge and export published per-question results.

    python -m bench.published FILE --format evermemos|longmemeval --out RUN_DIR --arm NAME
        [--dataset PATH] [--source-url URL] [--judge-model NAME] [--judgements LOG ...]
    python -m bench.published merge RUN_DIR IMPORTED_DIR --out MERGED_DIR
    python -m bench.published export RUN_DIR --format evermemos|longmemeval --arm NAME --out FILE
        [--dataset PATH]

The first form is `import` (the word may be given: `python -m bench.published import FILE
...`). Bad input is one `error:` line on stderr and exit 2, with nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.cli_errors import one_line_errors
from bench.published.model import NOT_YET, READABLE, PublishedError
from bench.types import Dataset

_COMMANDS = ("import", "merge", "export")
_LOADER = {"evermemos": "locomo", "longmemeval": "longmemeval"}
"""The dataset each format is matched to (its `conf/dataset/<name>.yaml`)."""


def _import_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.published [import]",
        description="Turn a published results file into an armbench run directory.",
    )
    parser.add_argument("file", type=Path, help="the published results file")
    parser.add_argument("--format", required=True, choices=(*READABLE, *NOT_YET))
    parser.add_argument("--out", required=True, type=Path, help="run directory to create")
    parser.add_argument("--arm", required=True, help="arm name of the published system")
    parser.add_argument("--dataset", type=Path, help="dataset file (default: the resolver's)")
    parser.add_argument("--source-url", help="where the file was published (recorded)")
    parser.add_argument("--judge-model", help="judge model, when the file does not name it")
    parser.add_argument(
        "--judgements",
        type=Path,
        action="append",
        default=[],
        help="LongMemEval: an evaluate_qa.py log (autoeval_label), once per judge run",
    )
    return parser


def _merge_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.published merge",
        description="Write a new run: a run's records with an imported arm beside its arms.",
    )
    parser.add_argument("run_dir", type=Path, help="the run to add the imported arm to")
    parser.add_argument("imported_dir", type=Path, help="a run directory made by import")
    parser.add_argument("--out", required=True, type=Path, help="merged run directory to create")
    return parser


def _export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.published export",
        description="Write one arm's answers in a published format, for upstream graders.",
    )
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--format", required=True, choices=READABLE)
    parser.add_argument("--arm", required=True, help="the arm whose answers are written")
    parser.add_argument("--out", required=True, type=Path, help="file to write")
    parser.add_argument("--dataset", type=Path, help="evermemos: the run's LoCoMo file")
    return parser


def load_for(fmt: str, given: Path | None) -> Dataset:
    """The dataset a format is matched to: `--dataset PATH`, else the standard resolver.

    The answer-key audit is not applied: published rows are matched to the questions
    as the dataset file states them. The loader's warnings about the file's own content
    (e.g. empty sessions) are not shown: matching reads ids and question text only.
    """
    import logging

    from omegaconf import OmegaConf

    from bench.config import DatasetConfig
    from bench.loaders import load_dataset
    from bench.paths import CONF_DIR

    name = _LOADER[fmt]
    values = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "dataset" / f"{name}.yaml"))
    assert isinstance(values, dict)
    cfg = DatasetConfig(**{str(k): v for k, v in values.items()})
    cfg.errata = None
    if given is not None:
        if not given.is_file():
            raise PublishedError(f"--dataset {given}: file not found: pass the dataset file")
        cfg.path = str(given)
    quiet = logging.getLogger("bench.loaders")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        return load_dataset(cfg)
    finally:
        quiet.setLevel(level)


def _run_import(argv: list[str]) -> int:
    args = _import_parser().parse_args(argv)
    if args.format in NOT_YET:
        raise PublishedError(
            f"--format {args.format}: not supported yet ({NOT_YET[args.format]}): no verified "
            "upstream example is available to test a reader against; use evermemos or longmemeval"
        )
    from bench.published.importing import ImportRequest, import_published, read_published

    request = ImportRequest(
        file=args.file,
        format=args.format,
        out=args.out,
        arm=args.arm,
        source_url=args.source_url,
        judge_model=args.judge_model,
        judgement_logs=tuple(args.judgements),
    )
    if not args.arm.strip() or args.arm != args.arm.strip():
        raise PublishedError(f"--arm {args.arm!r}: give a name without surrounding spaces")
    if not args.file.is_file():
        raise PublishedError(f"{args.file}: file not found: pass the published results file")
    published = read_published(request)  # a bad file fails before the dataset is read
    print(import_published(request, published, load_for(args.format, args.dataset)))
    return 0


def _run_merge(argv: list[str]) -> int:
    args = _merge_parser().parse_args(argv)
    from bench.published.merge import merge_imported

    print(merge_imported(args.run_dir, args.imported_dir, args.out))
    return 0


def _run_export(argv: list[str]) -> int:
    args = _export_parser().parse_args(argv)
    from bench.published.export import export_run

    dataset = load_for(args.format, args.dataset) if args.format == "evermemos" else None
    print(export_run(args.run_dir, args.format, args.arm, args.out, dataset))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Dispatch to import (the default), merge or export; one line and exit 2 on bad input."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = args.pop(0) if args and args[0] in _COMMANDS else "import"
    run = {"import": _run_import, "merge": _run_merge, "export": _run_export}[command]
    return one_line_errors(lambda: run(args))
