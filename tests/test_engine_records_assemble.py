"""`assemble` builds frozen views equal to their dataclass constructor's."""

from __future__ import annotations

import dataclasses

import numpy as np

from arms.neuromorphic.records import Fact, FactRow, Tier, assemble
from arms.neuromorphic.retrieval import Hit
from arms.neuromorphic.workingset import WorkingSet


def test_assembled_classes_have_no_init_logic_of_their_own() -> None:
    for cls in (Fact, Hit):
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen and not hasattr(cls, "__post_init__")
        assert "__slots__" not in vars(cls)


def test_working_set_view_equals_the_constructor() -> None:
    ws = WorkingSet(dim=2)
    vec = np.ones(2, dtype=np.float32)
    ws.add(FactRow(7, 3, "Ann", "Ann skis", Tier.ACTIVE, ("Bob",), "1 May 2023", ("D1:1",), vec), 3)
    ws.invalidate([0], 5, "superseded", "2 May 2023")
    got = ws.fact(0, 0.25)
    want = Fact(
        id=7, entity_name="Ann", fact_content="Ann skis", memory_type=Tier.ACTIVE,
        weight=0.25, k=0, created_at_turn=3, last_reinforced_turn=3,
        related_entities=("Bob",), valid_at=3, invalid_at=5, valid_date="1 May 2023",
        invalid_date="2 May 2023", source_ids=("D1:1",), invalid_reason="superseded",
    )  # fmt: skip
    assert got == want and repr(got) == repr(want)
    assert list(vars(got)) == [f.name for f in dataclasses.fields(Fact)]
    assert dataclasses.asdict(got) == dataclasses.asdict(want)
    assert type(got.k) is int and type(got.weight) is float


def test_assembled_hit_equals_the_constructor() -> None:
    got = assemble(Hit, id=3, score=0.5, found_by=("hot",), row=None)
    assert got == Hit(3, 0.5, ("hot",), None) and hash(got) == hash(Hit(3, 0.5, ("hot",), None))
