"""Upstream judge files as benchmark data: URL, commit and SHA-256 of each, found or fetched.

A judge file is treated like a dataset file (`bench.loaders.resolve`): looked for in
`$BENCH_DATA_DIR/judges/<name>`, then in the git-ignored cache
(`<cache>/judges/<name>`), then in the sibling shared copy `../shared/data/judges/<name>`
(beside the checkout), and otherwise downloaded from its pinned
`raw.githubusercontent.com` URL into the cache. Every copy must have the registered
SHA-256: a file that differs is an error naming it, never used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.errors import DatasetError
from bench.loaders.resolve import PinnedFile, resolve_pinned_file

SUBDIR = "judges"
"""Folder of judge files inside `$BENCH_DATA_DIR` and the cache."""


@dataclass(frozen=True)
class JudgeFile:
    """One upstream file that defines a judge, pinned to a commit and a checksum."""

    name: str
    """The local file name (`longmemeval-evaluate_qa.py`)."""
    repo: str
    """GitHub `owner/name`."""
    commit: str
    """The full commit hash the file is pinned to."""
    path: str
    """The file's path inside the repository."""
    sha256: str
    """SHA-256 of the file's bytes at that commit."""
    licence: str
    """The upstream licence (the file is fetched, never redistributed)."""

    @property
    def url(self) -> str:
        """`https://raw.githubusercontent.com/<repo>/<commit>/<path>`."""
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.path}"

    @property
    def pinned(self) -> PinnedFile:
        """The file as the data resolver finds it: `judges/<name>`, its URL and SHA-256."""
        return PinnedFile(self.name, f"{SUBDIR}/{self.name}", self.url, self.sha256)

    @property
    def source(self) -> str:
        """`<repo>@<commit>:<path>`, the short form shown in summaries."""
        return f"{self.repo}@{self.commit}:{self.path}"


_LME_COMMIT = "9e0b455f4ef0e2ab8f2e582289761153549043fc"
_MEM0_COMMIT = "b3ede5b7c0ac0e847b03786a603c107ac943b3ee"
_BEAM_COMMIT = "b2a3ee8ba12d68f83143dda191097dc3e028ddd3"
_PLUS_COMMIT = "059f4e3d38f7f1f96765e8e2cb7de3097551bffb"
JUDGE_FILES: dict[str, JudgeFile] = {
    f.name: f
    for f in (
        JudgeFile(
            "longmemeval-evaluate_qa.py",
            "xiaowu0162/LongMemEval",
            _LME_COMMIT,
            "src/evaluation/evaluate_qa.py",
            "ecce9c4c79dc89d99534ac17b383a5cbb5b9f0c69ee98adaf0684742e3d95251",
            "MIT",
        ),
        JudgeFile(
            "longmemeval-print_qa_metrics.py",
            "xiaowu0162/LongMemEval",
            _LME_COMMIT,
            "src/evaluation/print_qa_metrics.py",
            "e9283933a0cefb7a0ded7365e436ae3d1be5aac41853325e6155d83bf07607f0",
            "MIT",
        ),
        JudgeFile(
            "mem0-llm_judge.py",
            "mem0ai/mem0",
            _MEM0_COMMIT,
            "evaluation/metrics/llm_judge.py",
            "ac2e242f6ea0b817ba1b229ff9e5271f6846b7b8a9aefa8a5a5a81ea58df3b3c",
            "Apache-2.0",
        ),
        JudgeFile(
            "beam-prompts.py",
            "mohammadtavakoli78/BEAM",
            _BEAM_COMMIT,
            "src/prompts.py",
            "2f630cc983ab0c34cfa80b1b4d340f5b51a9b4a3baa5af8aea9503c585eda06a",
            "none stated upstream",
        ),
        JudgeFile(
            "beam-compute_metrics.py",
            "mohammadtavakoli78/BEAM",
            _BEAM_COMMIT,
            "src/evaluation/compute_metrics.py",
            "0715226375e9d24646c49c504194ba61cfb26d39415da5ebe9bdc4c6dcd3726c",
            "none stated upstream",
        ),
        JudgeFile(
            "locomo-plus-llm_as_judge.py",
            "xjtuleeyf/Locomo-Plus",
            _PLUS_COMMIT,
            "evaluation_framework/task_eval/llm_as_judge.py",
            "9ca4997392b1e97a03635379ca601ec5fadfe09ead471542f10433f9af071a33",
            "none stated upstream",
        ),
        JudgeFile(
            "locomo-plus-prompt.py",
            "xjtuleeyf/Locomo-Plus",
            _PLUS_COMMIT,
            "evaluation_framework/task_eval/prompt.py",
            "e43e3ee7115a30938e727fe0eab16694186c08e3f9619f9d8dd5e603d96fc2b1",
            "none stated upstream",
        ),
    )
}


def judge_file(name: str) -> JudgeFile:
    """The registered file called `name`; DatasetError naming the known ones otherwise."""
    entry = JUDGE_FILES.get(name)
    if entry is None:
        known = ", ".join(sorted(JUDGE_FILES))
        raise DatasetError(f"judge file {name!r}: not registered; use one of {known}")
    return entry


def resolve_judge_file(entry: JudgeFile) -> Path:
    """The local copy of `entry`, checksummed (found, shared, or downloaded into the cache).

    The dataset files' rule (`bench.loaders.resolve.resolve_pinned_file`) with
    `judges/<name>` as the file name, so the shared copy is `../shared/data/judges/<name>`.
    """
    return resolve_pinned_file(entry.pinned)


def read_judge_file(name: str) -> tuple[JudgeFile, str]:
    """The registered entry and the UTF-8 text of its checksummed local copy."""
    entry = judge_file(name)
    return entry, resolve_judge_file(entry).read_text(encoding="utf-8")
