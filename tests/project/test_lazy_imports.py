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


def loaded_after(code: str, modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` a fresh interpreter has loaded after running `code`."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(done.stdout)
    return loaded


@pytest.mark.parametrize("module", ["bench", "bench.summarise"])
def test_module_imports_no_heavy_library(module: str) -> None:
    """`import <module>` leaves every heavy library out of sys.modules."""
    assert loaded_after(f"import {module}", HEAVY) == []


def test_code_hash_reads_module_sources_without_importing_them() -> None:
    """Hashing the engine's code must not import the LanceDB hot store (and pyarrow)."""
    code = "from arms.neuromorphic.arm import code_hash; code_hash()"
    assert loaded_after(code, ("arms.neuromorphic.hotstore", "pyarrow", "lancedb")) == []
