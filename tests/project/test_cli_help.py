"""`python -m <cli> --help` prints usage and exits 0 for every command-line entry point.

The entry points are found, not listed: every `bench/**/__main__.py` package and every
module with an `if __name__ == "__main__"` block, so a new command is covered at once.
"""

from __future__ import annotations

import pytest

from tests.support.e2e_support import ROOT, run_cli


def cli_modules() -> list[str]:
    """Every runnable module under bench/, as `python -m` names, sorted."""
    found = set()
    for path in (ROOT / "bench").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if path.name == "__main__.py":
            found.add(".".join(parts[:-1]))
        elif 'if __name__ == "__main__"' in path.read_text(encoding="utf-8"):
            found.add(".".join(parts))
    return sorted(found)


DOCUMENTED = {
    "bench.run",
    "bench.summarise",
    "bench.report",
    "bench.verify",
    "bench.screen",
    "bench.suite",
    "bench.perf",
    "bench.cleanup",
    "bench.dev.llm_smoke",
}


def test_every_documented_command_is_found() -> None:
    assert set(cli_modules()) >= DOCUMENTED
    if (ROOT / "bench" / "published").is_dir():
        assert "bench.published" in cli_modules()


@pytest.mark.parametrize("module", cli_modules())
def test_help_prints_usage_and_exits_0(module: str) -> None:
    proc = run_cli("--help", module=module, timeout=120)
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert "Traceback" not in proc.stderr, proc.stderr[-1500:]
    first = proc.stdout.lstrip().splitlines()[0] if proc.stdout.strip() else ""
    hydra = module in ("bench.run", "bench.screen", "bench.suite")
    assert first.startswith("usage: python -m ") or (hydra and "powered by Hydra" in first), (
        proc.stdout[:500]
    )
