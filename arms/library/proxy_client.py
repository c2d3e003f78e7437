"""What every library adapter tells its library about the run's accounting proxy.

The library's clients send `MODEL` and `PROXY_KEY`; the proxy (bench/providers/proxy.py)
needs no key and answers with the run's configured model, which `served_model` reads
back (the `/models` answer) for the arm's fingerprint.
"""

from __future__ import annotations

MODEL = "armbench-proxy"
"""Model name a library sends; the proxy answers with the run's configured model instead."""
PROXY_KEY = "armbench-proxy"
"""API key a library's clients send to the proxy (a placeholder: the proxy needs none)."""


def served_model(base_url: str) -> str:
    """The chat model the proxy at `base_url` serves (the first of its `/models`)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=PROXY_KEY, max_retries=0)
    try:
        return str(client.models.list().data[0].id)
    finally:
        client.close()
