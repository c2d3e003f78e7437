"""tests/ mirrors the packages: no test module at its root, a package per folder, one FakeChat."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def test_no_module_is_left_at_the_root_of_tests() -> None:
    loose = [p.name for p in TESTS.glob("*.py") if p.name not in ("__init__.py", "conftest.py")]
    assert not loose, f"move into tests/<package>/ or tests/support/ (CONTRIBUTING): {loose}"


def test_every_folder_of_tests_is_a_package() -> None:
    folders = [p for p in TESTS.iterdir() if p.is_dir() and any(p.glob("*.py"))]
    assert len(folders) > 10, "the folders were not found"
    missing = sorted(p.name for p in folders if not (p / "__init__.py").is_file())
    assert not missing, f"no __init__.py in tests/{missing}"


def test_support_holds_no_tests_and_the_one_fake_chat() -> None:
    assert not list((TESTS / "support").glob("test_*.py"))
    defined = [
        p.relative_to(ROOT).as_posix()
        for p in sorted(TESTS.rglob("*.py"))
        if re.search(r"^class FakeChat\b", p.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert defined == ["tests/support/fake_chat.py"]
