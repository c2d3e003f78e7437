"""The field's official judges, read from their upstream files (never copied into armbench).

`registry` names each upstream file by URL, commit and SHA-256 and finds (or fetches) it;
`templates` reads the prompt templates out of a file's syntax tree without executing it;
`judges` asks a model with them exactly as upstream does and parses the reply as upstream
does; `base.OfficialBase` makes each one whole (identity, hash, runs, `JudgeMeta`).
"""
