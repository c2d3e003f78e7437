"""Start-up guard: the package and the summariser import no heavy library (issue 15 item 3).

Checked in a fresh interpreter (this test process has imported everything already).
A guard on what is imported, not a timing: timings live in `python -m bench.perf`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "numpy", "lancedb", "openai", "plotly", "wordllama", "tokenizers", "pyarrow")


@pytest.mark.parametrize("module", ["bench", "bench.summarise"])
def test_module_imports_no_heavy_library(module: str) -> None:
    """`import <module>` leaves every heavy library out of sys.modules."""
    code = (
        f"import json, sys, {module}\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
