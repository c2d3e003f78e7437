"""The archive's keyword search, ranked in memory exactly as FTS5 ranks it.

`ColdArchive.keyword_search` asks SQLite for `facts_fts MATCH '"t1" OR "t2" ...'` ordered
by `bm25(facts_fts)`, then id. An OR of a question's terms matches most of a LoCoMo
archive, and FTS5 scores every matching row (~2 µs a row, ~1.7 ms a question). Here the
same ranking is computed with numpy from FTS5's own postings, read once and then
kept current. FTS5's formula (sqlite fts5_aux.c `fts5Bm25Function`; k1 = 1.2, b = 0.75,
column weights 1):

    IDF(t)  = ln((N − n(t) + 0.5) / (n(t) + 0.5)), or 1e-6 where that is ≤ 0
    bm25(d) = −Σ_t IDF(t) · f(t,d)·(k1 + 1) / (f(t,d) + k1·(1 − b + b·|d| / avgdl))

N = rows of the FTS index (every scope of the file), n(t) = rows holding token t,
f(t,d) = occurrences of t in d (both columns), |d| = tokens of d, avgdl = tokens / N.
The operations are FTS5's, in its order, in IEEE double (a term a row lacks adds +0.0,
which changes nothing), so scores are bitwise equal and the order (ties by id) is too.
Postings come from FTS5 itself (an `fts5vocab` table in the temp schema: the file is
never written), and query terms are tokenised by a scratch in-memory FTS5 table with
the same `porter unicode61` tokenizer (facts added later likewise: `doc_tokens`), so
stems are FTS5's own; a term that is not exactly one token leaves the query to SQLite.

When: the first keyword search at a state of the file's facts (`_state`: no other
connection has committed, and the same newest fact id) goes to SQLite, unless the file
holds `LIVE_FROM` facts; a second at the same state builds the index. The engine then
reports every fact it writes (`written`), which the index adds as FTS5 would
(`doc_tokens`), so ingestion, which writes between any two searches, builds once the
archive is that large and searches in memory from then on. A commit by another
connection, or a fact written without the report, drops the index.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import groupby

import numpy as np

from arms.neuromorphic.archive import ColdArchive
from arms.neuromorphic.records import FactRow

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
    return _tokenize(term)


def _tokenize(term: str) -> tuple[str, ...]:
    """`fts_tokens` without the memo (whole documents)."""
    with _scratch_lock:
        _scratch.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (term,))
        rows = _scratch.execute("SELECT term FROM v ORDER BY offset").fetchall()
        _scratch.execute("DELETE FROM t")
    return tuple(token for (token,) in rows)


def stem_words(words: Iterable[str]) -> None:
    """Memoise the FTS5 token of each lower-case [a-z0-9] word in `_stems`.

    Such a word is exactly one token, its porter stem. Porter (sqlite fts5_porter.c)
    leaves a token shorter than 3 characters alone, and every rule of it rewrites a
    suffix of letters, so a word ending in a digit is its own stem; the other words not
    seen before are stemmed by the scratch table in one batch (one FTS5 write, ~0.1 ms).
    """
    if len(_stems) > 1_000_000:
        _stems.clear()
    new = []
    for word in {w for w in words if w not in _stems}:
        if len(word) < 3 or word[-1].isdigit():
            _stems[word] = word
        else:
            new.append(word)
    if not new:
        return
    with _scratch_lock:
        _scratch.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(new, 1))
        for doc, token in _scratch.execute("SELECT doc, term FROM v"):
            _stems[new[doc - 1]] = token
        _scratch.execute("DELETE FROM t")


def doc_tokens(texts: Sequence[str]) -> list[list[str]]:
    """The tokens FTS5's `porter unicode61` tokenizer makes of each document, in order.

    ASCII text: unicode61 splits at every character but [A-Za-z0-9] and folds case, so
    each word is one token (`stem_words`). Other text goes to the scratch table whole.
    """
    words = [_WORD.findall(text.lower()) if text.isascii() else None for text in texts]
    stem_words(w for ws in words if ws is not None for w in ws)
    stem = _stems.__getitem__
    return [
        list(_tokenize(text)) if ws is None else list(map(stem, ws))
        for text, ws in zip(texts, words, strict=True)
    ]


def query_tokens(terms: Sequence[str]) -> list[str] | None:
    """The one FTS5 token of each query term; None when a term is not exactly one."""
    stem_words(t for t in terms if _WORD.fullmatch(t))
    out = []
    for term in terms:
        tokens = (_stems[term],) if _WORD.fullmatch(term) else fts_tokens(term)
        if len(tokens) != 1:
            return None
        out.append(tokens[0])
    return out


def _posting() -> tuple[array[int], array[float]]:
    """An empty posting: rows (int64) and f(t,d) (float64)."""
    return array("q"), array("d")


_WORD = re.compile(r"[a-z0-9]+")
_stems: dict[str, str] = {}
"""Lower-case [a-z0-9] word → its FTS5 token (see `stem_words`)."""


class KeywordIndex:
    """FTS5 postings, document lengths and scope of one archive file.

    Rows are facts in id order; the per-row arrays (numpy) grow by doubling as facts
    are added. A token's postings are `array.array`s, appended to in place as facts are
    added and read by a search through their buffers (`b"".join`, `np.frombuffer`): no
    per-token numpy arrays to rebuild, one copy of the matched postings per search.
    """

    def __init__(self, archive: ColdArchive) -> None:
        a, c = archive.scope
        facts = archive.read(
            "SELECT id, agent_id = ? AND conversation_id = ? FROM facts ORDER BY id", (a, c)
        )
        self.n = len(facts)
        capacity = max(64, 2 * self.n)
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.in_scope = np.zeros(capacity, dtype=bool)
        self.size = np.zeros(capacity, dtype=np.float64)
        """|d|, tokens per row (both columns)."""
        self.ids[: self.n] = [fid for fid, _ in facts]
        self.in_scope[: self.n] = [bool(mine) for _, mine in facts]
        row_of = {int(fid): i for i, (fid, _) in enumerate(facts)}
        archive.read(_VOCAB)
        counts = archive.read(
            "SELECT term, doc, COUNT(*) FROM temp.armbench_facts_vocab"
            " GROUP BY term, doc ORDER BY term, doc"
        )
        rows = np.fromiter((row_of[doc] for _, doc, _ in counts), np.int64, len(counts))
        freq = np.fromiter((n for _, _, n in counts), np.float64, len(counts))
        size = np.zeros(self.n, dtype=np.float64)
        np.add.at(size, rows, freq)  # tokens per row (whole numbers: exact)
        self.postings: defaultdict[str, tuple[array[int], array[float]]] = defaultdict(_posting)
        """Token → (rows as int64, f(t,d) as float64), rows ascending."""
        start = 0
        for term, group in groupby(counts, key=lambda r: r[0]):
            end = start + sum(1 for _ in group)
            self.postings[term] = (
                array("q", rows[start:end].tobytes()),
                array("d", freq[start:end].tobytes()),
            )
            start = end
        self.size[: self.n] = size
        self.tokens = int(size.sum())

    def add(self, facts: Sequence[FactRow]) -> None:
        """Index facts of this scope just written to the file (ids above every row's).

        The two columns are tokenised as one text joined by a space: no token spans it.
        """
        docs = doc_tokens([f"{f.entity_name} {f.fact_content}" for f in facts])
        start, end = self.n, self.n + len(facts)
        while end > len(self.ids):
            self.ids, self.in_scope, self.size = (
                np.concatenate([a, np.zeros_like(a)]) for a in (self.ids, self.in_scope, self.size)
            )
        self.ids[start:end] = [f.id for f in facts]
        self.in_scope[start:end] = True
        self.size[start:end] = [len(doc) for doc in docs]
        self.tokens += sum(len(doc) for doc in docs)
        self.n = end
        postings = self.postings
        for row, doc in enumerate(docs, start):
            for token, count in Counter(doc).items():
                rows, counts = postings[token]
                rows.append(row)
                counts.append(count)

    def search(self, terms: list[str], limit: int) -> list[int] | None:
        """Fact ids of this scope matching any term, best bm25 first, ties by id, capped.

        None when a term is not exactly one FTS5 token (the caller asks SQLite). The
        length normalisation k1·(1 − b + b·|d|/avgdl) is computed, as FTS5 does, per
        row, for the rows a term matches.
        """
        n = self.n
        avgdl = self.tokens / n if n else 1.0
        tokens = query_tokens(terms)
        if tokens is None:
            return None
        hits, idfs = [], []
        for token in tokens:
            hit = self.postings.get(token)
            n_hit = 0 if hit is None else len(hit[0])
            idf = math.log((n - n_hit + 0.5) / (n_hit + 0.5))
            if hit is not None:
                hits.append(hit)
                idfs.append(1e-6 if idf <= 0.0 else idf)
        if not hits:
            return []
        # all terms in one pass: the same elementwise operations, and `np.add.at` adds
        # each row's terms in term order from 0.0, as a loop of `score[pos] += ...` does
        pos = np.frombuffer(b"".join(p for p, _ in hits), dtype=np.int64)
        freq = np.frombuffer(b"".join(f for _, f in hits), dtype=np.float64)
        idf_of = np.repeat(np.array(idfs), [len(p) for p, _ in hits])
        norm = K1 * ((1 - B) + (B * self.size[pos]) / avgdl)
        score = np.zeros(n, dtype=np.float64)
        np.add.at(score, pos, idf_of * ((freq * (K1 + 1.0)) / (freq + norm)))
        matched = np.zeros(n, dtype=bool)
        matched[pos] = True
        rows = np.flatnonzero(matched & self.in_scope[:n])
        ids = self.ids[:n]
        order = np.lexsort((ids[rows], -score[rows]))[:limit]
        found: list[int] = ids[rows[order]].tolist()
        return found


def _state(archive: ColdArchive) -> tuple[int, int]:
    """(commits by other connections, newest fact id): facts_fts changed iff this did.

    This connection's own fact writes are reported through `written`.
    """
    ((version, newest),) = archive.read(_STATE)
    return int(version), -1 if newest is None else int(newest)


LIVE_FROM = 2_000
"""Facts in the file (newest id) from which a search at a new state builds the index at
once. Keeping it current costs ~0.1 ms per exchange (tokenising 4 facts); FTS5 costs
~0.3 ms a search at 1,400 facts and ~1.5 ms at 14,000, the in-memory ranking ~0.2 ms."""

_STATE = "SELECT (SELECT data_version FROM pragma_data_version), (SELECT MAX(id) FROM facts)"


class KeywordSearch:
    """`archive.keyword_search`, from an in-memory `KeywordIndex` once one is built.

    One per open archive connection, owned by the engine that writes through it: the
    engine reports each fact it writes (`written`), so the index stays current without
    reading the file again. `state` is the file state (`_state`) the last search or
    reported write saw; `index` is built on the second search at one state.
    """

    def __init__(self, archive: ColdArchive) -> None:
        """Searches `archive`; no index until the searches show the file is stable."""
        self.archive = archive
        self.state: tuple[int, int] | None = None
        self.index: KeywordIndex | None = None

    def search(self, terms: list[str], limit: int) -> list[int]:
        """`archive.keyword_search(terms, limit)`: the same ids in the same order."""
        if not terms or limit <= 0:
            return []
        archive = self.archive
        state = _state(archive)
        if state != self.state:
            self.state, self.index = state, None
            if state[1] < LIVE_FROM:
                return archive.keyword_search(terms, limit)
        if self.index is None:
            self.index = KeywordIndex(archive)
        found = self.index.search(terms, limit)
        return archive.keyword_search(terms, limit) if found is None else found

    def written(self, facts: Sequence[FactRow]) -> None:
        """Report facts this connection has just written (after `archive.write`).

        The index adds them when nothing else changed the file since its state;
        otherwise it is dropped (the next searches ask SQLite, then rebuild).
        """
        if self.state is None or not facts:
            return
        ids = [f.id for f in facts]
        if min(ids) > self.state[1]:  # what others did since shows at the next search
            if self.index is not None:
                self.index.add(facts)
            self.state = (self.state[0], max(ids))
        else:
            self.state, self.index = None, None
