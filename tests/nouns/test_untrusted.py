"""The shared hostile corpus against every reader of untrusted JSON, and each CLI (issue 29).

Every case must end in one line (an `error:` line and exit 2 at a CLI, a typed one-line
error in-process, or a note / rebuild for the readers that tolerate a damaged file),
never a traceback, and nothing may be written as complete.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.errors import BenchError
from bench.summarise.load import SummaryError
from bench.types import Question
from bench.untrusted import (
    MAX_DATASET_BYTES,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    UntrustedJSONError,
    parse_json,
    read_json,
)

ROOT = Path(__file__).resolve().parents[2]
SMOKE_RUN = ROOT / "results" / "smoke-offline-v0.3.0"
SMOKE_LOCOMO = ROOT / "datasets" / "fixtures" / "smoke_locomo.json"
DATA = Path(os.environ.get("BENCH_DATA_DIR", "/nonexistent"))

HUGE = b""
"""Stands for a sparse file one byte over the largest limit (never read, refused by size)."""

CORPUS: dict[str, bytes] = {
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "deep-object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "digits": b'{"n": ' + b"7" * 5001 + b"}",
    "nan": b'{"n": NaN}',
    "infinity": b'{"n": -Infinity}',
    "overflow": b'{"n": 1e999}',
    "not-utf8": b'{"text": "\xff\xfe"}',
    "truncated": b'{"question_id": "q1", "arms": {',
    "top-string": b'"not an object"',
    "huge": HUGE,
}
"""Each case of the shared hostile corpus, as the bytes of a file (or a reply body)."""


def plant(path: Path, case: str) -> Path:
    """Write the corpus case `case` at `path` (the huge one as a sparse file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if CORPUS[case] is HUGE:
        with path.open("wb") as handle:
            handle.truncate(MAX_DATASET_BYTES + 1)
    else:
        path.write_bytes(CORPUS[case])
    return path


def one_line(message: str, where: str) -> None:
    """A single line that names the file it is about."""
    assert "\n" not in message and "Traceback" not in message, message
    assert where in message, message


# ---- the reader itself ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "what"),
    [
        ("deep", f"nested deeper than {MAX_DEPTH} levels"),
        ("deep-object", f"nested deeper than {MAX_DEPTH} levels"),
        ("digits", f"an integer of 5001 digits (at most {MAX_INT_DIGITS})"),
        ("nan", "NaN (not a JSON number)"),
        ("infinity", "-Infinity (not a JSON number)"),
        ("overflow", "a number out of range"),
        ("not-utf8", "not UTF-8 text (byte 10)"),
        ("truncated", "invalid JSON at line 1 column 32"),
    ],
)
def test_each_limit_is_one_typed_error(case: str, what: str) -> None:
    with pytest.raises(UntrustedJSONError) as info:
        parse_json(CORPUS[case], "reply of http://127.0.0.1:1/x")
    assert what in info.value.what
    one_line(str(info.value), "http://127.0.0.1:1/x")
    assert isinstance(info.value, BenchError) and isinstance(info.value, ValueError)


def test_limits_refuse_only_what_they_say() -> None:
    ok = b'{"a": [[["[[[[[[ text brackets ]]]]"]]], "n": ' + b"9" * MAX_INT_DIGITS + b"}"
    assert parse_json(ok, "x")["a"][0][0][0].startswith("[[[")
    depth = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert parse_json(depth, "x") == json.loads(depth)
    with pytest.raises(UntrustedJSONError, match="nested deeper"):
        parse_json(b"[" + depth + b"]", "x")
    assert parse_json(b'{"s": "' + b"1" * 5000 + b'", "e": 1e308}', "x")["e"] == 1e308
    assert parse_json(b'{"n": NaN}', "x", allow_nan=True)["n"] != 0  # NaN, where allowed


