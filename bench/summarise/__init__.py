"""The summarise stage (standard library only): records in, paired tables out.

`load.py` reads a run, `summary.py` computes its typed Summary (`scan.py` walks the
records once for every per-arm counter, `pairing.py` pairs arms on the same questions),
`cli.py` prints or writes it; `model.py` holds the typed summary, `stats.py` the exact
tests, `render.py` the text/Markdown/JSON renderers and `comparable.py` the export next
to public scorecards.
"""

from bench.summarise.cli import main
from bench.summarise.load import LoadedRun, SummaryError, load_run
from bench.summarise.summary import summarise_records, summarise_run

__all__ = ["LoadedRun", "SummaryError", "load_run", "main", "summarise_records", "summarise_run"]
