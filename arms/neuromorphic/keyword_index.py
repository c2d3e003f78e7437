"""The archive's keyword search, ranked in memory exactly as FTS5 ranks it, for stores being read.

`ColdArchive.keyword_search` asks SQLite for `facts_fts MATCH '"t1" OR "t2" ...'` ordered
by `bm25(facts_fts)`, then id. An OR of a question's terms matches most of a LoCoMo
archive, and FTS5 scores every matching row (~2 µs a row, ~1.7 ms a question). Here the
same ranking is computed with numpy from FTS5's own postings, read once per store
version. FTS5's formula (sqlite fts5_aux.c `fts5Bm25Function`; k1 = 1.2, b = 0.75,
column weights 1):

    IDF(t)  = ln((N − n(t) + 0.5) / (n(t) + 0.5)), or 1e-6 where that is ≤ 0
    bm25(d) = −Σ_t IDF(t) · f(t,d)·(k1 + 1) / (f(t,d) + k1·(1 − b + b·|d| / avgdl))

N = rows of the FTS index (every scope of the file), n(t) = rows holding token t,
f(t,d) = occurrences of t in d (both columns), |d| = tokens of d, avgdl = tokens / N.
The operations are FTS5's, in its order, in IEEE double (a term a row lacks adds +0.0,
which changes nothing), so scores are bitwise equal and the order (ties by id) is too.
Postings come from FTS5 itself (an `fts5vocab` table in the temp schema: the file is
never written), and query terms are tokenised by a scratch in-memory FTS5 table with
the same `porter unicode61` tokenizer, so stems are FTS5's own; a term that is not
exactly one token leaves the query to SQLite.

When: the first keyword search at a file version (`ColdArchive.version`) goes to
SQLite; a second at the same version builds the index. Ingestion writes between any
two searches, so it always asks SQLite and never pays for a build.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import groupby

import numpy as np

from arms.neuromorphic.archive import ColdArchive

K1 = 1.2
B = 0.75
_VOCAB = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.armbench_facts_vocab"
    " USING fts5vocab(main, 'facts_fts', 'instance')"
)

_scratch = sqlite3.connect(":memory:", check_same_thread=False)
_scratch.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
_scratch.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
_scratch_lock = threading.Lock()


@lru_cache(maxsize=65_536)
def fts_tokens(term: str) -> tuple[str, ...]:
    """The tokens FTS5's `porter unicode61` tokenizer makes of `term`, in order."""
    with _scratch_lock:
        _scratch.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (term,))
        rows = _scratch.execute("SELECT term FROM v ORDER BY offset").fetchall()
        _scratch.execute("DELETE FROM t")
    return tuple(token for (token,) in rows)


class KeywordIndex:
    """FTS5 postings, document lengths and scope of one archive file, in numpy."""

    def __init__(self, archive: ColdArchive) -> None:
        a, c = archive.scope
        facts = archive.read(
            "SELECT id, agent_id = ? AND conversation_id = ? FROM facts ORDER BY id", (a, c)
        )
        self.ids = np.array([fid for fid, _ in facts], dtype=np.int64)
        self.in_scope = np.array([bool(mine) for _, mine in facts], dtype=bool)
        row_of = {int(fid): i for i, (fid, _) in enumerate(facts)}
        archive.read(_VOCAB)
        counts = archive.read(
            "SELECT term, doc, COUNT(*) FROM temp.armbench_facts_vocab"
            " GROUP BY term, doc ORDER BY term, doc"
        )
        rows = np.fromiter((row_of[doc] for _, doc, _ in counts), np.int64, len(counts))
        freq = np.fromiter((n for _, _, n in counts), np.float64, len(counts))
        size = np.zeros(len(facts), dtype=np.float64)
        np.add.at(size, rows, freq)  # tokens per row (whole numbers: exact)
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        start = 0
        for term, group in groupby(counts, key=lambda r: r[0]):
            end = start + sum(1 for _ in group)
            self.postings[term] = (rows[start:end], freq[start:end])
            start = end
        self.n = len(facts)
        avgdl = int(size.sum()) / self.n if self.n else 1.0
        self.norm = K1 * ((1 - B) + (B * size) / avgdl)
        """k1·(1 − b + b·|d|/avgdl) per row, as FTS5 computes it per row."""

    def search(self, terms: list[str], limit: int) -> list[int] | None:
        """Fact ids of this scope matching any term, best bm25 first, ties by id, capped.

        None when a term is not exactly one FTS5 token (the caller asks SQLite).
        """
        score = np.zeros(self.n, dtype=np.float64)
        matched = np.zeros(self.n, dtype=bool)
        for term in terms:
            tokens = fts_tokens(term)
            if len(tokens) != 1:
                return None
            hit = self.postings.get(tokens[0])
            n_hit = 0 if hit is None else len(hit[0])
            idf = math.log((self.n - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            if hit is None:
                continue
            pos, freq = hit
            score[pos] += idf * ((freq * (K1 + 1.0)) / (freq + self.norm[pos]))
            matched[pos] = True
        rows = np.flatnonzero(matched & self.in_scope)
        order = np.lexsort((self.ids[rows], -score[rows]))[:limit]
        return [int(fid) for fid in self.ids[rows[order]]]


@dataclass
class _Seen:
    version: tuple[int, int]
    """The file version the last search saw."""
    index: KeywordIndex | None = field(default=None)
    """Built on the second search at the same version."""


_seen: weakref.WeakKeyDictionary[ColdArchive, _Seen] = weakref.WeakKeyDictionary()


def keyword_search(archive: ColdArchive, terms: list[str], limit: int) -> list[int]:
    """`archive.keyword_search(terms, limit)`, from the in-memory index once the file is still."""
    if not terms or limit <= 0:
        return []
    version = archive.version()
    seen = _seen.get(archive)
    if seen is None or seen.version != version:
        _seen[archive] = _Seen(version)
        return archive.keyword_search(terms, limit)
    if seen.index is None:
        seen.index = KeywordIndex(archive)
    found = seen.index.search(terms, limit)
    return archive.keyword_search(terms, limit) if found is None else found
