"""Docs references resolve inside the repository.

Every "methodology §N" or "§N.M" cited in code, config, tests and docs is a heading of
docs/methodology.md; every relative Markdown link in the README, CONTRIBUTING, CHANGELOG
and docs/ points at a file that exists (and, with a #fragment, at a heading there); every
`docs/<name>.md` named in code exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
METHODOLOGY = ROOT / "docs" / "methodology.md"
CITING_DIRS = ("bench", "arms", "tests", "conf", "docs", "datasets")
CITING_FILES = ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "Makefile", "pyproject.toml")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml"}
MARKDOWN = (
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")),
)

_SECTION = r"§\d+(?:\.\d+)?"
# "methodology §4", "methodology §4, §7.9", "methodology §4.1–§4.9", "methodology §1 and §2"
_CITATION = re.compile(rf"methodology\)?\s+({_SECTION}(?:\s*(?:,|and|–|-|/)\s*{_SECTION})*)")
_HEADING = re.compile(rf"^#{{2,4}} ({_SECTION})\s+\S", re.MULTILINE)
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_DOCS_PATH = re.compile(r"(?<![\w/.])docs/[\w./-]+\.md\b")


def cited_sections(text: str) -> list[str]:
    """Section numbers cited as "methodology §N[.M]" (including lists after one)."""
    return [s[1:] for match in _CITATION.finditer(text) for s in re.findall(_SECTION, match[1])]


def citing_files() -> list[Path]:
    """Every text file that may cite the methodology."""
    files = [ROOT / name for name in CITING_FILES if (ROOT / name).is_file()]
    for folder in CITING_DIRS:
        files += [
            p
            for p in sorted((ROOT / folder).rglob("*"))
            if p.is_file() and p.suffix in SUFFIXES and ".cache" not in p.parts
        ]
    return files


def headings() -> list[str]:
    """Numbers of the `## §N` / `### §N.M` headings of docs/methodology.md, in order."""
    return [h[1:] for h in _HEADING.findall(METHODOLOGY.read_text(encoding="utf-8"))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of every heading of a Markdown file (outside code fences)."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def test_citation_pattern_reads_lists_and_ranges() -> None:
    text = "(methodology §4, §7.9) ... methodology §4.1–§4.9 ... §5 alone ... methodology §1."
    assert cited_sections(text) == ["4", "7.9", "4.1", "4.9", "1"]


def test_methodology_headings_are_unique_and_nested() -> None:
    numbers = headings()
    assert len(numbers) == len(set(numbers)), "a § number is used twice"
    tops = {n for n in numbers if "." not in n}
    assert tops >= {"1", "2", "3", "4", "5", "6", "7"}
    for n in numbers:
        assert n.split(".")[0] in tops, f"§{n} has no parent section"


def test_every_cited_section_exists() -> None:
    known = set(headings())
    cited: dict[str, list[str]] = {}
    for path in citing_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number in cited_sections(text):
            cited.setdefault(number, []).append(str(path.relative_to(ROOT)))
    assert len(cited) >= 6, f"found too few citations to be real: {sorted(cited)}"
    missing = {n: sorted(set(where)) for n, where in cited.items() if n not in known}
    assert not missing, f"cited but not a heading of docs/methodology.md: {missing}"


def test_engine_step_citations_match_their_subsection() -> None:
    """The engine's "§4 step N" is subsection §4.N, headed "Step N"."""
    text = METHODOLOGY.read_text(encoding="utf-8")
    titles = dict(re.findall(r"^#{2,4} §(\d+\.\d+)\s+(.+)$", text, re.MULTILINE))
    steps = set()
    for path in citing_files():
        found = re.findall(r"§(\d+) step (\d+)", path.read_text(encoding="utf-8", errors="replace"))
        steps |= {(f"{sec}.{step}", step, str(path.relative_to(ROOT))) for sec, step in found}
    assert len(steps) >= 5, "the engine's step citations were not found"
    for number, step, where in sorted(steps):
        assert number in titles, f"{where}: step {step} cited, but there is no §{number}"
        assert titles[number].startswith(f"Step {step}:"), f"§{number} is not step {step}"


