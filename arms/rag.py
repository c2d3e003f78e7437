"""rag: overlapping turn windows, embedded once at ingest, top-k by cosine in LanceDB.

The flat turn list is cut into windows of `window` turns every `stride` turns; each
chunk is headed with its first turn's session date (and a new header wherever the
session changes inside the window, so no turn is ever shown under the wrong date).
No LLM is called at ingest. With `hybrid_bm25`, BM25 (rank-bm25) ranks the same
chunks and the two lists are fused with Reciprocal Rank Fusion.

The context block the answerer sees (worked example, top_k = 2)::

    [Session 1 — 1:56 pm on 8 May, 2023]
    Caroline: I went to a LGBTQ support group yesterday and it was so powerful.
    Melanie: Wow, that's cool, Caroline! What happened that was so awesome?

    [Session 2 — 1:14 pm on 25 May, 2023]
    Caroline: I've been researching adoption agencies lately.
    ...
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from bench import __version__
from bench.arm import ArmServices
from bench.arm.checkpoint import IngestCheckpoint
from bench.hashing import stable_hash_items
from bench.paths import contained, safe_name
from bench.types import AskedQuestion, Context, ContextItem, Conversation, Turn

TABLE = "chunks"
EMBED_BATCH = 1024
"""Chunks embedded and written to LanceDB per step (the embedder bounds its own tokens)."""
VECTORS = "vectors.npz"
"""The table's vectors and chunk ids as read back from LanceDB (what retrieval loads)."""


@dataclass
class RagConfig:
    """Options of the rag arm (methodology §3 defaults)."""

    kind: str = "rag"
    """Registered arm kind; always `rag`."""
    window: int = 4
    """Turns per chunk."""
    stride: int = 2
    """Turns between chunk starts (window − stride turns overlap)."""
    top_k: int = 10
    """Chunks put in the context."""
    hybrid_bm25: bool = False
    """Also rank chunks with BM25 and fuse with the dense ranking by RRF."""
    rrf_k: int = 60
    """Reciprocal Rank Fusion constant (used with `hybrid_bm25`)."""
    order: str = "score"
    """`score` (best first) or `time` (chronological) in the rendered context."""


@dataclass(frozen=True)
class Chunk:
    """A window of consecutive turns, rendered with its session headers."""

    index: int
    """Position of the chunk in the conversation's chunk list."""
    text: str
    """The chunk's turns rendered with their session headers."""
    dia_ids: tuple[str, ...] = field(default=())
    """Dia_ids of the chunk's turns, in order."""


class ChunkWindows(Sequence[Chunk]):
    """A conversation's chunks, each rendered when it is read: never all texts at once.

    Holds the flat turn list (references, not copies) and each window's first turn, so
    a 10M-token conversation's chunk texts (twice its transcript, windows overlapping)
    exist one embedding step, or one question's top k, at a time.
    """

    def __init__(self, conversation: Conversation, window: int, stride: int) -> None:
        if window < 1 or stride < 1:
            raise ValueError("rag: window and stride must be >= 1")
        self._conversation = conversation
        self._turns = conversation.turns()
        self._window = window
        starts = list(range(0, max(len(self._turns) - window, 0) + 1, stride))
        if starts and starts[-1] + window < len(self._turns):
            starts.append(len(self._turns) - window)
        self._starts = starts

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> Chunk: ...

    @overload
    def __getitem__(self, index: slice) -> list[Chunk]: ...

    def __getitem__(self, index: int | slice) -> Chunk | list[Chunk]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = range(len(self))[index]  # negative indices, IndexError past the end
        s = self._starts[i]
        return _render_chunk(i, self._conversation, self._turns[s : s + self._window])


def make_chunks(conversation: Conversation, window: int, stride: int) -> list[Chunk]:
    """Overlapping windows over the flat turn list; the last window reaches the end."""
    return list(ChunkWindows(conversation, window, stride))


def _render_chunk(index: int, conversation: Conversation, turns: list[Turn]) -> Chunk:
    lines: list[str] = []
    current = None
    for turn in turns:
        if turn.session != current:
            current = turn.session
            lines.append(conversation.session(turn.session).header())
        lines.append(turn.render())
    return Chunk(index, "\n".join(lines), tuple(t.dia_id for t in turns))


