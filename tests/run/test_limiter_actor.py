"""The Ray limiter actor's bookkeeping, as a plain object (no Ray needed)."""

from __future__ import annotations

from bench.run.scale.ray_limiter import GRANTS_KEPT, LimiterActor


def test_the_actor_keeps_the_latest_grants_only_and_never_reuses_a_key() -> None:
    actor = LimiterActor(10**9, None, 60.0)  # capped, so a run's requests reach the actor
    calls = GRANTS_KEPT + 500
    keys = []
    for _ in range(calls):
        key = actor.acquire(10)
        keys.append(key)
        actor.settle(key, 10)
    assert keys == list(range(calls))  # a key per request, as before
    granted = actor.granted()
    assert len(granted) == GRANTS_KEPT  # was one time per request of the whole run
    assert granted == sorted(granted)