def test_methodology_internal_references_exist() -> None:
    known = set(headings())
    text = METHODOLOGY.read_text(encoding="utf-8")
    referenced = {s[1:] for s in re.findall(_SECTION, _HEADING.sub("", text))}
    assert referenced, "the methodology cross-references nothing"
    assert referenced <= known, f"unknown § in methodology.md: {sorted(referenced - known)}"


def _resolves(dest: Path, fragment: str) -> bool:
    """The file exists inside the repository and, for a Markdown #fragment, so does the heading."""
    if not dest.exists() or not dest.is_relative_to(ROOT):
        return False
    return not (fragment and dest.suffix == ".md") or fragment in anchors(dest)


@pytest.mark.parametrize("name", MARKDOWN)
def test_relative_markdown_links_resolve(name: str) -> None:
    source = ROOT / name
    text = _FENCE.sub("", source.read_text(encoding="utf-8"))
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, fragment = target.partition("#")
        dest = (source.parent / path_part).resolve() if path_part else source
        if not _resolves(dest, fragment):
            broken.append(target)
    assert not broken, f"{name}: links to nothing: {broken}"


def test_docs_paths_named_in_code_exist() -> None:
    named: dict[str, set[str]] = {}
    for path in citing_files():
        for ref in _DOCS_PATH.findall(path.read_text(encoding="utf-8", errors="replace")):
            named.setdefault(ref, set()).add(str(path.relative_to(ROOT)))
    assert "docs/interfaces.md" in named
    missing = {ref: sorted(w) for ref, w in named.items() if not (ROOT / ref).is_file()}
    assert not missing, f"named but absent: {missing}"


# ---- README and CONTRIBUTING name files that exist ---------------------------------------

_CODE_PATH = re.compile(r"`((?:bench|arms|tools|tests|conf|docs|datasets|results)/[^`\s]*)`")
OUTPUTS = {"datasets/.cache/", "results/locomo-offline"}
"""Paths the commands write (git-ignored), named as where to look, not as files in the tree."""


def named_paths(text: str) -> list[str]:
    """Backticked repository paths (`bench/x.py`, `conf/arm/`, `bench/*.py`), templates left out."""
    text = _FENCE.sub("", text)
    found = [m.split("#")[0].split("::")[0].rstrip(".,:") for m in _CODE_PATH.findall(text)]
    return [re.sub(r"\.py:\w+$", ".py", p) for p in found if "<" not in p]


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md"])
def test_file_names_in_readme_and_contributing_exist(name: str) -> None:
    paths = named_paths((ROOT / name).read_text(encoding="utf-8"))
    assert len(paths) >= 5, f"{name}: found too few paths to be real: {paths}"
    absent = [
        p
        for p in paths
        if p not in OUTPUTS and not (any(ROOT.glob(p)) if "*" in p else (ROOT / p).exists())
    ]
    assert not absent, f"{name}: names what the tree does not hold: {absent}"


def test_the_readme_nouns_row_names_modules_of_bench() -> None:
    """README's "Where things are": each `name` in the `bench/*.py` row is bench/<name>.py."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `bench/*.py` |"))
    names = re.findall(r"`(\w+)`", row.split("|")[2])
    assert len(names) >= 8, names
    assert [n for n in names if not (ROOT / "bench" / f"{n}.py").is_file()] == []


_DURATION = re.compile(r"\d+(?:\.\d+)?(?:[–-]\d+)?\s?(?:min|minutes|s)\b")


def test_make_locomos_time_is_stated_in_the_readme_only() -> None:
    """One home for the figure (README "Results", measured there); elsewhere, a pointer."""
    readme = [line for line in _lines("README.md") if "make locomo" in line or "35–40 s" in line]
    assert any(_DURATION.search(line) for line in readme), "README states no time"
    elsewhere = [
        f"{name}: {line.strip()}"
        for name in MARKDOWN
        if name not in ("README.md", "CHANGELOG.md")  # the changelog is history
        for line in _lines(name)
        if "make locomo" in line and _DURATION.search(line)
    ]
    assert not elsewhere, f"a second figure for make locomo's time: {elsewhere}"


def _lines(name: str) -> list[str]:
    return _FENCE.sub("", (ROOT / name).read_text(encoding="utf-8")).splitlines()