class RagArm:
    """Chunked dense retrieval over the transcript (optionally fused with BM25)."""

    def __init__(self, name: str, config: RagConfig, services: ArmServices) -> None:
        self.name = name
        self.config = config
        self.services = services
        self._vectors: Any = None
        self._chunk_ids: Any = None
        self._chunks: Sequence[Chunk] = ()
        self._bm25: Any = None

    def fingerprint(self) -> dict[str, Any]:
        """What the store is built from: windows, embedder and code.

        Retrieval knobs are left out, so a top_k sweep reuses one store.
        """
        return {
            "kind": "rag",
            "version": __version__,
            "code": _code_hash(),
            "window": self.config.window,
            "stride": self.config.stride,
            "embedder": self.services.embedder.model,
            "dim": self.services.embedder.dim,
        }

    def ingest(self, conversation: Conversation) -> dict[str, Any]:
        """Embed every chunk in batches and store them in LanceDB (reused when complete).

        Building reads the table back and saves those exact vectors beside it
        (`vectors.npz`); a reused store loads that file, so a run over finished stores
        never imports lancedb (about 2 s of CPU per process). Ranking is exact cosine in
        numpy either way, so the ranked chunks are identical.
        """
        root = self.services.store_dir
        folder = contained(root / safe_name(conversation.conversation_id), root)
        self._chunks = ChunkWindows(conversation, self.config.window, self.config.stride)
        content = stable_hash_items((c.text, c.dia_ids) for c in self._chunks)
        fingerprint = {**self.fingerprint(), "chunks": content}
        checkpoint = IngestCheckpoint(folder, fingerprint, root=root)
        state = checkpoint.load()
        reused = bool(state and state.get("complete"))
        if reused and (problem := self._reuse(folder / VECTORS)) is not None:
            checkpoint.wipe(problem)  # rebuilt below, as a damaged neuromorphic store is
            reused = False
        if not reused:
            import lancedb

            db = lancedb.connect(str(folder / "lancedb"))
            schema = _schema(self.services.embedder.dim)
            db.create_table(TABLE, self._record_batches(schema), schema=schema, mode="overwrite")
            self._load_vectors(db.open_table(TABLE))
            _save_vectors(folder / VECTORS, self._chunk_ids, self._vectors)
            checkpoint.save({"chunks": len(self._chunks)}, complete=True)
        self._bm25 = _bm25_index(self._chunks) if self.config.hybrid_bm25 else None
        return {"chunks": len(self._chunks), "reused_store": reused}

    def _record_batches(self, schema: Any) -> Iterator[Any]:
        """The chunks embedded `EMBED_BATCH` at a time, each step one Arrow record batch.

        LanceDB writes them as they come (one table version), so the conversation's
        texts and vectors are never copied into one Arrow table besides the chunks.
        """
        for start in range(0, max(len(self._chunks), 1), EMBED_BATCH):
            part = self._chunks[start : start + EMBED_BATCH]
            vectors = self.services.embedder.embed([c.text for c in part])
            yield _record_batch(part, vectors, schema)

    def _reuse(self, path: Path) -> str | None:
        """Load a finished store's `vectors.npz`; what is wrong with it, when it cannot be used.

        The file must hold exactly what `ingest` saves: `chunk_ids` 0..n-1 for this
        conversation's n chunks, and an (n, dim) matrix of finite float32 rows (pickled
        objects are never loaded). A truncated, foreign or tampered file is reported, so
        the store is wiped and rebuilt instead of leaving the arm in `error` on every rerun.
        """
        import zipfile

        import numpy as np

        if not path.is_file() or path.is_symlink():
            return f"{VECTORS} is missing"
        try:
            with np.load(path, allow_pickle=False) as saved:
                ids, vectors = saved["chunk_ids"], saved["vectors"]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            return f"{VECTORS} is damaged ({type(exc).__name__}: {str(exc)[:120]})"
        n = len(self._chunks)
        if (
            ids.shape != (n,)
            or not np.issubdtype(ids.dtype, np.integer)
            or not np.array_equal(ids, np.arange(n))
            or vectors.dtype != np.float32
            or vectors.shape != (n, self.services.embedder.dim)
            or not np.isfinite(vectors).all()
        ):
            return f"{VECTORS} does not hold this conversation's {n} chunk vectors"
        self._chunk_ids, self._vectors = ids, vectors
        return None

    def retrieve(self, question: AskedQuestion) -> Context:
        """Top-k chunks by cosine (fused with BM25 when enabled); reads only."""
        if self._vectors is None:
            raise RuntimeError("rag arm: retrieve() called before ingest()")
        ranked = self._dense_ranking(question.question)
        if self._bm25 is not None:
            ranked = rrf_fuse([ranked, self._bm25_ranking(question.question)], self.config.rrf_k)
        top = ranked[: self.config.top_k]
        chunks = [self._chunks[i] for i, _ in top]
        items = [
            ContextItem(chunk.text, score, chunk.dia_ids, kind="chunk")
            for chunk, (_, score) in zip(chunks, top, strict=True)
        ]
        if self.config.order == "time":
            shown = [items[j] for j in sorted(range(len(top)), key=lambda j: top[j][0])]
        else:
            shown = items
        return Context(text="\n\n".join(it.text for it in shown), items=tuple(items))

    def _load_vectors(self, table: Any) -> None:
        """Read the conversation's table once.

        Exact cosine over it in numpy ranks exactly as LanceDB's brute-force search
        does, without ~10 ms per query.
        """
        import numpy as np

        rows = table.count_rows()
        data = table.search().select(["chunk_id", "vector"]).limit(max(rows, 1)).to_arrow()
        if data.num_rows != rows:
            raise RuntimeError(f"rag arm: read {data.num_rows} of the table's {rows} rows back")
        ids = data.column("chunk_id").to_numpy()
        order = np.argsort(ids)
        flat = np.asarray(data.column("vector").combine_chunks().flatten(), dtype=np.float32)
        self._chunk_ids = ids[order]
        dim = data.schema.field("vector").type.list_size
        self._vectors = flat.reshape(-1, dim)[order]  # one copy, no per-row arrays

    def _dense_ranking(self, query: str) -> list[tuple[int, float]]:
        import numpy as np

        vector = self.services.embedder.embed([query])[0]
        k = self.config.top_k * (3 if self._bm25 is not None else 1)
        sims = self._vectors @ vector  # rows and query are unit vectors: dot = cosine
        top = np.lexsort((self._chunk_ids, -sims))[:k]
        return [(int(self._chunk_ids[i]), float(sims[i])) for i in top]

    def _bm25_ranking(self, query: str) -> list[tuple[int, float]]:
        from bench.text import content_terms

        scores = self._bm25.get_scores(list(content_terms(query)))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [(i, float(scores[i])) for i in order[: self.config.top_k * 3]]

    def close(self) -> None:
        """Drop the loaded vectors and the conversation's turns."""
        self._vectors = None
        self._chunks = ()


