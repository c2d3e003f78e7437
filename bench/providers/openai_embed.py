"""Embeddings from any OpenAI-compatible `/embeddings` endpoint, cached per text.

Each text is cached on its own key (base URL, model, dimension, text), so a batch
with a few new texts only sends those. A text already being fetched by another thread
(two arms ingesting the same conversation at once) is not sent again: the call waits
for that thread's vector, or its failure (single-flight per text, in every cache mode).
Empty texts get zero vectors without a request (servers reject empty input). Rows are
L2-normalised; a server returning vectors of another dimension than
`provider.embedder.dim` is a configuration error.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from typing import Any

import numpy as np

from bench.config import EmbedderConfig
from bench.errors import ProviderError
from bench.providers.accounting import Accountant, Price
from bench.providers.cache import ResponseCache, cache_key
from bench.providers.deployment import AttemptCounter, Deployment
from bench.providers.retry import MalformedResponse
from bench.types import Usage

ROLE = "embedder"


class OpenAIEmbedder:
    """An `Embedder` backed by an OpenAI-compatible endpoint."""

    def __init__(
        self,
        cfg: EmbedderConfig,
        *,
        deployment: Deployment,
        cache: ResponseCache,
        accountant: Accountant,
        role: str = ROLE,
    ) -> None:
        self.role = role
        """The accounting role (`embedder`, or `proxy:<arm>:<phase>` for the proxy)."""
        self.model = cfg.model
        self.dim = cfg.dim
        self._batch_size = max(1, cfg.batch_size)
        self._deployment = deployment
        self._cache = cache
        self._accountant = accountant
        self._price = Price(cfg.price_prompt_per_1k, None)
        # text-embedding-3-* can shorten their vectors on request; others reject the field.
        self._send_dimensions = cfg.model.startswith("text-embedding-3")
        self._lock = threading.Lock()
        self._pending: dict[str, Future[np.ndarray]] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32 rows with unit L2 norm (empty texts → zero rows)."""
        started = time.perf_counter()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        keys = {t: self._key(t) for t in dict.fromkeys(texts) if t.strip()}
        found = self._cache.get_many(list(keys.values()))
        vectors = {t: v for t, k in keys.items() if k in found
                   if (v := self._vector(k, found[k])) is not None}  # fmt: skip
        missing = [t for t in keys if t not in vectors]
        mine, theirs = self._claim(missing, keys)
        if mine and self._cache.reads:  # stored by a twin just before we claimed them
            late = self._cache.get_many([keys[t] for t in mine])
            done = {
                t: v
                for t in mine
                if keys[t] in late
                if (v := self._vector(keys[t], late[keys[t]])) is not None
            }
            self._settle(list(done), keys, done)
            vectors.update(done)
            mine = [t for t in mine if t not in done]
        counter = AttemptCounter()
        prompt_tokens = 0
        try:
            for start in range(0, len(mine), self._batch_size):
                batch = mine[start : start + self._batch_size]
                fresh, used = self._fetch(batch, counter)
                prompt_tokens += used
                vectors.update(fresh)
                rows = [(keys[t], "embedding", fresh[t].tobytes()) for t in batch]
                self._cache.put_many(rows)
                self._settle(batch, keys, fresh)
            vectors.update((t, future.result()) for t, future in theirs.items())
        except BaseException as exc:
            self._settle(mine, keys, exc)
            self._record(counter, failed=True, started=started)
            raise
        for i, text in enumerate(texts):
            if text in vectors:
                out[i] = vectors[text]
        self._record(
            counter,
            cached=bool(texts) and not missing,
            coalesced=bool(theirs) and not mine,
            started=started,
            usage=Usage(prompt_tokens=prompt_tokens),
        )
        return out

    def _vector(self, key: str, raw: bytes) -> np.ndarray | None:
        """A cached embedding, or None for a poisoned row (moved aside, then re-fetched).

        The cache stores `dim` float32 values of a unit vector; a row of another length,
        or holding NaN or infinity, is not what it wrote.
        """
        if len(raw) == 4 * self.dim:
            vector = np.frombuffer(raw, dtype=np.float32)
            if np.isfinite(vector).all():
                return vector
        self._cache.quarantine(key, f"not a {self.dim}-dimensional float32 embedding")
        return None

    def _claim(
        self, missing: list[str], keys: dict[str, str]
    ) -> tuple[list[str], dict[str, Future[np.ndarray]]]:
        """Split `missing` into texts this call fetches and texts in flight elsewhere."""
        mine: list[str] = []
        theirs: dict[str, Future[np.ndarray]] = {}
        with self._lock:
            for text in missing:
                pending = self._pending.get(keys[text])
                if pending is None:
                    self._pending[keys[text]] = Future()
                    mine.append(text)
                else:
                    theirs[text] = pending
        return mine, theirs

    def _settle(
        self,
        texts: list[str],
        keys: dict[str, str],
        outcome: dict[str, np.ndarray] | BaseException,
    ) -> None:
        """Hand the waiters of `texts` their vectors (or the failure); stop claiming them."""
        with self._lock:
            futures = [(t, self._pending.pop(keys[t], None)) for t in texts]
        for text, future in futures:
            if future is None or future.done():
                continue
            if isinstance(outcome, dict):
                future.set_result(outcome[text])
            else:
                future.set_exception(outcome)

    def _key(self, text: str) -> str:
        base_url = self._deployment.base_url
        return cache_key(
            kind="embedding", base_url=base_url, model=self.model, dim=self.dim, text=text
        )

    def _fetch(
        self, batch: list[str], counter: AttemptCounter
    ) -> tuple[dict[str, np.ndarray], int]:
        """One request (with retries) for `batch`; returns vectors by text and tokens used."""
        extra: dict[str, Any] = {"dimensions": self.dim} if self._send_dimensions else {}

        def request(client: Any) -> tuple[np.ndarray, int]:
            response = client.embeddings.create(
                model=self.model, input=batch, encoding_format="float", **extra
            )
            return _parse(response, len(batch)), _tokens(response)

        matrix, used = self._deployment.call(
            ROLE,
            request,
            estimated_tokens=sum(len(t) for t in batch) // 4 + len(batch),
            used_tokens=lambda r: r[1] or None,
            counter=counter,
        )
        if matrix.shape[1] != self.dim:
            raise ProviderError(
                f"{self.role} at {self._deployment.base_url} (model {self.model}) returned "
                f"{matrix.shape[1]}-dimensional vectors but provider.embedder.dim={self.dim}; "
                f"set provider.embedder.dim={matrix.shape[1]}"
            )
        return dict(zip(batch, _normalise(matrix), strict=True)), used

    def _record(
        self,
        counter: AttemptCounter,
        *,
        started: float,
        cached: bool = False,
        coalesced: bool = False,
        failed: bool = False,
        usage: Usage | None = None,
    ) -> None:
        self._accountant.record(
            self.role,
            self.model,
            http_requests=counter.n,
            cached=cached,
            coalesced=coalesced,
            failed=failed,
            usage=usage,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            price=self._price,
        )


def _parse(response: Any, expected: int) -> np.ndarray:
    """The response's vectors in input order; MalformedResponse if any is missing."""
    data = sorted(getattr(response, "data", None) or [], key=lambda d: d.index)
    if len(data) != expected or any(not isinstance(d.embedding, list) for d in data):
        raise MalformedResponse(f"expected {expected} embeddings, got {len(data)}")
    return np.asarray([d.embedding for d in data], dtype=np.float32)


def _tokens(response: Any) -> int:
    usage = getattr(response, "usage", None)
    return int(getattr(usage, "prompt_tokens", 0) or 0)


def _normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit norm; rows already within 1e-6 of unit norm are left as sent."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    needs = (np.abs(norms - 1.0) > 1e-6) & (norms > 0)
    scaled = np.divide(matrix, norms, out=matrix.copy(), where=needs)
    out: np.ndarray = scaled.astype(np.float32)
    return out
