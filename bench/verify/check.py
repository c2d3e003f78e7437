"""`python -m bench.verify RUN_DIR`: check a run's files against its manifest.

`MANIFEST.json` (written at the end of every `bench.run`, or by `--write`) lists the
SHA-256 of every result file of the run — `questions/*.json`, `predictions/`, `run.json`
— plus the dataset's and the prompts' SHA-256 (from `run.json`) and the code commit that
produced the records. Files that follow-up commands rebuild from those results
(`is_derived`: `SUMMARY.md`, `comparable.json`, `dry_run.json`, `report.html`,
`explorer.html`, any other top-level `*.md` or `*.html`, and `screens/`, `charts/`) are
listed apart, under `derived`, for information: rewriting them (`bench.summarise
--write`, `bench.screen`, `bench.report` into the run) is no mismatch, since they are
checked by rebuilding them from the verified results. Caches, stores, logs and dot files
are not listed at all.

Verification prints one line per result file that is `changed`, `missing` or `extra`
(`--verbose` also prints every `unchanged` one and every derived file's state), then one
closing line; exit 0 when every result matches, 1 on any mismatch, 2 on bad input. A
manifest from before the split (derived files under `files`) is read the same way.
With `--key PRIVATE.pem` (Ed25519) `--write` also signs the manifest into
`MANIFEST.sig`; `--public-key PUBLIC.pem` then makes verification check that signature
(needs `cryptography`).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.cli_errors import one_line_errors
from bench.errors import BenchError
from bench.files import read_file_bytes, write_text_atomic
from bench.untrusted import UntrustedJSONError, parse_json, read_json_object
from bench.verify.files import (
    MANIFEST,
    SIGNATURE,
    derived_files,
    irregular_files,
    is_derived,
    listed_files,
    rel_path,
    result_files,
    sha256_of,
)

MANIFEST_VERSION = 1


class VerifyError(BenchError):
    """A run directory or manifest that cannot be verified (bad input: exit 2)."""


@dataclass(frozen=True)
class Manifest:
    """What a run directory held when it was finished."""

    files: dict[str, str]
    """Result file: path relative to the run directory (POSIX) -> SHA-256 of its bytes."""
    derived: dict[str, str] = field(default_factory=dict)
    """Derived file (`is_derived`) -> SHA-256 when the manifest was written; not checked."""
    code_commit: str | None = None
    """Git commit of the code that ran; None when unknown."""
    code_dirty: bool | None = None
    """True when that checkout had uncommitted changes; None when unknown."""
    dataset: dict[str, Any] = field(default_factory=dict)
    """`name`, `path`, `sha256` (and the errata file's) as `run.json` records them."""
    prompts: dict[str, str] = field(default_factory=dict)
    """Prompt role (`answer`, `judge:<id>`) -> SHA-256 (judges: prompt hash)."""
    version: int = MANIFEST_VERSION
    """The manifest format version (`MANIFEST_VERSION`)."""
    verdict: dict[str, Any] | None = None
    """The run's publishable verdict (`bench.summarise.verdict.Verdict.to_json`) when the
    manifest was written, so a signed manifest signs it; None in manifests before it."""

    def to_json(self) -> dict[str, Any]:
        """The manifest as written (keys sorted, so the bytes are reproducible)."""
        out = {
            "version": self.version,
            "code_commit": self.code_commit,
            "code_dirty": self.code_dirty,
            "dataset": self.dataset,
            "prompts": self.prompts,
            "files": dict(sorted(self.files.items())),
            "derived": dict(sorted(self.derived.items())),
        }
        return out | ({"verdict": self.verdict} if self.verdict is not None else {})


UNSIGNED_NOTE = (
    "no signature checked: this proves the files are unchanged against accidental change "
    "only, not against someone who can re-run the harness (sign with --write --key, check "
    "with --public-key)"
)
"""What `bench.verify` says of a run it checked without a public key."""


def _run_json(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "run.json"
    try:
        return read_json_object(path, fix="pass a finished bench.run directory")
    except UntrustedJSONError as exc:
        raise VerifyError(str(exc)) from None


def _from_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """The manifest fields read from `run.json`: code commit, dataset, prompt hashes."""
    prov = meta.get("provenance") if isinstance(meta.get("provenance"), dict) else {}
    prompts = {}
    if isinstance(meta.get("prompt"), dict) and meta["prompt"].get("sha256"):
        prompts["answer"] = str(meta["prompt"]["sha256"])
    for judge in meta.get("judges") or []:
        if isinstance(judge, dict) and judge.get("prompt_hash"):
            prompts[f"judge:{judge.get('judge_id')}"] = str(judge["prompt_hash"])
    dataset = meta.get("dataset") if isinstance(meta.get("dataset"), dict) else {}
    return {
        "code_commit": (prov or {}).get("git_commit"),
        "code_dirty": (prov or {}).get("git_dirty"),
        "dataset": dict(dataset or {}),
        "prompts": prompts,
    }


def build_manifest(run_dir: Path) -> Manifest:
    """The manifest of a run directory as it is now."""
    if not (run_dir / "questions").is_dir():
        raise VerifyError(f"{run_dir}: no questions/ folder; pass a bench.run directory")
    meta = _from_meta(_run_json(run_dir))  # read first: a hostile run.json is never hashed
    files = {rel_path(p, run_dir): sha256_of(p) for p in result_files(run_dir)}
    derived = {rel_path(p, run_dir): sha256_of(p) for p in derived_files(run_dir)}
    return Manifest(files=files, derived=derived, verdict=run_verdict(run_dir), **meta)


def run_verdict(run_dir: Path) -> dict[str, Any]:
    """The run's verdict as the summariser computes it (unsummarisable: not publishable)."""
    from bench.summarise.load import SummaryError
    from bench.summarise.summary import summarise_run
    from bench.summarise.verdict import UNSUMMARISABLE

    try:
        return summarise_run(run_dir).verdict.to_json()
    except SummaryError as exc:
        why = {"code": UNSUMMARISABLE, "sentence": str(exc), "arms": []}
        return {"publishable": False, "reasons": [why], "arms": {}}


def manifest_bytes(manifest: Manifest) -> bytes:
    """The exact bytes written (and signed)."""
    return (json.dumps(manifest.to_json(), indent=1, sort_keys=False) + "\n").encode("utf-8")


def manifest_current(run_dir: Path) -> bool:
    """True when `MANIFEST.json` lists exactly the result files and none is newer than it.

    make's rule, as for the report (`bench.run.resume.report_current`), plus the file
    list: a session that wrote nothing need not hash 16 MB of records again to find the
    manifest unchanged. A file written or edited after the manifest is newer, and one
    added or removed changes the list, so the manifest is rebuilt in those cases (a
    file whose mtime was set back by hand is the one change this cannot see).
    """
    path = run_dir / MANIFEST
    if not path.is_file():
        return False
    written = path.stat().st_mtime_ns
    files = listed_files(run_dir)
    if any(p.stat().st_mtime_ns > written for p in files):
        return False
    try:
        _, manifest = read_manifest(run_dir)
    except VerifyError:
        return False
    listed = manifest.files.keys() | manifest.derived.keys()
    return listed == {rel_path(p, run_dir) for p in files}


def refresh_manifest(run_dir: Path, wrote: bool) -> None:
    """A run's closing manifest: rewritten when it wrote or a listed file changed.

    Never over a record changed outside the harness: every `questions/` file that
    differs from the old manifest must hold content the harness journaled
    (bench/verify/journal.py), else a VerifyError names it and nothing is rewritten.
    """
    if not wrote and manifest_current(run_dir):
        return
    from bench.verify.journal import written

    journal = written(run_dir)
    if journal is not None and (run_dir / MANIFEST).is_file():
        _, old = read_manifest(run_dir)
        for path in result_files(run_dir):
            rel = rel_path(path, run_dir)
            if not rel.startswith("questions/") or old.files.get(rel) == (now := sha256_of(path)):
                continue
            if now not in journal.get(rel, set()):
                raise VerifyError(
                    f"{path}: changed since {MANIFEST} was written, and not by the harness; "
                    "the manifest is not rewritten over it: restore it, delete it to have "
                    f"the run redo it, or accept it knowingly with python -m bench.verify "
                    f"--write {run_dir}"
                )
    write_manifest(run_dir)


def write_manifest(run_dir: Path, key: Path | None = None) -> Path:
    """Write `MANIFEST.json` (and `MANIFEST.sig` when an Ed25519 key is given)."""
    manifest = build_manifest(run_dir)
    data = manifest_bytes(manifest)
    path = run_dir / MANIFEST
    if key is None and path.is_file() and path.read_bytes() == data:
        # unchanged: not rewritten, only marked as checked now (see manifest_current); a
        # finished run in a read-only folder stays as it is
        with contextlib.suppress(OSError):
            os.utime(path)
        return path
    write_text_atomic(path, data.decode("utf-8"))
    if key is not None:
        from bench.verify.signing import sign

        write_text_atomic(run_dir / SIGNATURE, base64.b64encode(sign(data, key)).decode() + "\n")
    return run_dir / MANIFEST


def read_manifest(run_dir: Path) -> tuple[bytes, Manifest]:
    """The manifest's bytes and its parsed contents."""
    path = run_dir / MANIFEST
    if not path.is_file():
        raise VerifyError(
            f"{path}: no manifest; write one with python -m bench.verify --write {run_dir}"
        )
    try:
        data = read_file_bytes(str(path))
        raw = parse_json(data, str(path))
    except OSError as exc:
        what = exc.strerror or type(exc).__name__
        raise VerifyError(f"{path}: cannot be read ({what}); rewrite it with --write") from None
    except UntrustedJSONError:
        raw = None
    files = raw.get("files") if isinstance(raw, dict) else None
    derived = raw.get("derived", {}) if isinstance(raw, dict) else None
    if not all(
        isinstance(d, dict) and all(isinstance(v, str) for v in d.values())
        for d in (files, derived)
    ):
        raise VerifyError(f"{path}: not a bench.verify manifest; rewrite it with --write")
    assert isinstance(raw, dict) and isinstance(files, dict) and isinstance(derived, dict)
    return data, Manifest(
        files=files,
        derived=derived,
        code_commit=raw.get("code_commit"),
        code_dirty=raw.get("code_dirty"),
        dataset=raw.get("dataset") or {},
        prompts=raw.get("prompts") or {},
        version=raw.get("version", MANIFEST_VERSION),
        verdict=raw["verdict"] if isinstance(raw.get("verdict"), dict) else None,
    )


@dataclass
class Verdict:
    """The outcome of verifying one run directory."""

    unchanged: list[str] = field(default_factory=list)
    """Files whose SHA-256 matches the manifest."""
    changed: list[str] = field(default_factory=list)
    """Files whose SHA-256 differs from the manifest."""
    missing: list[str] = field(default_factory=list)
    """Files the manifest lists that are gone."""
    extra: list[str] = field(default_factory=list)
    """Files present that the manifest does not list."""
    derived: list[str] = field(default_factory=list)
    """`<state> <path>` of each derived file (unchanged, changed, new, missing): not checked."""
    problems: list[str] = field(default_factory=list)
    """Other mismatches: signature, run.json disagreeing with the manifest."""

    @property
    def ok(self) -> bool:
        """True when nothing differs."""
        return not (self.changed or self.missing or self.extra or self.problems)

    def lines(self, verbose: bool = False) -> list[str]:
        """One line per file (unchanged ones only when `verbose`), then problems."""
        out = [f"unchanged {p}" for p in self.unchanged] if verbose else []
        out += [f"derived {d} (not checked)" for d in self.derived] if verbose else []
        out += [f"changed {p}" for p in self.changed]
        out += [f"missing {p}" for p in self.missing]
        out += [f"extra {p}" for p in self.extra]
        return out + self.problems


def verify_run(run_dir: Path, public_key: Path | None = None) -> Verdict:
    """Compare the run directory with its manifest (and the signature, given a key)."""
    data, manifest = read_manifest(run_dir)
    now = {rel_path(p, run_dir): p for p in result_files(run_dir)}
    listed = {k: v for k, v in manifest.files.items() if not is_derived(k)}
    derived = {**{k: v for k, v in manifest.files.items() if is_derived(k)}, **manifest.derived}
    verdict = Verdict(derived=_derived_states(run_dir, derived))
    for rel, digest in sorted(listed.items()):
        if rel not in now:
            verdict.missing.append(rel)
        elif sha256_of(now[rel]) == digest:
            verdict.unchanged.append(rel)
        else:
            verdict.changed.append(rel)
    verdict.extra = sorted(set(now) - set(listed))
    verdict.problems += [
        f"refused {rel} (not a regular file: symlinks, FIFOs and devices do not belong "
        "in a run directory)"
        for rel in irregular_files(run_dir)
    ]
    if "run.json" in verdict.unchanged:
        current = _from_meta(_run_json(run_dir))
        for name in ("code_commit", "dataset", "prompts"):
            if current[name] != getattr(manifest, name):
                verdict.problems.append(f"changed {MANIFEST} {name} (disagrees with run.json)")
    if public_key is not None:
        verdict.problems += _check_signature(run_dir, data, public_key)
    return verdict


def _derived_states(run_dir: Path, listed: dict[str, str]) -> list[str]:
    """`<state> <path>` for every derived file listed or present, sorted by path."""
    now = {rel_path(p, run_dir): p for p in derived_files(run_dir)}
    states = {}
    for rel in sorted(listed.keys() | now.keys()):
        if rel not in now:
            states[rel] = "missing"
        elif rel not in listed:
            states[rel] = "new"
        else:
            states[rel] = "unchanged" if sha256_of(now[rel]) == listed[rel] else "changed"
    return [f"{state} {rel}" for rel, state in states.items()]


def _check_signature(run_dir: Path, data: bytes, public_key: Path) -> list[str]:
    from bench.verify.signing import verify_signature

    sig_path = run_dir / SIGNATURE
    if not sig_path.is_file():
        return [f"missing {SIGNATURE} (a public key was given)"]
    try:
        signature = base64.b64decode(sig_path.read_text().strip(), validate=True)
    except ValueError:
        return [f"changed {SIGNATURE} (not base64)"]
    return (
        []
        if verify_signature(data, signature, public_key)
        else [f"changed {SIGNATURE} (bad signature)"]
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.verify", description=__doc__.splitlines()[0]
    )
    parser.add_argument("run_dir", type=Path, nargs="+", help="run directories")
    parser.add_argument("--write", action="store_true", help="(re)write MANIFEST.json instead")
    parser.add_argument("--key", type=Path, help="Ed25519 private key (PEM) to sign with --write")
    parser.add_argument("--public-key", type=Path, help="Ed25519 public key (PEM) to check")
    parser.add_argument("--verbose", action="store_true", help="also list unchanged files")
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI: 0 all match (or written), 1 any mismatch, 2 bad input (one `error:` line)."""
    args = _parser().parse_args(argv)
    return one_line_errors(lambda: _verify_all(args))


def _verify_all(args: argparse.Namespace) -> int:
    """Write or check each run's manifest, one line per run; 1 if any mismatches."""
    status = 0
    for run_dir in args.run_dir:
        if args.write:
            path = write_manifest(run_dir, args.key)
            print(f"wrote {path}")
            continue
        verdict = verify_run(run_dir, args.public_key)
        for line in verdict.lines(args.verbose):
            print(line)
        n = len(verdict.unchanged)
        note = f"; {UNSIGNED_NOTE}" if args.public_key is None else ""
        aside = f"; {len(verdict.derived)} derived files not checked" if verdict.derived else ""
        if verdict.ok:
            print(f"ok {run_dir}: {n} files unchanged{aside}{note}")
        else:
            bad = len(verdict.lines())
            print(f"FAILED {run_dir}: {bad} mismatches, {n} files unchanged{aside}{note}")
            status = 1
    return status
