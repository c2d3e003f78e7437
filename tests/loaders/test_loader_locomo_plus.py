"""LoCoMo-Plus: upstream's stitching rules, seeded; ids, identity and bad input."""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bench.config import DatasetConfig
from bench.errors import DatasetError
from bench.loaders import load_dataset, load_locomo
from bench.loaders.locomo_plus import gap_days, load_locomo_plus, locomo_stamp
from bench.loaders.resolve import PROJECT_ROOT
from bench.types import Conversation

SMOKE = load_locomo(PROJECT_ROOT / "datasets" / "fixtures" / "smoke_locomo.json").conversations
ITEM = {
    "relation_type": "causal",
    "cue_dialogue": "A: I finally learned to say no at work.\nB: Good for you, it takes practice.",
    "trigger_query": "A: I said yes to another project and now I'm swamped.",
    "time_gap": "two weeks later",
    "model_name": "gpt-4o-mini",
}


def _items(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    path = tmp_path / "locomo_plus.json"
    path.write_text(json.dumps(items))
    return path


@pytest.mark.parametrize(
    ("phrase", "days"),
    [
        ("two weeks later", 14),
        ("about six weeks later", 42),
        ("three months later", 90),
        ("a year after", 365),
        ("around 2 months later", 60),
        ("several months later", 0),  # no count: upstream's 0 days
        ("One Year Later", 365),
    ],
)
def test_gap_days(phrase: str, days: int) -> None:
    """The first count × unit, 7/30/365 days; none found is 0."""
    assert gap_days(phrase) == days


def test_locomo_stamp_round_trips_upstreams_format() -> None:
    """Inserted sessions are dated in LoCoMo's own stamp form (parsed back identically)."""
    moment = datetime(2023, 5, 8, 13, 56)
    assert locomo_stamp(moment) == "1:56 pm on 8 May, 2023"
    assert datetime.strptime(locomo_stamp(moment), "%I:%M %p on %d %B, %Y") == moment
    assert locomo_stamp(datetime(2023, 5, 8, 0, 5)) == "12:05 am on 8 May, 2023"


def _only(tmp_path: Path, item: dict[str, Any]) -> Conversation:
    """`item` stitched into smoke-1 (a one-conversation base makes the choice certain)."""
    ds = load_locomo_plus(_items(tmp_path, [item]), SMOKE[:1], seed=0)
    return ds.conversations[0]


def test_cue_inserted_in_time_order_trigger_asked(tmp_path: Path) -> None:
    """Trigger one week after the last session; cue two weeks before it, as a session."""
    conv = _only(tmp_path, ITEM)
    assert conv.conversation_id == "plus-000@smoke-1" and conv.speakers == ("Alice", "Bob")
    # smoke-1 ends 12:15 pm on 2 September 2023 → trigger 9 Sep, cue 26 Aug (after 14 Aug)
    dates = [s.date_time for s in conv.sessions]
    cue_at = dates.index("12:15 pm on 26 August, 2023")
    assert dates[cue_at - 1] == "5:50 pm on 14 August, 2023" and cue_at == len(dates) - 2
    cue = conv.sessions[cue_at]
    assert [t.dia_id for t in cue.turns] == ["CUE:1", "CUE:2"]
    assert [t.speaker for t in cue.turns] == ["Alice", "Bob"]
    assert all(t.session == s.index for s in conv.sessions for t in s.turns)
    assert [s.index for s in conv.sessions] == list(range(1, len(conv.sessions) + 1))
    (q,) = conv.questions
    assert q.question_id == "plus-000:causal" and q.question_type == "causal" and q.category == 1
    assert q.question == "Alice: I said yes to another project and now I'm swamped."
    assert q.question_date == "12:15 pm on 9 September, 2023"
    assert q.evidence == ("CUE:1", "CUE:2") and q.gold is not None and q.gold.startswith("Alice: I")
    assert "D1:1" in {t.dia_id for t in conv.turns()}  # LoCoMo ids kept


def test_gap_without_count_puts_the_cue_last(tmp_path: Path) -> None:
    """A gap of 0 days dates the cue with the trigger: after every LoCoMo session."""
    conv = _only(tmp_path, {**ITEM, "time_gap": "several months later"})
    assert conv.sessions[-1].turns[0].dia_id == "CUE:1"


def test_seed_fixes_the_haystacks(tmp_path: Path) -> None:
    """Same seed: same hosts, ids and SHA-256; another seed: other hosts, same question ids."""
    path = _items(tmp_path, [{**ITEM, "trigger_query": f"A: Trigger {n}."} for n in range(12)])
    a, b = (load_locomo_plus(path, SMOKE, seed=0) for _ in range(2))
    c = load_locomo_plus(path, SMOKE, seed=1)
    assert [x.conversation_id for x in a.conversations] == [
        x.conversation_id for x in b.conversations
    ]
    assert a.sha256 == b.sha256 != c.sha256
    assert [x.conversation_id for x in a.conversations] != [
        x.conversation_id for x in c.conversations
    ]
    assert [q.question_id for q in a.questions()] == [q.question_id for q in c.questions()]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"relation_type": "emotion"}, "[0].relation_type: unknown 'emotion'"),
        ({"cue_dialogue": "no speakers here"}, "[0].cue_dialogue: no line starts with 'A:'"),
        ({"time_gap": 14}, "[0].time_gap: must be a string"),
    ],
)
def test_bad_items_are_one_line(tmp_path: Path, edit: dict[str, Any], message: str) -> None:
    """A malformed item names the file and its JSON path on one line."""
    with pytest.raises(DatasetError) as info:
        load_locomo_plus(_items(tmp_path, [{**ITEM, **edit}]), SMOKE, seed=0)
    assert "\n" not in str(info.value) and message in str(info.value)