def test_the_checks_stay_linear_on_crafted_text() -> None:
    """Many brackets, then 10 MB of escaped quotes in a string never closed: one pass."""
    import time

    crafted = b"[" * 70 + b'"' + b'\\"' * 5_000_000 + b"]" * 70
    started = time.perf_counter()
    with pytest.raises(UntrustedJSONError, match="Unterminated string"):
        parse_json(crafted, "x")
    assert time.perf_counter() - started < 5  # ~0.05 s; a quadratic scan takes hours
    with pytest.raises(UntrustedJSONError, match="nested deeper than 64"):
        parse_json(b"[" * 900 + b"]" * 900, "x")  # under the parser's own limit


def test_symlinks_fifos_and_huge_files_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("{}")
    (tmp_path / "link.json").symlink_to(target)
    os.mkfifo(tmp_path / "fifo.json")
    plant(tmp_path / "huge.json", "huge")
    refusals = [
        ("link.json", "symbolic link"),
        ("fifo.json", "not a regular file"),
        ("huge.json", "larger than"),
        ("absent.json", "file not found"),
    ]
    for name, what in refusals:
        with pytest.raises(UntrustedJSONError, match=what):
            read_json(tmp_path / name)
    assert read_json(tmp_path / "link.json", follow_symlinks=True) == {}  # a dataset may be one


@pytest.mark.skipif(not (DATA / "locomo10.json").is_file(), reason="shared data not present")
def test_upstream_files_read_exactly_as_json_reads_them() -> None:
    for name in ("locomo10.json", "longmemeval-s-subset16.json", "locomo-audit-errors.json"):
        raw = (DATA / name).read_bytes()
        assert parse_json(raw, name) == json.loads(raw)


# ---- every reader, in-process -----------------------------------------------------------


def _summarise(tmp: Path) -> Any:
    from bench.summarise.load import read_records

    return read_records(str(tmp / "questions"))


def _record(tmp: Path) -> Any:
    from bench.records import read_record

    return read_record(tmp / "questions" / "q.json")


RESUMED = Question("c1:7", "c1", "what?", 1, "x")
"""The question `bench.run`'s resume reads the record of."""


def _resume(tmp: Path) -> Any:
    from bench.run.directory import RunDirectory

    return RunDirectory(tmp).load_record(RESUMED)


def _locomo(tmp: Path) -> Any:
    from bench.loaders.locomo import load_locomo

    return load_locomo(tmp / "data.json")


def _longmemeval(tmp: Path) -> Any:
    from bench.loaders.longmemeval import load_longmemeval

    return load_longmemeval(tmp / "data.json")


def _errata(tmp: Path) -> Any:
    from bench.loaders.errata import read_errata

    return read_errata(tmp / "data.json")


def _published(tmp: Path) -> Any:
    from bench.published.evermemos import read_evermemos

    return read_evermemos(tmp / "data.json")


def _published_lines(tmp: Path) -> Any:
    from bench.published.read import load_entries

    entries = load_entries(tmp / "data.json")
    if not all(isinstance(entry, dict) for _, entry in entries):  # as its reader checks
        raise BenchError(f"{tmp / 'data.json'}: an entry is not an object")
    return entries


def _suite(tmp: Path) -> Any:
    from bench.suite.validate import load_suite

    return load_suite(tmp / "data.json")


def _suite_rag(tmp: Path) -> Any:
    from bench.suite.adapters import rag

    return rag.load(tmp / "data.json", "")


def _suite_beir(tmp: Path) -> Any:
    from bench.suite.adapters import beir

    return beir.load(tmp / "beir", "test")


def _state(tmp: Path) -> Any:
    from bench.arm.live_state import NamespaceLedger

    return NamespaceLedger(tmp).namespaces()


def _prediction(tmp: Path) -> Any:
    from bench.run.phases import StoredArm

    return StoredArm("raw", tmp, "0" * 16)


