"""`locomo_<i>_qa<j>`: the row ids of LoCoMo's answer-key audit and of published results.

Row `locomo_<i>_qa<j>` is question j (0-based, every category counted) of conversation i
(0-based, file order) of `locomo10.json`. The numbers are ASCII digits with no leading
zero, so each row has exactly one id: `locomo_0_qa00` or an id written with other
scripts' digits (`locomo_٠_qa1`) names no row and is refused where it is read.
"""

from __future__ import annotations

import re

NUMBER = r"(0|[1-9][0-9]*)"
"""A non-negative integer as the files write it: ASCII digits, no leading zero."""
_ROW_ID = re.compile(rf"locomo_{NUMBER}_qa{NUMBER}")


def locomo_row_position(row_id: str) -> tuple[int, int] | None:
    """(conversation index, question index) of `locomo_<i>_qa<j>`; None for another id."""
    found = _ROW_ID.fullmatch(row_id)
    return (int(found.group(1)), int(found.group(2))) if found else None


def locomo_row_id(conversation: int, question: int) -> str:
    """`locomo_<i>_qa<j>`: the id of question j of conversation i (0-based)."""
    return f"locomo_{conversation}_qa{question}"
