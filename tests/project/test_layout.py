"""Dependencies go `arms -> bench` only: every bench module imports with `arms` blocked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

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


# ---- the import graph: no cycles, and stages import only downward --------------------

STAGES = {
    # rank: a module may import modules of its own stage or of a lower rank only
    "nouns": 0,  # bench/*.py: shared nouns (types, records, config, paths, errors, ...)
    "providers": 1,
    "loaders": 1,
    "scoring": 2,
    "arm": 2,  # what an arm author imports: protocol, registry, checkpoint, fusion, topk
    "judge": 3,  # the LLM judges: protocol, prompts, official judges, judge set
    "remote": 3,
    "answer": 4,  # the answer step: prompt, context fit, repeats (judges its answers)
    "summarise": 4,  # standard library only (tests/summarise/test_summarise_cli.py)
    "report": 5,
    "export": 5,  # python -m bench.export (inspect logs)
    "quick": 8,  # armbench run (python -m bench.quick): flags to bench.run overrides
    "verify": 5,
    "run": 6,
    "suite": 7,
    "published": 7,  # published results: import, merge, export (python -m bench.published)
    "screen": 8,  # the `python -m bench.screen` command
    "proxy": 8,  # python -m bench.proxy (the accounting proxy on its own)
    "perf": 9,
    "dev": 9,  # developer commands
    "calibrate": 8,
    "cleanup": 8,  # python -m bench.cleanup (a killed live run's namespaces)
    "board": 8,  # python -m bench.board (a leaderboard of runs)
}


def _modules() -> dict[str, Path]:
    found = {}
    for top in ("bench", "arms"):
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere (functions and TYPE_CHECKING too)."""
    import ast

    modules = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    head = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*head, *([node.module] if node.module else [])])
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                found = resolve(target)
                if found and found != name:
                    graph[name].add(found)
    return graph


def _stage(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "arms":
        return "arms"
    if len(parts) == 1:
        return "nouns"
    if (ROOT / "bench" / f"{parts[1]}.py").is_file():
        return "nouns"
    return parts[1]


def test_the_import_graph_has_no_cycle() -> None:
    from graphlib import CycleError, TopologicalSorter

    try:
        tuple(TopologicalSorter(_import_graph()).static_order())
    except CycleError as exc:
        raise AssertionError(f"import cycle: {' -> '.join(exc.args[1])}") from None


def test_stages_import_downward_only() -> None:
    upward = []
    for module, targets in _import_graph().items():
        here = _stage(module)
        if here == "arms":
            continue  # arms -> bench only: test_bench_never_imports_arms
        assert here in STAGES, f"{module}: stage {here!r} has no rank in STAGES"
        for target in targets:
            there = _stage(target)
            if there != "arms" and STAGES[there] > STAGES[here]:
                upward.append(f"{module} ({here}) imports {target} ({there})")
    assert upward == [], "\n".join(sorted(upward))


def test_no_module_imports_a_private_name_from_another() -> None:
    import ast

    private = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in (
                "bench",
                "arms",
            ):
                private += [
                    f"{name}: {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    assert private == [], "\n".join(private)