def _manifest(tmp: Path) -> Any:
    from bench.verify.check import read_manifest

    return read_manifest(tmp)


def _verify_run_json(tmp: Path) -> Any:
    from bench.verify.check import write_manifest

    return write_manifest(tmp)


def _sweep(tmp: Path) -> Any:
    from bench.summarise.sweep import read_rows

    return read_rows(tmp)


def _calibrate(tmp: Path) -> Any:
    from bench.calibrate.evermemos import read_answer_file
    from bench.loaders.locomo import load_locomo

    return read_answer_file(tmp / "data.json", load_locomo(SMOKE_LOCOMO))


READERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "summarise": ("questions/q.json", _summarise),
    "record": ("questions/q.json", _record),
    "resume": (f"questions/{RESUMED.file_stem}.json", _resume),
    "locomo": ("data.json", _locomo),
    "longmemeval": ("data.json", _longmemeval),
    "errata": ("data.json", _errata),
    "published": ("data.json", _published),
    "published-lines": ("data.json", _published_lines),
    "suite": ("data.json", _suite),
    "suite-rag": ("data.json", _suite_rag),
    "suite-beir": ("beir/corpus.jsonl", _suite_beir),
    "state.json": ("state.json", _state),
    "prediction": ("predictions/q.json", _prediction),
    "MANIFEST.json": ("MANIFEST.json", _manifest),
    "verify-run.json": ("run.json", _verify_run_json),
    "sweep-row": ("sweep-rows/job.json", _sweep),
    "calibrate": ("data.json", _calibrate),
}
"""Reader name → (file it reads, relative to the folder; a call that reads it)."""


@pytest.mark.parametrize("case", sorted(CORPUS))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_refuses_the_corpus_in_one_line(
    tmp_path: Path, reader: str, case: str
) -> None:
    name, call = READERS[reader]
    (tmp_path / "questions").mkdir()
    path = plant(tmp_path / name, case)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises((BenchError, SummaryError)) as info:
        call(tmp_path)
    one_line(str(info.value), path.name)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_tolerant_readers_note_or_rebuild(tmp_path: Path, case: str) -> None:
    from bench.arm.checkpoint import IngestCheckpoint
    from bench.runmeta import read_run_meta
    from bench.summarise.calibration_view import read_calibration

    meta, notes = read_run_meta(plant(tmp_path / "run.json", case))
    assert meta is None and len(notes) == 1
    one_line(notes[0], "run.json")
    assert read_calibration(plant(tmp_path / "calibration.json", case)) is None
    store = tmp_path / "stores" / "c1"
    checkpoint = IngestCheckpoint(store, {"k": 1}, root=tmp_path / "stores")
    plant(store / "checkpoint.json", case)
    assert checkpoint.load() is None and not store.exists()  # wiped: rebuilt from zero


# ---- every command, at its CLI boundary -------------------------------------------------


def _cli_run(tmp: Path) -> Path:
    run = tmp / "run"
    shutil.copytree(SMOKE_RUN, run)
    (run / "MANIFEST.json").unlink()
    return run


def _cmd_summarise(tmp: Path, case: str) -> tuple[list[str], Path]:
    run = _cli_run(tmp)
    plant(run / "questions" / "zz-hostile.json", case)
    return ["bench.summarise", str(run), "--write"], run


def _cmd_report(tmp: Path, case: str) -> tuple[list[str], Path]:
    run = _cli_run(tmp)
    plant(run / "questions" / "zz-hostile.json", case)
    return ["bench.report", str(run), "--no-png"], run


def _cmd_verify(tmp: Path, case: str) -> tuple[list[str], Path]:
    run = _cli_run(tmp)
    plant(run / "run.json", case)
    return ["bench.verify", "--write", str(run)], run


def _cmd_verify_manifest(tmp: Path, case: str) -> tuple[list[str], Path]:
    run = _cli_run(tmp)
    plant(run / "MANIFEST.json", case)
    return ["bench.verify", str(run)], run


