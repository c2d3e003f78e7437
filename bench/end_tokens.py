"""Chat-template end tokens a server can leave in a reply, and the one rule that cuts them.

A llama.cpp server stops at the model's end-of-generation token and drops it, but a GGUF
whose metadata does not mark its template's end-of-turn token as such (SmolLM2-135M's
`<|im_end|>`, for one) makes the server write the token into the reply and go on until
a stop sequence or the cap. Everything from the first end token on is not the answer.
Standard library only.
"""

from __future__ import annotations

import re

END_TOKENS = (
    "<|im_end|>",  # ChatML (Qwen, SmolLM)
    "<|end|>",  # Phi-3
    "<|eot_id|>",  # Llama 3
    "<|end_of_text|>",  # Llama 3 base
    "<|endoftext|>",  # GPT-2 style, many base models
    "<end_of_turn>",  # Gemma
    "<eos>",  # Gemma
    "</s>",  # Llama 2, Mistral
)
"""End-of-turn / end-of-text markers of common chat templates, as they appear in text."""
_FIRST_END = re.compile("|".join(re.escape(t) for t in END_TOKENS))


def strip_end_tokens(text: str) -> str:
    r"""`text` up to the first chat-template end token (all of it when there is none).

    >>> strip_end_tokens("17 March 2031<|im_end|>\n<|im_start|>user")
    '17 March 2031'
    >>> strip_end_tokens("no marker")
    'no marker'
    """
    match = _FIRST_END.search(text)
    return text[: match.start()] if match else text
