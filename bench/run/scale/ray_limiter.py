"""One rate limiter per deployment for the whole Ray cluster: a named actor.

Under `executor=ray` every task builds its own providers, but a deployment's quota
(requests and tokens per minute on one base URL and model) belongs to the cluster: each
task's deployment gets a `RemoteLimiter`, a proxy whose `acquire` / `settle` / `pause`
are calls to one `LimiterActor` per (base URL, model), found by name. The actor holds
the same `SlidingWindowLimiter` a local run uses, so the guarantee is the same: no more
than the configured requests (tokens) in any window, counted until each request *ends*
(the actor stamps `settle` on arrival, which is later than the end: conservative).

Lifetime: the first task to need a deployment creates its actor (`get_if_exists`) as
*detached* and pinned to the driver's node, so it neither dies with the task's worker
nor with a worker node that is lost; the driver kills the run's limiter actors when the
run ends. Names live in the driver's Ray namespace (one per run), so two runs at once
each have their own limiters. Deployments without a cap never reach the actor.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from bench.providers.ratelimit import Limiter, LimiterFactory, Reservation, SlidingWindowLimiter

PREFIX = "armbench-limiter-"
_CONCURRENCY = 256
"""Actor threads: each blocked `acquire` holds one, and `settle` must still get through."""
GRANTS_KEPT = 4096
"""Admission times the actor keeps (the latest): a run's every request would grow the list."""


def actor_name(base_url: str, model: str) -> str:
    """The limiter actor's name for one deployment (stable, no URL text in it)."""
    digest = hashlib.sha256(f"{base_url}\n{model}".encode()).hexdigest()[:20]
    return f"{PREFIX}{digest}"


class LimiterActor:
    """The Ray actor: a `SlidingWindowLimiter` plus counters of what it granted."""

    def __init__(self, requests: int | None, tokens: int | None, window_s: float) -> None:
        self._limiter = SlidingWindowLimiter(requests, tokens, window_s=window_s)
        self._open: dict[int, Reservation] = {}
        self._granted: deque[float] = deque(maxlen=GRANTS_KEPT)
        self._issued = 0
        self._lock = threading.Lock()

    def acquire(self, tokens: int) -> int:
        """Block until a request fits; return its reservation key."""
        reservation = self._limiter.acquire(tokens)
        with self._lock:
            key, self._issued = self._issued, self._issued + 1
            self._granted.append(time.monotonic())
            self._open[key] = reservation
        return key

    def settle(self, key: int, actual_tokens: int | None) -> None:
        """The request `key` has ended, using `actual_tokens` (when known)."""
        with self._lock:
            reservation = self._open.pop(key, None)
        if reservation is not None:
            self._limiter.settle(reservation, actual_tokens)

    def pause(self, seconds: float) -> None:
        """A server asked for a back-off: hold every task's next request."""
        self._limiter.pause(seconds)

    def granted(self) -> list[float]:
        """Monotonic times (actor clock) of the latest `GRANTS_KEPT` admissions, oldest first."""
        with self._lock:
            return list(self._granted)


@dataclass
class RemoteReservation(Reservation):
    """A reservation held by the actor, known here by its key."""

    key: int = -1
    """The actor's reservation key."""


class RemoteLimiter:
    """A task-side proxy to the deployment's `LimiterActor` (same calls as a local one)."""

    def __init__(self, ray: Any, actor: Any) -> None:
        self._ray = ray
        self._actor = actor

    def acquire(self, estimated_tokens: int) -> Reservation:
        """Ask the actor for a permit; blocks until it grants one."""
        key = self._ray.get(self._actor.acquire.remote(estimated_tokens))
        return RemoteReservation(estimated_tokens, key=int(key))

    def settle(self, reservation: Reservation, actual_tokens: int | None) -> None:
        """Tell the actor the request has ended (waits, so the count is never late)."""
        key = reservation.key if isinstance(reservation, RemoteReservation) else -1
        self._ray.get(self._actor.settle.remote(key, actual_tokens))

    def pause(self, seconds: float) -> None:
        """Pause every task's requests on this deployment."""
        self._ray.get(self._actor.pause.remote(seconds))


def limiter_actor(
    ray: Any, name: str, requests: int | None, tokens: int | None, window_s: float, node: str
) -> Any:
    """The named limiter actor, created on `node` (the driver's) if it does not exist."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    cls = ray.remote(num_cpus=0, max_concurrency=_CONCURRENCY)(LimiterActor)
    return cls.options(
        name=name,
        get_if_exists=True,
        lifetime="detached",
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=True),
    ).remote(requests, tokens, window_s)


def ray_limiters(node: str) -> LimiterFactory:
    """The limiter factory a Ray task builds its providers with (`node`: the driver's)."""
    import ray

    def make(
        base_url: str, model: str, requests: int | None, tokens: int | None, window_s: float
    ) -> Limiter:
        if not (requests or tokens):  # no cap: nothing to share (pauses stay per task)
            return SlidingWindowLimiter(None, None, window_s=window_s)
        actor = limiter_actor(ray, actor_name(base_url, model), requests, tokens, window_s, node)
        return RemoteLimiter(ray, actor)

    return make


def kill_limiters(ray: Any) -> int:
    """Kill this namespace's limiter actors (the run has ended); return how many."""
    killed = 0
    for name in ray.util.list_named_actors():
        if isinstance(name, str) and name.startswith(PREFIX):
            ray.kill(ray.get_actor(name))
            killed += 1
    return killed
