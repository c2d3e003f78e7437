"""Every field of every public dataclass in bench/ and arms/ has a docstring (issue 9)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _is_dataclass(node: ast.ClassDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Name) and target.id == "dataclass":
            return True
        if isinstance(target, ast.Attribute) and target.attr == "dataclass":
            return True
    return False


def _is_docstring(node: ast.stmt | None) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def undocumented_fields() -> list[str]:
    """`path:Class.field` for every public dataclass field not followed by a string literal."""
    missing: list[str] = []
    paths = sorted((ROOT / "bench").rglob("*.py")) + sorted((ROOT / "arms").rglob("*.py"))
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            if not _is_dataclass(node):
                continue
            body = node.body
            for i, stmt in enumerate(body):
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    following = body[i + 1] if i + 1 < len(body) else None
                    if not _is_docstring(following):
                        rel = path.relative_to(ROOT).as_posix()
                        missing.append(f"{rel}:{node.name}.{stmt.target.id}")
    return missing


def test_every_public_dataclass_field_has_a_docstring() -> None:
    missing = undocumented_fields()
    assert not missing, f"{len(missing)} dataclass fields lack a docstring:\n" + "\n".join(missing)


def test_checker_finds_the_dataclasses() -> None:
    source = ast.parse("@dataclass\nclass A:\n    x: int\n    y: int = 0\n    '''Doc.'''\n")
    cls = source.body[0]
    assert isinstance(cls, ast.ClassDef) and _is_dataclass(cls)
    assert not _is_docstring(cls.body[1]) and _is_docstring(cls.body[2])
