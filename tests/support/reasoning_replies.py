"""How a reasoning model (OpenAI gpt-5, o-series) answers: its 400s and its usage.

The error bodies have the shape OpenAI's chat completions endpoint returns, as quoted
in public bug reports (e.g. griptape-ai/ComfyUI-Griptape#312 for `max_tokens`,
gabrii/Cursor-Azure-GPT-5#33 for `temperature`, crewAIInc/crewAI#2738 for `stop`):
`{"error": {"message", "type": "invalid_request_error", "param", "code"}}` with code
`unsupported_parameter` or `unsupported_value`. Usage reports the hidden reasoning in
`completion_tokens_details.reasoning_tokens`, as a share of `completion_tokens`.
"""

from __future__ import annotations

from typing import Any


def rejection(body: dict[str, Any]) -> dict[str, Any] | None:
    """The 400 body a reasoning model returns for `body`, or None when it accepts it."""
    if "max_tokens" in body:
        return _error(
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "max_tokens",
            "unsupported_parameter",
        )
    temperature = body.get("temperature")
    if isinstance(temperature, int | float) and temperature != 1:
        return _error(
            f"Unsupported value: 'temperature' does not support {temperature:g} with this "
            "model. Only the default (1) value is supported.",
            "temperature",
            "unsupported_value",
        )
    for name in ("stop", "top_p"):
        if name in body:
            return _error(
                f"Unsupported parameter: '{name}' is not supported with this model.",
                name,
                "unsupported_parameter",
            )
    return None


def reasoning_usage(prompt: int, visible: int, reasoning: int) -> dict[str, Any]:
    """A reasoning model's usage block: reasoning counted inside `completion_tokens`."""
    completion = visible + reasoning
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _error(message: str, param: str, code: str) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    }