def _cmd_loaders(tmp: Path, case: str) -> tuple[list[str], Path]:
    plant(tmp / "data" / "data.json", case)
    return ["bench.loaders", str(tmp / "data" / "data.json")], tmp / "data"


def _cmd_published(tmp: Path, case: str) -> tuple[list[str], Path]:
    plant(tmp / "in" / "data.json", case)
    argv = [
        "bench.published",
        str(tmp / "in" / "data.json"),
        "--format",
        "evermemos",
        "--out",
        str(tmp / "in" / "out"),
        "--arm",
        "x",
        "--dataset",
        str(SMOKE_LOCOMO),
    ]
    return argv, tmp / "in"


def _cmd_cleanup(tmp: Path, case: str) -> tuple[list[str], Path]:
    plant(tmp / "run" / "state.json", case)
    return ["bench.cleanup", str(tmp / "run")], tmp / "run"


def _cmd_sweep(tmp: Path, case: str) -> tuple[list[str], Path]:
    plant(tmp / "sweep" / "sweep-rows" / "job.json", case)
    return ["bench.summarise.sweep", str(tmp / "sweep"), "--write"], tmp / "sweep"


COMMANDS: dict[str, Callable[[Path, str], tuple[list[str], Path]]] = {
    "summarise": _cmd_summarise,
    "report": _cmd_report,
    "verify-write": _cmd_verify,
    "verify": _cmd_verify_manifest,
    "loaders": _cmd_loaders,
    "published": _cmd_published,
    "cleanup": _cmd_cleanup,
    "sweep": _cmd_sweep,
}
"""Command → a function planting the case and giving (argv, the folder it may not change)."""


def _main(module: str) -> Callable[[list[str]], int]:
    from bench.names import load_symbol

    entry = {
        "bench.summarise": "bench.summarise.cli:main",
        "bench.report": "bench.report.page:main",
        "bench.verify": "bench.verify.check:main",
        "bench.loaders": "bench.loaders.__main__:main",
        "bench.published": "bench.published.cli:main",
        "bench.cleanup": "bench.cleanup.__main__:main",
        "bench.summarise.sweep": "bench.summarise.sweep:main",
    }[module]
    main: Callable[[list[str]], int] = load_symbol(entry)
    return main


