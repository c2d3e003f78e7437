"""The size gate of `make check` (tools/limits.py) flags what it should, and the tree passes."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _limits() -> ModuleType:
    spec = importlib.util.spec_from_file_location("limits", ROOT / "tools" / "limits.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_new_growth_and_stale_entries_are_breaches() -> None:
    limits = _limits()
    listed = dict.fromkeys(limits.GRANDFATHERED, 10)  # every listed entry fits: all stale
    found = {"bench/x.py": 401, "bench/x.py:f": 51, "bench/y.py": 400, "bench/y.py:g": 50}
    lines = limits.breaches({**listed, **found})
    assert "bench/x.py: module has 401 lines (limit 400); split it" in lines
    assert "bench/x.py:f: function has 51 lines (limit 50); split it" in lines
    assert not any(line.startswith("bench/y.py") for line in lines)
    assert sum("remove it from GRANDFATHERED" in line for line in lines) == len(listed)
    key, size = next(iter(limits.GRANDFATHERED.items()))
    assert any(line.startswith(f"{key}:") for line in limits.breaches({key: size + 1}))
    assert not any(line.startswith(f"{key}:") for line in limits.breaches({key: size}))


def test_the_tree_is_within_its_limits() -> None:
    limits = _limits()
    assert limits.breaches(limits.sizes(ROOT)) == []


def test_allowances_equal_todays_sizes_so_they_only_go_down() -> None:
    """An allowance above the code's size is a breach: it is lowered with the code (a ratchet)."""
    limits = _limits()
    found = limits.sizes(ROOT)
    assert {key: found.get(key) for key in limits.GRANDFATHERED} == limits.GRANDFATHERED
    key, size = next(iter(limits.GRANDFATHERED.items()))
    lines = limits.breaches({**limits.GRANDFATHERED, key: size - 1})
    assert lines == [
        f"{key}: has {size - 1} lines, allowed {size}; lower GRANDFATHERED to {size - 1}"
    ]
