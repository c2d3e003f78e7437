"""The in-memory keyword search ranks exactly as the archive's FTS5 query does."""

from __future__ import annotations

import itertools
from pathlib import Path

from arms.neuromorphic import keyword_index
from arms.neuromorphic.archive import ColdArchive
from arms.neuromorphic.keyword_index import KeywordIndex, KeywordSearch, fts_tokens
from arms.neuromorphic.records import FactRow, Tier
from tests.arms.test_engine_support import HashEmbedder

WORDS = (
    "caroline",
    "melanie",
    "support",
    "group",
    "painting",
    "paints",
    "painted",
    "sunrise",
    "lake",
    "camping",
    "adoption",
    "agencies",
    "kids",
    "beach",
    "2022",
)


def _archive(path: Path, scope: str, facts: int, start: int = 1) -> ColdArchive:
    archive = ColdArchive(path, "armbench", scope)
    embed = HashEmbedder()
    rows = []
    for i in range(facts):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(1 + i % 6)]
        text = " ".join(words)
        rows.append(
            FactRow(
                start + i,
                1,
                WORDS[i % 3].title(),
                f"{text} {text[: i % 9]}",
                Tier.ACTIVE,
                (),
                "8 May 2023",
                (f"D1:{i}",),
                embed.embed([text])[0],
            )
        )
    archive.write([(1, "insert", {"ids": [r.id for r in rows]})], rows)
    archive.commit()
    return archive


def test_bm25_ranking_equals_sqlite_for_every_query(tmp_path: Path) -> None:
    """Both scopes of one file: FTS5 statistics span the file, results stay in scope."""
    path = tmp_path / "archive.sqlite"
    other = _archive(path, "other", 40, start=1)
    archive = _archive(path, "mine", 60, start=41)
    index = KeywordIndex(archive)
    queries = [list(c) for n in (1, 2, 3, 5) for c in itertools.combinations(WORDS, n)][:400]
    queries += [["nothing"], ["caroline", "nothing"], ["paint"]]
    for terms in queries:
        for limit in (1, 5, 60):
            assert index.search(terms, limit) == archive.keyword_search(terms, limit), terms
    assert fts_tokens("painting") == ("paint",) and fts_tokens("a-b") == ("a", "b")
    assert index.search(["a-b"], 5) is None  # not one token: left to SQLite
    other.close()
    archive.close()


def test_index_is_built_on_the_second_search_at_one_version(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "archive.sqlite", "mine", 30)
    seen = KeywordSearch(archive)
    assert seen.search(["caroline"], 5) == archive.keyword_search(["caroline"], 5)
    assert seen.index is None  # the first search at this version asked SQLite
    seen.search(["lake"], 5)
    assert seen.index is not None
    row = FactRow(
        999,
        2,
        "Lake",
        "lake lake lake",
        Tier.ACTIVE,
        (),
        "9 May 2023",
        ("D2:1",),
        HashEmbedder().embed(["lake"])[0],
    )
    archive.write([(2, "insert", {"ids": [999]})], [row])  # a write: a new version
    assert seen.search(["lake"], 1) == [999] == archive.keyword_search(["lake"], 1)
    assert seen.index is None
    archive.close()


def test_index_kept_current_by_reported_writes_ranks_as_sqlite(tmp_path: Path) -> None:
    """Facts reported with `written` are added as FTS5 tokenises them (punctuation, case,
    digits, non-ASCII), and the index is never rebuilt while only this connection writes."""
    archive = _archive(tmp_path / "archive.sqlite", "mine", 30)
    other = _archive(tmp_path / "archive.sqlite", "other", 0, start=10_000)
    search = KeywordSearch(archive)
    search.search(["lake"], 5)
    search.search(["lake"], 5)
    index = search.index
    assert index is not None
    texts = [
        "Painted the LAKE at sunrise, twice!",
        "kids' beach-camping in 2022 (w12)",
        "adoption agencies: caroline's café visit",
        "a b cd hoping hopes topic77",
        "Melanie paints; Caroline supports — über lake",
    ]
    embed, fid = HashEmbedder(), 100
    for step, text in enumerate(texts * 3):
        rows = []
        for j in range(1 + step % 3):
            fid += 1
            name = WORDS[(step + j) % len(WORDS)].title()
            rows.append(
                FactRow(
                    fid,
                    2,
                    name,
                    f"{text} {WORDS[fid % len(WORDS)]}",
                    Tier.ACTIVE,
                    (),
                    "9 May 2023",
                    ("D2:1",),
                    embed.embed([text])[0],
                )
            )
        archive.write([], rows)
        search.written(rows)
        queries = [
            ["lake"],
            ["painting", "kids"],
            ["cafe", "caroline", "2022"],
            ["hope", "topic77", "cd"],
            ["uber", "sunrise"],
            list(WORDS),
        ]
        for terms in queries:
            want = archive.keyword_search(terms, 60)
            assert search.search(terms, 60) == want, (step, terms)
        assert search.index is index
    archive.commit()
    other.write([(1, "insert", {"ids": []})], [])
    other.commit()  # another connection committed: the index is dropped
    assert search.search(["lake"], 60) == archive.keyword_search(["lake"], 60)
    assert search.index is None
    other.close()
    archive.close()


def test_words_ending_in_a_digit_or_short_are_their_own_stem() -> None:
    words = ["a", "is", "ss", "ies", "w12", "topic55", "2022", "hoping123", "caresses1", "ed"]
    words += ["hoping", "caresses", "relational", "happy", "sses"]
    keyword_index.stem_words(words)
    assert {w: keyword_index._stems[w] for w in words} == {
        w: keyword_index._tokenize(w)[0] for w in words
    }


def test_a_large_file_builds_the_index_at_the_first_search(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "archive.sqlite", "mine", 20, start=keyword_index.LIVE_FROM)
    search = KeywordSearch(archive)
    assert search.search(["lake"], 5) == archive.keyword_search(["lake"], 5)
    assert search.index is not None
    archive.close()