def test_seed_is_required() -> None:
    """dataset.seed=null is refused up front."""
    with pytest.raises(DatasetError, match="needs a seed"):
        load_dataset(DatasetConfig(name="locomo_plus", loader="locomo_plus", seed=None))


def test_shared_copy_stitched_with_seed_0(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared items and LoCoMo: 401 questions by relation type, a pinned identity."""
    data = next(
        (
            Path(p)
            for p in (os.environ.get("BENCH_DATA_DIR"), "/work/shared/data")
            if p and (Path(p) / "locomo-plus" / "locomo_plus.json").is_file()
        ),
        None,
    )
    if data is None:
        pytest.skip("no shared LoCoMo-Plus copy on this machine")
    monkeypatch.setenv("BENCH_DATA_DIR", str(data))
    cfg = DatasetConfig(
        name="locomo_plus",
        loader="locomo_plus",
        filename="locomo-plus/locomo_plus.json",
        sha256="af2fc6e5e0e88735e28d8dd1ef474b718861a73beb21779809e3b9e1a4fe3d23",
        seed=0,
    )
    ds = load_dataset(cfg)
    assert Counter(q.question_type for q in ds.questions()) == {
        "causal": 101,
        "state": 100,
        "goal": 100,
        "value": 100,
    }
    assert ds.conversations[0].conversation_id == "plus-000@conv-47"
    assert ds.sha256 == "8c01f5791896eade2359bb6dbf0edc3e0dfd4e98b44b7e1191332acdde7a4072"


def test_a_duplicated_item_is_one_line(tmp_path: Path) -> None:
    """Issue 40, item 12: a repeated item was stitched and scored twice, silently."""
    other = {**ITEM, "trigger_query": "A: Another trigger."}
    with pytest.raises(DatasetError) as info:
        load_locomo_plus(_items(tmp_path, [ITEM, other, dict(ITEM)]), SMOKE, seed=0)
    text = str(info.value)
    assert "\n" not in text and "[2]: repeats item [0] (the same cue and trigger)" in text
    assert len(load_locomo_plus(_items(tmp_path, [ITEM, other]), SMOKE, seed=0).questions()) == 2