@pytest.mark.parametrize("case", sorted(CORPUS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_gives_one_error_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, case: str
) -> None:
    argv, folder = COMMANDS[command](tmp_path, case)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    status = _main(argv[0])(argv[1:])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before


# ---- replies of services and models ---------------------------------------------------


REPLY_CASES = ["deep", "deep-object", "digits", "not-utf8", "truncated"]
"""Corpus cases a reply body can be (a reply is bytes in hand: no size on disk)."""


@pytest.mark.parametrize("case", REPLY_CASES)
def test_the_proxy_answers_a_hostile_request_with_one_400(tmp_path: Path, case: str) -> None:
    import httpx

    from bench.config import CacheConfig, EmbedderConfig, EndpointConfig, ProviderConfig
    from bench.providers.factory import build_providers
    from tests.support.fault_replies import echo_chat_fn
    from tests.support.fault_server import FaultServer

    with FaultServer(chat_fn=echo_chat_fn) as stub:
        endpoint = EndpointConfig(kind="openai", model="m", base_url=stub.base_url)
        embedder = EmbedderConfig(kind="openai", model="e", base_url=stub.base_url, dim=256)
        cfg = ProviderConfig(
            answerer=endpoint, extractor=endpoint, embedder=embedder, cache=CacheConfig("off")
        )
        providers = build_providers(cfg, tmp_path)
        try:
            url = providers.proxy_url("mem0", "ingest") + "/chat/completions"
            reply = httpx.post(url, content=CORPUS[case], timeout=30)
        finally:
            providers.close()
        assert stub.requests == []  # nothing was forwarded
    assert reply.status_code == 400
    assert reply.json()["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize("case", [c for c in REPLY_CASES if c != "not-utf8"])  # text already
def test_judge_and_extractor_replies_are_unparseable_not_a_crash(case: str) -> None:
    from arms.neuromorphic.extract_llm import parse_arguments
    from bench.judge.judges import parse_verdict
    from bench.judge.official.verdicts import beam_json, mem0_verdict

    text = CORPUS[case].decode("utf-8")
    for parse in (parse_verdict, mem0_verdict, beam_json):
        with pytest.raises(ValueError):  # the callers' "unparseable", never RecursionError
            parse(text)
    drafts, errors = parse_arguments(text, ("D1:1",))
    assert drafts == [] and [e.kind for e in errors] == ["bad_json"]


# ---- wrong types at every level of a record -------------------------------------------


def _edit_record(data: dict[str, Any], where: str, value: Any) -> None:
    """Set the field at `where` (`category`, `arms.*.scores.f1`, ...) in every arm."""
    parts = where.split(".")
    targets = [data]
    for part in parts[:-1]:
        targets = [t[k] for t in targets for k in (t if part == "*" else [part])]
    for target in targets:
        target[parts[-1]] = value


TYPE_EDITS = [
    ("category", "x", "category is 'x', not int"),
    ("evidence", "D1:3", "evidence is 'D1:3', not list[str]"),
    ("evidence", [1], "evidence is [1], not list[str]"),
    ("arms.*.scores.f1", "high", "scores is {"),
    ("arms.*.correct", "yes", "correct is 'yes', not bool | None"),
    ("arms.*.status", "fine", "status is 'fine'"),
    ("arms.*.retrieved_ids", "D1:1", "retrieved_ids is 'D1:1'"),
    ("arms.*.usage", {"prompt_tokens": "9"}, "usage is {'prompt_tokens': '9'}"),
    ("arms.*.latency_ms", True, "latency_ms is True, not float | None"),
    ("arms.*.judgements", [], "judgements is [], not dict"),
]
"""(field, hostile value, what the one line says) for the record checks."""


@pytest.mark.parametrize(("where", "value", "said"), TYPE_EDITS)
@pytest.mark.parametrize("command", ["bench.summarise", "bench.report"])
def test_a_record_field_of_the_wrong_type_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    where: str,
    value: Any,
    said: str,
) -> None:
    run = _cli_run(tmp_path)
    path = sorted((run / "questions").glob("*.json"))[3]
    data = json.loads(path.read_text())
    _edit_record(data, where, value)
    path.write_text(json.dumps(data))
    argv = [str(run)] if command == "bench.summarise" else [str(run), "--no-png"]
    assert _main(command)(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: unreadable record"), err
    assert said in err, err


def _field_paths(record: dict[str, Any]) -> list[list[str | int]]:
    """Every key path in `record` (lists: their first item), and each schema field it lacks."""
    paths: list[list[str | int]] = []

    def walk(value: Any, path: list[str | int]) -> None:
        if not isinstance(value, dict | list):
            return
        for key, inner in value.items() if isinstance(value, dict) else enumerate(value[:1]):
            paths.append([*path, key])
            walk(inner, [*path, key])

    walk(record, [])
    schema = json.loads((ROOT / "bench/schema/question_record.schema.json").read_text())
    arm = next(iter(record["arms"]))
    paths += [[k] for k in schema["properties"] if k not in record]
    result = schema["$defs"]["arm_result"]["properties"]
    return paths + [["arms", arm, k] for k in result if k not in record["arms"][arm]]


@pytest.mark.slow
def test_any_field_of_any_type_is_read_or_refused_by_the_reader(tmp_path: Path) -> None:
    """The reader type-checks every field, so the summary's pass never meets a wrong type.

    Each field of a record (and each schema field it lacks) set to each hostile value: the
    summary is computed, or the reader refuses the record (SummaryError); no other error.
    (This replaced `summary.py`'s `_scan_or_blame`, which retried the pass per record to
    name the one with a wrong type: with this test passing, it never ran.)
    """
    from bench.summarise import load_run, summarise_records

    run = tmp_path / "run"
    (run / "questions").mkdir(parents=True)
    shutil.copy(SMOKE_RUN / "run.json", run / "run.json")
    for source in sorted((SMOKE_RUN / "questions").glob("*.json"))[:2]:
        shutil.copy(source, run / "questions" / source.name)
    target = sorted((run / "questions").glob("*.json"))[0]
    record = json.loads(target.read_text())
    outcomes = {"read": 0, "refused": 0}
    values: list[Any] = ["x", 2.5, None, [], {"a": None}, True]
    for path in _field_paths(record):
        for hostile in values:
            edited = json.loads(json.dumps(record))
            parent = edited
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = hostile
            target.write_text(json.dumps(edited))
            try:
                summarise_records(load_run(run))
                outcomes["read"] += 1
            except SummaryError:
                outcomes["refused"] += 1
    assert outcomes["refused"] > 100 and outcomes["read"] > 100, outcomes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{'a': [1, 2.5, 'x', None, True]}", {"a": [1, 2.5, "x", None, True]}),
        ("['((([[[', ']]]']", ["((([[[", "]]]"]),  # brackets inside strings are not nesting
        ("[" * 65 + "]" * 65, "nested deeper than 64 levels"),
        ("(" * 300 + ")" * 300, "nested deeper than 64 levels"),
        ("{1: 2}", "a key that is not a string"),
        ("{'a'}", "a literal holding a set"),
        ("1e999", "a number out of range"),
        ("9" * 309, "an integer of 309 digits"),
        ("__import__('os')", "not a Python literal"),
        ("{'a': [", "not a Python literal"),
    ],
)
def test_python_literals_are_bounded_like_json(text: str, expected: Any) -> None:
    from bench.untrusted import parse_python_literal

    if isinstance(expected, str):
        with pytest.raises(UntrustedJSONError, match=re.escape(expected)):
            parse_python_literal(text, "t")
    else:
        assert parse_python_literal(text, "t") == expected


