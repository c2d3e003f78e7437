"""How the official judges turn a reply into a verdict, as their upstream code does.

- LongMemEval (`evaluate_qa.py`): the reply is stripped and the answer is correct iff the
  substring `yes` occurs in it lower-cased. "Yes." is correct; so is a reply holding both
  "yes" and "no" (the substring test sees the "yes"), and so is any word containing
  "yes" ("eyes"). No reply is unparsable.
- Mem0 (`llm_judge.py`): the reply goes through Mem0's `extract_json` (mem0/memory/
  utils.py: the body of the first triple-backtick fence, an optional `json` tag dropped;
  otherwise the whole stripped text), then `json.loads(...)["label"]`, and the answer is
  correct iff that label equals the string `CORRECT` exactly (so `"correct"` or
  `"Correct"` is wrong). Where upstream raises — the text is not JSON, the JSON is not an
  object, or it has no `label` — the script stops; armbench records the verdict as
  `unparseable` instead (kept, asked again only with `scoring.rejudge`).
"""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)
MEM0_CORRECT = "CORRECT"


def longmemeval_verdict(reply: str) -> bool:
    """True iff `yes` is a substring of the stripped, lower-cased reply.

    >>> longmemeval_verdict("Yes."), longmemeval_verdict("no"), longmemeval_verdict("no, yes")
    (True, False, True)
    """
    return "yes" in reply.strip().lower()


def mem0_extract_json(text: str) -> str:
    """The fenced body of the first ```/```json block of `text`, else `text` stripped."""
    text = text.strip()
    match = _FENCE.search(text)
    return match.group(1) if match else text


def mem0_verdict(reply: str) -> bool:
    """True iff the reply's JSON `label` is exactly `CORRECT`; ValueError where upstream raises.

    >>> mem0_verdict('{"label": "CORRECT"}'), mem0_verdict('```json {"label": "WRONG"} ```')
    (True, False)
    """
    try:
        data = json.loads(mem0_extract_json(reply))
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ValueError(f"JSON is a {type(data).__name__}, not an object with a label")
    if "label" not in data:
        raise ValueError('JSON has no "label"')
    return bool(data["label"] == MEM0_CORRECT)