def rrf_fuse(rankings: list[list[tuple[int, float]]], k: int) -> list[tuple[int, float]]:
    """`bench.arm.fusion.rrf_fuse` over (chunk id, score) lists; exact ties by chunk id."""
    from bench.arm.fusion import rrf_fuse as fuse

    return fuse([[doc for doc, _ in ranking] for ranking in rankings], k, tie_key=int)


def _bm25_index(chunks: Sequence[Chunk]) -> Any:
    from rank_bm25 import BM25Okapi

    from bench.text import content_terms

    return BM25Okapi([list(content_terms(c.text)) or ["_"] for c in chunks])


def _save_vectors(path: Path, chunk_ids: Any, vectors: Any) -> None:
    """Write the vectors as read back from LanceDB, atomically (tmp file, then rename)."""
    import numpy as np

    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as handle:
        np.savez(handle, chunk_ids=chunk_ids, vectors=vectors)
    os.replace(tmp, path)


def _schema(dim: int) -> Any:
    """The chunks table: id, rendered text, embedding."""
    import pyarrow as pa

    return pa.schema(
        [("chunk_id", pa.int32()), ("text", pa.string()), ("vector", pa.list_(pa.float32(), dim))]
    )


def _record_batch(chunks: Sequence[Chunk], vectors: Any, schema: Any) -> Any:
    import numpy as np
    import pyarrow as pa

    dim = schema.field("vector").type.list_size
    flat = pa.array(np.asarray(vectors, dtype=np.float32).ravel(), pa.float32())
    columns = [
        pa.array([c.index for c in chunks], pa.int32()),
        pa.array([c.text for c in chunks], pa.string()),
        pa.FixedSizeListArray.from_arrays(flat, dim),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _code_hash() -> str:
    """This module and the turn rendering it embeds."""
    from bench.arm.checkpoint import source_hash

    return source_hash(__name__, "bench.types")
