"""The one reader for JSON the harness did not write itself. Standard library only.

Datasets, records, `run.json`, `state.json`, `MANIFEST.json`, predictions, suites,
published results and the replies of memory services all arrive through `parse_json`
(bytes or text already in hand) or `read_json` (a file), which bound what a hostile or
damaged input can cost before anything downstream sees it (issue 29):

- size: a file over `limit` bytes is refused from its `fstat`, never read
  (`bench.files.read_file_bytes`; only regular files); a file over 1 MiB whose ends
  cannot be JSON (NUL bytes, a first byte no JSON value starts with) is refused from a
  look at its first and last 64 KiB, never read whole;
- text: strict UTF-8 (a byte sequence that is not UTF-8 is refused, never replaced);
- nesting: at most `MAX_DEPTH` levels of arrays and objects (the deepest file the
  project reads is 9); deeper input would exhaust the parser's or a later recursive
  walk's stack (a `RecursionError` traceback). The parser's own `RecursionError`
  (about 1,000 levels) is caught; shallower excess is found by a walk of the parsed
  value without recursion (never a regex over the text: a crafted string would make
  that quadratic);
- numbers: integers of at most `MAX_INT_DIGITS` digits (so every integer converts to a
  finite float: 10^308 is the largest double's order) and finite floats only —
  `1e999` would read as infinity; `NaN`/`Infinity` literals are refused unless the
  reader allows them;
- shape: `read_json_object` / `expect_object` refuse a top level that is not an object.

A Python literal (`repr` of parsed JSON, as some Hub datasets store a column) is read by
`parse_python_literal` under the same bounds: its size and its bracket depth (counted by
the tokenizer, outside strings) are checked before `ast.literal_eval` builds anything
(the compiler recurses once per level), and the value must be JSON's kinds of data.

Duplicate keys are not refused: the last one wins, as in every JSON parser the upstream
files are written for; identities are checked on the parsed values instead.

Each failure is one `UntrustedJSONError` (a `BenchError`, and a `ValueError` so that
readers already catching malformed JSON keep working) whose message is
`<what> <where>: <fix>`: a CLI prints it after `error: ` and exits 2, a live arm turns
it into an `error` result.

Cost: the parser calls `_int` and `_float` for each number (a few percent of a parse;
a pre-scan of the text for long digit runs cost twice that, issue 28), and one
`bytes.translate` pass counts the brackets, so the walk for depth runs only on a text
with more than `MAX_DEPTH` of them.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import math
import os
import stat
import tokenize
from pathlib import Path
from typing import Any, Final, NoReturn

from bench.errors import BenchError
from bench.files import MAX_RECORD_BYTES, read_file_bytes

MAX_DEPTH: Final = 64
"""Deepest nesting of arrays and objects accepted (legitimate files reach 9)."""
MAX_INT_DIGITS: Final = 308
"""Most digits in a JSON integer: every accepted integer converts to a finite float."""
MAX_DATASET_BYTES: Final = 4 * 1024**3
"""Largest dataset, suite or published-results file read (LongMemEval's `_m` is 2.7 GB)."""
MAX_LITERAL_CHARS: Final = 64 * 1024**2
"""Longest Python-literal text evaluated (a BEAM conversation's questions are ~40 kB)."""
DEFAULT_FIX: Final = "pass the file as it was written (or as upstream publishes it)"


class UntrustedJSONError(BenchError, ValueError):
    """Untrusted JSON that cannot be used: `<what> <where>: <fix>` on one line."""

    def __init__(self, what: str, where: str, fix: str = DEFAULT_FIX) -> None:
        """`what` went wrong, `where` (file or URL, and the place in it), and the `fix`."""
        self.what, self.where, self.fix = what, where, fix
        super().__init__(" ".join(f"{what} {where}: {fix}".split()))


def read_json(
    path: Path | str,
    *,
    limit: int = MAX_RECORD_BYTES,
    follow_symlinks: bool = False,
    allow_nan: bool = False,
    fix: str = DEFAULT_FIX,
) -> Any:
    """The parsed JSON of the regular file at `path` (at most `limit` bytes).

    A missing file, a symlink (unless `follow_symlinks`: a dataset the user points at
    may be one; a run directory's files never are), a FIFO, a device or a directory is
    refused like malformed JSON: one `UntrustedJSONError` naming the file.
    """
    try:
        _check_ends(str(path), limit, follow_symlinks, fix)
        data = read_file_bytes(str(path), limit, follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        raise UntrustedJSONError("file not found", str(path), fix) from None
    except OSError as exc:
        what = (exc.strerror or type(exc).__name__).lower()
        raise UntrustedJSONError(f"cannot be read ({what})", str(path), fix) from None
    return parse_json(data, str(path), allow_nan=allow_nan, fix=fix)


def read_json_lines(
    path: Path | str,
    *,
    limit: int = MAX_DATASET_BYTES,
    follow_symlinks: bool = True,
    fix: str = DEFAULT_FIX,
) -> list[tuple[int, Any]]:
    """(line number, parsed value) of every non-blank line of a JSON Lines file."""
    try:
        _check_ends(str(path), limit, follow_symlinks, fix)
        data = read_file_bytes(str(path), limit, follow_symlinks=follow_symlinks)
    except OSError as exc:
        what = (exc.strerror or type(exc).__name__).lower()
        raise UntrustedJSONError(f"cannot be read ({what})", str(path), fix) from None
    return [
        (n, parse_json(line, f"{path} line {n}", fix=fix))
        for n, line in enumerate(data.splitlines(), 1)
        if line.strip()
    ]


PEEK_FROM: Final = 1 << 20
"""Files larger than this have their two ends looked at before they are read whole."""
_PEEK = 1 << 16
_STARTS = frozenset(b'{["-0123456789tfn')


def _check_ends(path: str, limit: int, follow_symlinks: bool, fix: str) -> None:
    """Refuse a large regular file whose first or last 64 KiB cannot be JSON, unread.

    JSON text never holds a NUL byte and starts (after white space) with one of
    `{["-0-9tfn`: a 1.5 GB file of NUL bytes is refused from a look at its ends instead
    of being read whole (3 GB resident) before the parser's error. Anything that is not
    a large regular file within `limit` is left to `read_file_bytes`.
    """
    try:
        info = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode) or not PEEK_FROM < info.st_size <= limit:
        return
    with open(path, "rb") as handle:
        head = handle.read(_PEEK)
        handle.seek(max(0, info.st_size - _PEEK))
        tail = handle.read(_PEEK)
    first = head.lstrip(b" \t\r\n")[:1]
    if b"\x00" in head or b"\x00" in tail:
        raise UntrustedJSONError("not JSON text (it holds NUL bytes)", path, fix)
    if first and first[0] not in _STARTS:
        raise UntrustedJSONError(f"not JSON text (it starts with {first!r})", path, fix)


def read_json_object(path: Path | str, **options: Any) -> dict[str, Any]:
    """`read_json` of a file whose top level must be a JSON object."""
    return expect_object(read_json(path, **options), str(path), options.get("fix", DEFAULT_FIX))


def expect_object(value: object, where: str, fix: str = DEFAULT_FIX) -> dict[str, Any]:
    """`value` itself when it is a JSON object; else an `UntrustedJSONError`."""
    if not isinstance(value, dict):
        raise UntrustedJSONError(f"top level is {json_type(value)}, not an object", where, fix)
    return value


def json_type(value: object) -> str:
    """The JSON name of `value`'s type, with its article (`a list`, `null`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    names = {dict: "an object", list: "a list", str: "a string", int: "an integer"}
    return names.get(type(value), "a number")


def parse_json(
    data: bytes | str, where: str, *, allow_nan: bool = False, fix: str = DEFAULT_FIX
) -> Any:
    """The parsed JSON of `data` read from `where` (a file or URL), every limit checked."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    try:
        text = data if isinstance(data, str) else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UntrustedJSONError(f"not UTF-8 text (byte {exc.start})", where, fix) from None
    deep = f"JSON nested deeper than {MAX_DEPTH} levels"
    try:
        value = _decoder(allow_nan).decode(text)
    except _Refused as exc:
        raise UntrustedJSONError(str(exc), where, fix) from None
    except json.JSONDecodeError as exc:
        what = f"invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})"
        raise UntrustedJSONError(what, where, fix) from None
    except RecursionError:  # deeper than the parser's own stack allows (~1,000 levels)
        raise UntrustedJSONError(deep, where, fix) from None
    except ValueError as exc:  # a limit of the parser itself
        raise UntrustedJSONError(f"unusable JSON ({exc})", where, fix) from None
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _too_deep(value):  # no copy of raw
        raise UntrustedJSONError(deep, where, fix)
    return value


def _too_deep(value: Any) -> bool:
    """Whether `value` nests arrays and objects more than `MAX_DEPTH` levels deep.

    Walked without recursion, and only when the text holds more brackets than
    `MAX_DEPTH` (a file with fewer cannot be deeper; most records have about 30).
    """
    stack = [(value, 1)] if value.__class__ is dict or value.__class__ is list else []
    while stack:
        item, depth = stack.pop()
        children = item.values() if item.__class__ is dict else item
        inner = [c for c in children if c.__class__ is dict or c.__class__ is list]
        if inner and depth == MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in inner)
    return False


