"""A reply Graphiti's schema refuses stops the run in one line (issue 41, item 2).

Runs without graphiti-core: only the arm's episode step is exercised, on a coroutine
that fails the way Graphiti's does when a model's reply does not fit its pydantic
schema (a `ValidationError`), where a run used to print two full pydantic tracebacks.
"""

from __future__ import annotations

import asyncio

import pydantic
import pytest

from arms.library.graphiti import GraphitiArm
from bench.errors import PermanentError, raise_if_permanent


class _Entities(pydantic.BaseModel):
    count: int


async def _unfit_reply() -> None:
    _Entities.model_validate({"count": "several"})  # what a tiny model sends back


async def _other_failure() -> None:
    raise RuntimeError("kuzu: database locked")


def _arm() -> GraphitiArm:
    arm = object.__new__(GraphitiArm)  # the episode step needs only its name and loop
    arm.name, arm._loop = "graphiti", asyncio.new_event_loop()
    return arm


def test_a_reply_graphiti_refuses_is_a_permanent_one_line_error() -> None:
    arm = _arm()
    with pytest.raises(PermanentError) as stopped:
        arm._add("D1:3", _unfit_reply())
    arm._loop.close()
    message = str(stopped.value)
    assert "\n" not in message and "turn D1:3" in message and "Graphiti's schema" in message
    assert "provider.extractor.model" in message and stopped.value.__cause__ is None
    with pytest.raises(PermanentError):
        raise_if_permanent(stopped.value)  # the run's handlers let it through


def test_other_failures_stay_ordinary_ingest_errors() -> None:
    arm = _arm()
    with pytest.raises(RuntimeError, match="database locked"):
        arm._add("D1:4", _other_failure())
    arm._loop.close()
