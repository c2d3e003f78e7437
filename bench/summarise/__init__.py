"""The summarise stage (standard library only): records in, paired tables out.

`cli.py` reads a run and prints or writes tables; `scan.py` walks the records once for
every per-arm counter; `model.py` holds the typed summary, `stats.py` the exact tests,
`render.py` the text/Markdown/JSON renderers and `comparable.py` the export next to
public scorecards.
"""

from bench.summarise.cli import (
    LoadedRun,
    SummaryError,
    load_run,
    main,
    summarise_records,
    summarise_run,
)

__all__ = ["LoadedRun", "SummaryError", "load_run", "main", "summarise_records", "summarise_run"]