@pytest.mark.parametrize("reader", ["json", "json lines"])
def test_a_huge_file_of_nul_bytes_is_refused_unread(tmp_path: Path, reader: str) -> None:
    """Issue 40, item 12: 1.5 GB of NUL bytes (under the 4 GiB limit) was read whole
    (3.1 GB resident) before the parser's error; its ends now refuse it in one line."""
    from bench.untrusted import read_json_lines

    path = tmp_path / "zeros.json"
    with path.open("wb") as handle:  # sparse: nothing is written to disk
        handle.truncate(1_500_000_000)
    read = read_json if reader == "json" else read_json_lines
    with pytest.raises(UntrustedJSONError) as err:
        read(path, limit=MAX_DATASET_BYTES)
    assert str(err.value).startswith(f"not JSON text (it holds NUL bytes) {path}: ")


def test_a_large_file_starting_with_no_json_value_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "text.json"
    path.write_bytes(b"  hello" + b" " * 2_000_000)
    with pytest.raises(UntrustedJSONError, match=r"not JSON text \(it starts with b'h'\)"):
        read_json(path, limit=MAX_DATASET_BYTES)


def test_parse_json_copies_a_large_text_once() -> None:
    """A 10M-token suite is ~40 MB: parsing holds its decoded text and the value, no more."""
    import tracemalloc

    from bench.untrusted import parse_json

    data = json.dumps({"memories": ["x" * 1000] * 8000}).encode()  # 8 MB, few brackets
    tracemalloc.start()
    try:
        parse_json(data, "test")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2.5 * len(data)  # decoded text + parsed strings; a bracket-count copy is a third
