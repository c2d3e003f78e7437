"""The offline embedder and tokenizer load from the installed wheel without a network."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from bench.providers.offline_embed import WordLlamaEmbedder
from bench.tokens import TokenCounter

NO_NETWORK = textwrap.dedent(
    """
    import socket
    def refuse(*args, **kwargs):
        raise OSError("network access attempted")
    socket.socket.connect = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
    import os
    os.environ["HOME"] = os.environ["EMPTY_HOME"]  # no ~/.cache/wordllama to fall back on
    from bench.providers.offline_embed import WordLlamaEmbedder
    from bench.tokens import TokenCounter
    vectors = WordLlamaEmbedder().embed(["hello world", "the support group"])
    print(vectors.shape, TokenCounter().count("hello world"))
    """
)


def test_loads_and_embeds_with_every_socket_refused(tmp_path) -> None:
    env = {"EMPTY_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", NO_NETWORK], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["(2,", "256)", "2"]
    assert not list(tmp_path.iterdir())  # nothing cached or downloaded


def test_embeddings_are_deterministic_unit_vectors_and_empty_text_is_zero() -> None:
    embedder = WordLlamaEmbedder()
    first = embedder.embed(["Caroline went to a support group", ""])
    again = WordLlamaEmbedder().embed(["Caroline went to a support group", ""])
    assert np.array_equal(first, again)
    assert np.isclose(np.linalg.norm(first[0]), 1.0) and not first[1].any()
    assert embedder.embed([]).shape == (0, 256)


def test_token_counts_use_the_llama_tokenizer_not_characters() -> None:
    tokens = TokenCounter()
    text = "Caroline went to the LGBTQ support group yesterday."
    assert tokens.count("a a a a a a a a") == 8  # characters / 4 would say 3
    assert tokens.count_many([text, ""]) == [tokens.count(text), 0]
    kept, cut = tokens.truncate_left(text, 3)
    assert cut and text.endswith(kept) and tokens.count(kept) <= 3