def parse_python_literal(text: str, where: str, fix: str = DEFAULT_FIX) -> Any:
    """The value of a Python literal of JSON's kinds (dict, list, str, int, float, bool, None).

    Bounded like `parse_json` (module docstring): at most `MAX_LITERAL_CHARS` characters
    and `MAX_DEPTH` levels of brackets, checked before evaluation; then integers of at
    most `MAX_INT_DIGITS` digits, finite floats and string keys only.
    """
    if len(text) > MAX_LITERAL_CHARS:
        raise UntrustedJSONError(f"a literal of {len(text)} characters", where, fix)
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
                if depth > MAX_DEPTH:
                    raise UntrustedJSONError(f"nested deeper than {MAX_DEPTH} levels", where, fix)
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
        value = ast.literal_eval(text)
    except (tokenize.TokenError, ValueError, TypeError, SyntaxError, MemoryError) as exc:
        if isinstance(exc, UntrustedJSONError):
            raise
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UntrustedJSONError(f"not a Python literal ({first[:80]})", where, fix) from None
    _check_literal(value, where, fix)
    return value


def _check_literal(value: object, where: str, fix: str) -> None:
    """Refuse kinds JSON has not (tuples, sets, bytes, ...) and JSON's refused numbers."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not all(isinstance(k, str) for k in item):
                raise UntrustedJSONError("a literal with a key that is not a string", where, fix)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and len(str(abs(item))) > MAX_INT_DIGITS:
            what = f"an integer of {len(str(abs(item)))} digits (at most {MAX_INT_DIGITS})"
            raise UntrustedJSONError(what, where, fix)
        elif isinstance(item, float) and not math.isfinite(item):
            raise UntrustedJSONError(f"a number out of range ({item})", where, fix)
        elif not isinstance(item, (str, int, float)) and item is not None:
            raise UntrustedJSONError(f"a literal holding a {type(item).__name__}", where, fix)


class _Refused(Exception):
    """A number or constant the reader refuses (raised inside the parser's hooks)."""


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(digits)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"a number out of range ({text[:20]}...)")
    return value


def _nan(name: str) -> float:
    return float(name)


def _no_nan(name: str) -> float:
    raise _Refused(f"{name} (not a JSON number)")


@functools.cache
def _decoder(allow_nan: bool) -> json.JSONDecoder:
    """One decoder per mode, built once (`json.loads` with hooks builds one per call)."""
    constant = _nan if allow_nan else _no_nan
    return json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=constant)


def refuse(what: str, where: str, fix: str = DEFAULT_FIX) -> NoReturn:
    """Raise the one-line `UntrustedJSONError` for a value of the wrong shape at `where`."""
    raise UntrustedJSONError(what, where, fix)
