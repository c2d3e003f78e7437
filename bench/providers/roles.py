"""The roles calls are accounted under, and the summary's notes on the proxy's roles.

A role is `answerer`, `extractor`, `embedder`, `judge:<id>` or `proxy:<arm>:<phase>`.
Apart from `accounting` so the summariser reads them without loading the accountant.
"""

from __future__ import annotations

PHASES = {
    "answerer": "answering",
    "extractor": "extraction",
    "embedder": "embedding",
    "judge": "judging",
}


PROXY = "proxy"
"""Role prefix of calls made through the accounting proxy: `proxy:<arm>:<phase>`."""


def phase_of(role: str) -> str:
    """`answerer` → answering, `judge:<id>` → judging, `proxy:<arm>:<p>` → `proxy:<p>`."""
    head, _, rest = role.partition(":")
    if head == PROXY:
        return f"{PROXY}:{rest.rpartition(':')[2]}"
    return PHASES.get(head, role)


def proxy_notes(accounting: object) -> list[str]:
    """Summary notes: per arm and phase, the tokens its own LLM calls used via the proxy.

    `accounting` is run.json's `accounting` object; roles other than `proxy:*` are skipped.
    """
    roles = accounting.get("roles", {}) if isinstance(accounting, dict) else {}
    notes = []
    for role in sorted(r for r in roles if str(r).startswith(f"{PROXY}:")):
        t = roles[role] if isinstance(roles[role], dict) else {}
        _, arm, phase = (str(role).split(":", 2) + ["", ""])[:3]
        cost = f", cost {t['cost']:.6f}" if isinstance(t.get("cost"), (int, float)) else ""
        notes.append(
            f"proxy {arm} {phase}: {t.get('calls', 0)} calls ({t.get('cache_hits', 0)} cached), "
            f"{t.get('prompt_tokens', 0)} prompt + {t.get('completion_tokens', 0)} completion "
            f"tokens{cost} (model {t.get('model', '?')})"
        )
    return notes
