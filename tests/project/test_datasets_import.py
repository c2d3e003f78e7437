"""`datasets/` is data only: `import datasets` in the project must be HuggingFace's package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.loaders.resolve import PROJECT_ROOT

PROBE = (
    "import json, datasets; "
    "print(json.dumps({'file': datasets.__file__, 'load': hasattr(datasets, 'load_dataset')}))"
)


def test_datasets_folder_is_not_a_package() -> None:
    """No __init__.py anywhere that would make `datasets/` shadow the library."""
    assert not (PROJECT_ROOT / "datasets" / "__init__.py").exists()


def test_import_datasets_from_repo_root() -> None:
    """With the repo root as cwd (first on sys.path), `import datasets` is the library."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["load"] is True
    assert found["file"] is not None
    assert not Path(found["file"]).resolve().is_relative_to(PROJECT_ROOT / "datasets")
