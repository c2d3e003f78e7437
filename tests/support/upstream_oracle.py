"""Upstream's own functions as test oracles, compiled from the shared copies of its files.

Only the named top-level definitions are compiled (never the whole module, whose imports
need packages armbench does not use), into a namespace the test supplies with whatever
those definitions call (a fake model, `json`, `re`, ...). Test code only: armbench itself
reads templates out of the syntax tree and never executes upstream code.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any


def compile_upstream(path: Path, wanted: set[str], namespace: dict[str, Any]) -> dict[str, Any]:
    """Compile the top-level definitions of `path` named in `wanted` into `namespace`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    keep = []
    for node in tree.body:
        names = {getattr(node, "name", "")}
        if isinstance(node, ast.Assign):
            names = {ast.unparse(t) for t in node.targets}
        if names & wanted:
            keep.append(node)
    missing = (
        wanted
        - {getattr(n, "name", "") for n in keep}
        - {ast.unparse(t) for n in keep if isinstance(n, ast.Assign) for t in n.targets}
    )
    if missing:
        raise LookupError(f"{path.name}: no top-level {sorted(missing)}")
    exec(compile(ast.Module(body=keep, type_ignores=[]), path.name, "exec"), namespace)  # noqa: S102
    return namespace
