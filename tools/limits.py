"""Size gate for `make check`: modules <= 400 lines, functions <= 50 lines.

ruff has no line-count rules (its C901/PLR09xx gates cover complexity, branches and
statements), so this walks the package sources with `ast`. Code that was over a limit
when the gate came in is listed in `GRANDFATHERED` with its size today, a ratchet: it may
shrink, never grow, and each allowance equals the current size, so the change that
shrinks the code lowers its entry in the same commit (an allowance above the size is a
breach: the next change could grow back into it unseen); an entry that fits again is
removed. So the allowances only go down, and the list only shrinks.
Run: `python tools/limits.py` (exit 1 and one line per breach).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MODULE_LINES = 400
FUNCTION_LINES = 50
ROOTS = ("bench", "arms")

GRANDFATHERED: dict[str, int] = {
    "arms/neuromorphic/engine.py": 425,
    "bench/run/__main__.py:_hydra_main": 61,
    "bench/run/scale/unit_task.py:run_unit": 58,
    "bench/suite/niah.py:niah_suite": 54,
}
"""Over-limit code: `path` or `path:function` -> its size in lines, exactly (a ratchet)."""


def sizes(root: Path) -> dict[str, int]:
    """`path` -> module lines and `path:function` -> function lines, for every source file."""
    found: dict[str, int] = {}
    for top in ROOTS:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            found[rel] = len(text.splitlines())
            for node in ast.walk(ast.parse(text, rel)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    key = f"{rel}:{node.name}"
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    found[key] = max(found.get(key, 0), length)
    return found


def breaches(found: dict[str, int]) -> list[str]:
    """One line per breach: over the limit, grown past or shrunk below its entry, or stale."""
    lines = []
    for key, size in sorted(found.items()):
        limit = FUNCTION_LINES if ":" in key else MODULE_LINES
        allowed = max(limit, GRANDFATHERED.get(key, 0))
        if size > allowed:
            what = "function" if ":" in key else "module"
            lines.append(f"{key}: {what} has {size} lines (limit {allowed}); split it")
    for key, size in sorted(GRANDFATHERED.items()):
        limit = FUNCTION_LINES if ":" in key else MODULE_LINES
        now = found.get(key, 0)
        if now <= limit:
            lines.append(f"{key}: fits the {limit}-line limit now; remove it from GRANDFATHERED")
        elif now < size:
            lines.append(f"{key}: has {now} lines, allowed {size}; lower GRANDFATHERED to {now}")
    return lines


def main() -> int:
    """Print each breach (`error: ...`) and return 1 if there is any."""
    root = Path(__file__).resolve().parents[1]
    problems = breaches(sizes(root))
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
