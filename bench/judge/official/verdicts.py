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
    except RecursionError:  # upstream would crash; here the reply is unparseable
        raise ValueError("not JSON: nested too deep") from None
    if not isinstance(data, dict):
        raise ValueError(f"JSON is a {type(data).__name__}, not an object with a label")
    if "label" not in data:
        raise ValueError('JSON has no "label"')
    return bool(data["label"] == MEM0_CORRECT)


_BEAM_FENCE = re.compile(r"```(?:json)?\s*(\[.*\]|\{.*\})\s*```", re.DOTALL)
_BEAM_FIRST_JSON = re.compile(r"(\{.*?\}|\[.*?\])", re.DOTALL)


def beam_json(reply: str) -> object:
    """BEAM's `parse_json_response` rule: a fenced body, else the text, else its first {...}/[...].

    The reply is stripped; a reply opening with a triple-backtick fence is cut to the
    fence's JSON body; that is parsed; failing that, the first (shortest) brace- or
    bracket-delimited span is parsed. ValueError where upstream raises (upstream then
    tries the `json_repair` package, which armbench does not run: see `beam_item_score`).
    """
    text = reply.strip()
    if text.startswith("```") and (fenced := _BEAM_FENCE.search(text)):
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # too deep: as upstream, try the span
        pass
    span = _BEAM_FIRST_JSON.search(text)
    if span is None:
        raise ValueError("no JSON in the reply")
    try:
        return json.loads(span.group(1))
    except json.JSONDecodeError as exc:
        raise ValueError(f"JSON-like span does not parse: {exc.msg}") from None
    except RecursionError:  # upstream would crash; here the reply is unparseable
        raise ValueError("JSON-like span nested too deep") from None


def beam_item_score(reply: str, keep_float: bool) -> float:
    """One rubric item's score from the judge's reply, as upstream reads it.

    `json["score"]` cast as upstream casts it (`float()` when `keep_float`, event
    ordering; `int()` otherwise) must succeed; the returned value is `float(score)`, the
    judged score before upstream's cast, so both readings can be computed from it
    (`bench.scoring.beam.rubric_scores` applies the cast). ValueError where upstream
    would raise: not JSON by its parser (upstream then tries `json_repair`), not an
    object, no `score`, or a score its cast refuses (`int("0.5")`).

    >>> beam_item_score('{"score": 0.5, "reason": "partly"}', keep_float=False)
    0.5
    """
    data = beam_json(reply)
    if not isinstance(data, dict) or "score" not in data:
        raise ValueError('the reply\'s JSON has no "score"')
    value = data["score"]
    try:
        float(value) if keep_float else int(value)
        return float(value)
    except (TypeError, ValueError, OverflowError):
        cast = "float" if keep_float else "int"
        raise ValueError(f"score {value!r} does not pass upstream's {cast}()") from None


def beam_same_event(reply: str) -> bool:
    """BEAM's event-equivalence verdict: `yes` is a substring of the lower-cased reply."""
    return "yes" in reply.lower()


_PLUS_LABEL = re.compile(
    r'\{[^{}]*"label"\s*:\s*["\']([^"\']+)["\'][^{}]*"reason"\s*:\s*["\']([^"\']*)["\']', re.DOTALL
)
_PLUS_KEYWORDS = ("correct", "wrong", "partial")


def plus_label(reply: str) -> str:
    """LoCoMo-Plus's `_parse_judge_response` label rule; never raises (upstream cannot fail).

    On the stripped reply: a `{... "label": "<x>" ... "reason": "..." ...}` object (label
    before reason, single or double quotes) gives `<x>`; else the reply as JSON gives its
    `label` (missing or null: ""); where that fails (not JSON, not an object, a label or
    reason that is not a string) the first of `correct`, `wrong`, `partial` found in the lower-cased
    reply, in that order, else "". So "not correct" is read `correct`, as upstream reads it.
    The label is then scored by upstream's `LABEL_TO_SCORE` (unknown: 0).

    >>> plus_label('{"label": "correct", "reason": "uses the cue"}'), plus_label("Wrong.")
    ('correct', 'wrong')
    """
    raw = reply.strip()
    matched = _PLUS_LABEL.search(raw)
    if matched:
        return matched.group(1).strip()
    try:
        data = json.loads(raw)
        label = (data.get("label") or "").strip()
        (data.get("reason") or "").strip()  # upstream strips it too: a non-string fails here
        return str(label)
    except Exception:  # upstream catches everything and falls back to keywords
        lowered = raw.lower()
        return next((k for k in _PLUS_KEYWORDS if k in lowered), "")
