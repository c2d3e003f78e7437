"""The offline answerer never answers with prompt or gate instructions.

Every offline answer of a whole run is scanned. An answer *echoes instructions* when it
holds a tag-like token (`ANSWER_TYPE`, `<FACTS>`) or a content word that appears in the
instructions (answer prompt, `<TAG>…</TAG>` instruction lines of the context) but
nowhere in the question or the context's evidence lines.
"""

from __future__ import annotations

import calendar
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from bench.providers.offline_answer import answer
from tests.support.e2e_support import ROOT, run_cli

PROMPT = (ROOT / "conf" / "prompts" / "answer_v2.txt").read_text()
_INSTRUCTION = re.compile(r"^\s*<([A-Za-z_]+)>.*</\1>\s*$")
_TAGGY = re.compile(r"<|>|\b[A-Z]+_[A-Z_]+\b")
_WORD = re.compile(r"[a-z]{3,}")
"""Words of three letters or more: dates and numbers are worked out, not echoed."""
MONTHS = {m.lower() for m in calendar.month_name[1:]}
"""Month names are worked out too (a relative date resolved against a session date)."""


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def echoed_words(answer_text: str, question: str, context: str) -> set[str]:
    """Words of the answer that only the instructions could have supplied."""
    lines = context.splitlines()
    instructions = PROMPT + "\n".join(ln for ln in lines if _INSTRUCTION.match(ln))
    evidence = "\n".join(ln for ln in lines if not _INSTRUCTION.match(ln))
    allowed = _words(evidence) | _words(question) | {"not", "mentioned", "yes"} | MONTHS
    return (_words(answer_text) & _words(instructions)) - allowed


def scan_run(run_dir: Path) -> list[str]:
    """`question_id/arm: answer` for every answer that echoes instructions."""
    bad = []
    for path in sorted((run_dir / "questions").glob("*.json")):
        record: dict[str, Any] = json.loads(path.read_text())
        for arm, res in record["arms"].items():
            if res["status"] != "ok":
                continue
            text, context = res["answer"], res.get("context")
            assert context is not None, "run with save_context=true"
            if _TAGGY.search(text) or echoed_words(text, record["question"], context):
                bad.append(f"{record['question_id']}/{arm}: {text}")
    return bad


def test_the_scan_catches_the_known_echo() -> None:
    """The answer the gate line used to produce is flagged; a real answer is not."""
    ctx = (
        "<FACTS>\n- Nate went hiking (valid 8 May 2023 – present)\n</FACTS>\n"
        "<ANSWER_TYPE>The question asks for a state. If the facts only name a town or city, "
        "answer with the state it is in.</ANSWER_TYPE>"
    )
    question = "What state did Nate visit?"
    assert echoed_words("question asks facts name", question, ctx) == {"asks", "name", "question"}
    assert not echoed_words("hiking", question, ctx)
    assert "ANSWER_TYPE" not in answer(question, ctx)
    assert not echoed_words(answer(question, ctx), question, ctx)


@pytest.mark.parametrize("dataset", ["smoke", pytest.param("supersession", marks=pytest.mark.slow)])
def test_no_offline_answer_echoes_instructions(dataset: str, tmp_path: Path) -> None:
    """Every arm's every offline answer on the fixture is free of instruction text."""
    out = tmp_path / dataset
    proc = run_cli(f"dataset={dataset}", f"out={out}", "save_context=true", "progress=false")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(list((out / "questions").glob("*.json"))) > 5
    assert scan_run(out) == []


LOCOMO = Path(os.environ.get("BENCH_DATA_DIR", "/nonexistent")) / "locomo10.json"


@pytest.mark.slow
@pytest.mark.skipif(
    not (LOCOMO.is_file() and os.environ.get("BENCH_SLOW")),
    reason="full LoCoMo run: set BENCH_SLOW=1 and BENCH_DATA_DIR",
)
def test_no_offline_answer_echoes_instructions_on_locomo(tmp_path: Path) -> None:
    """The same scan over every answer of a full offline LoCoMo run (about 2.5 minutes)."""
    out = tmp_path / "locomo"
    proc = run_cli("dataset=locomo", f"out={out}", "save_context=true", "progress=false")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert scan_run(out) == []
