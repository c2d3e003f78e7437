"""No test data in any prompt: every prompt file and prompt string against every dataset.

The rules (R1 names, R2 years, R3 days, R4 gold answers, R5 content trigrams) are in
`tests/support/prompt_contamination.py`. The index is built once per session: the committed
fixtures always, the shared LoCoMo, LongMemEval, LoCoMo-Plus and BEAM copies when present.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.prompt_contamination import (
    ROOT,
    build_index,
    code_prompts,
    data_index,
    overlaps,
    prompt_texts,
)

LOCOMO = "locomo10.json"


def test_no_prompt_overlaps_any_dataset() -> None:
    """Every prompt is clean; the message names each prompt and each rule it breaks."""
    index = data_index()
    dirty = {name: hits for name, text in prompt_texts().items() if (hits := overlaps(text, index))}
    assert not dirty, "test data in prompts:\n" + "\n".join(f"{k}: {v}" for k, v in dirty.items())


def test_the_scan_sees_every_prompt() -> None:
    """The prompt files, the extractor's system prompt and the judge's repair line are scanned."""
    texts = prompt_texts()
    assert {"conf/prompts/answer_v2.txt", "conf/prompts/judge_locomo_v2.txt"} <= set(texts)
    joined = "\n".join(texts.values())
    assert "call the tool update_memory exactly once" in joined  # extract_llm.SYSTEM_PROMPT
    assert "That reply is not a verdict" in joined  # judges.REPAIR
    assert not any("Caroline" in t for t in code_prompts([ROOT / "bench" / "perf"]).values())


def test_code_prompts_are_found_by_message_building_and_by_name(tmp_path: Path) -> None:
    """A module building messages is scanned whole; elsewhere, constants named like prompts."""
    (tmp_path / "builds.py").write_text(
        '"""Doc: Alice."""\nX = "Alice"\nM = [{"role": "system", "content": X}]\n'
    )
    (tmp_path / "named.py").write_text('SYSTEM_PROMPT = "e.g. Alice"\nERROR = "Alice"\n')
    found = sorted(code_prompts([tmp_path]).values())
    assert found == ["Alice", "content", "e.g. Alice", "role", "system"]  # no docstring, no ERROR


def test_index_holds_the_fixtures() -> None:
    """The committed fixtures are always indexed: their speakers, answers and evidence."""
    index = data_index()
    assert any(f.endswith("smoke_locomo.json") for f in index.files)
    assert {"Alice", "Bob", "Dana"} <= index.names
    assert "7 May 2023" in index.answers and "2023" in index.years


@pytest.mark.parametrize(
    ("injected", "rule"),
    [
        ('for example "7 May 2023" or "June 2023"', "R2 year 2023"),
        ('for example "7 May 2023"', "R3 day 7 may"),
        ('(e.g. "Alice / pottery")', "R1 speaker name 'Alice'"),
        ("The answer may be a red ceramic bowl.", "R4 gold answer 'a red ceramic bowl'"),
        ("Example: Alice started pottery classes.", "R5 trigram 'alic start potteri'"),
    ],
)
def test_injected_fixture_data_fails(injected: str, rule: str) -> None:
    """Putting a fixture's gold answer, speaker or question back into a real prompt fails."""
    index = data_index()
    prompt = (ROOT / "conf" / "prompts" / "answer_v2.txt").read_text(encoding="utf-8")
    assert not overlaps(prompt, index)
    assert rule in overlaps(prompt.replace("(for example", f"({injected}; for example"), index)


def test_injected_locomo_gold_fails() -> None:
    """The issue's leaks — conv-26's gold date, speaker and evidence — are caught again."""
    files = [f for f in data_index().files if f.endswith(LOCOMO)]
    if not files:
        pytest.skip("shared locomo10.json not present (set BENCH_DATA_DIR)")
    index = build_index([Path(files[0])])
    assert "Caroline" in index.names and "7 May 2023" in index.answers
    old = 'prefixed (e.g. "Caroline / hometown") and dated (e.g. "7 May 2023", "2022").'
    assert {"R1 speaker name 'Caroline'", "R2 year 2022", "R2 year 2023", "R3 day 7 may"} <= set(
        overlaps(old, index)
    )
    evidence = "Caroline went to a LGBTQ support group yesterday."
    assert "R5 trigram 'carolin lgbtq support'" in overlaps(evidence, index)


def test_a_year_inside_a_model_name_is_not_a_date() -> None:
    index = data_index()
    year = min(index.years)  # a year the data holds (the fixtures always give one)
    assert not overlaps(f'model "gpt-4o-{year}-08-06"', index)
    assert f"R2 year {year}" in overlaps(f"by {year}-08-06 or in {year}", index)
