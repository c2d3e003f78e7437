"""Locate the weights and Llama-2 tokenizer that the WordLlama wheel ships.

WordLlama's own loader looks for the tokenizer in `wordllama/tokenizer/` while the
wheel installs it in `wordllama/tokenizers/`, then falls back to the Hugging Face
Hub. armbench loads both files straight from the installed package and never
touches the network.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from bench.errors import ConfigError

WORDLLAMA_CONFIG = "l2_supercat"
TOKENIZER_NAME = "llama-2 (wordllama l2_supercat tokenizer)"


def package_dir() -> Path:
    """The installed `wordllama` package folder (without importing it)."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise ConfigError("the 'wordllama' package is not installed; run `make install`")
    return Path(spec.origin).parent


def tokenizer_file() -> Path:
    """The Llama-2 tokenizer JSON inside the wheel."""
    path = package_dir() / "tokenizers" / f"{WORDLLAMA_CONFIG}_tokenizer_config.json"
    if not path.is_file():
        raise ConfigError(f"{path}: WordLlama tokenizer file missing; reinstall wordllama")
    return path


def weights_file(dim: int = 256) -> Path:
    """The embedding weights (safetensors) inside the wheel for dimension `dim`."""
    path = package_dir() / "weights" / f"{WORDLLAMA_CONFIG}_{dim}.safetensors"
    if not path.is_file():
        shipped = sorted(p.name for p in (package_dir() / "weights").glob("*.safetensors"))
        raise ConfigError(f"{path}: no WordLlama weights for dim={dim}; the wheel ships {shipped}")
    return path
