"""Repository-wide checks: layout, docs, size limits, CLIs, prompts, imports."""
