"""Dependencies go `arms -> bench` only: every bench module imports with `arms` blocked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import importlib, importlib.abc, pkgutil, sys

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "arms" or name.startswith("arms."):
            raise ImportError(f"bench imported {name}")
        return None

sys.meta_path.insert(0, Block())
import bench
names = [m.name for m in pkgutil.walk_packages(bench.__path__, "bench.")
         if not m.name.endswith("__main__")]
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def test_bench_never_imports_arms() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) > 30  # the walk really saw the package
