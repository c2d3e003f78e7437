"""The offline caution follows the dataset: LoCoMo's evidence only on LoCoMo runs."""

from __future__ import annotations

import pytest

from bench.runmeta import DatasetMeta, RunMeta
from bench.summarise.cautions import (
    CAUTIONS,
    OFFLINE_CAUTION,
    OFFLINE_CAUTION_OTHER,
    dataset_loader,
    offline_caution,
)


def _meta(name: str, loader: str | None = None) -> RunMeta:
    config = {"dataset": {"loader": loader}} if loader else {}
    return RunMeta(dataset=DatasetMeta(name=name), config=config)


@pytest.mark.parametrize(
    ("name", "loader", "expected"),
    [
        ("locomo", "locomo", "locomo"),
        ("smoke", "locomo", "locomo"),
        ("longmemeval", "longmemeval", "longmemeval"),
        ("smoke_longmemeval", None, "longmemeval"),
        ("smoke_beam", "beam", "beam"),
        ("locomo_plus", None, "locomo_plus"),
        ("mine", "locomo_plus", "locomo_plus"),
    ],
)
def test_each_dataset_gets_its_own_caution(name: str, loader: str | None, expected: str) -> None:
    meta = _meta(name, loader)
    assert dataset_loader(meta, name) == expected
    caution = offline_caution(meta, name, locomo_style=expected == "locomo")
    assert caution == CAUTIONS[expected]
    assert ("LoCoMo ranks raw" in caution) == (expected == "locomo")


def test_cautions_are_distinct_and_unknown_datasets_get_the_generic_one() -> None:
    assert len(set(CAUTIONS.values())) == len(CAUTIONS)
    assert CAUTIONS["locomo"] == OFFLINE_CAUTION
    assert offline_caution(_meta("suite"), "suite", locomo_style=False) == OFFLINE_CAUTION_OTHER
    assert offline_caution(None, "custom", locomo_style=True) == OFFLINE_CAUTION
    assert offline_caution(_meta("x", "someloader"), "x", True) == OFFLINE_CAUTION_OTHER
