"""Seeded stratified samples of a dataset's questions (`limit.per_category`, `limit.fraction`).

A sample is the same on every machine, in every process and under any PYTHONHASHSEED:
each question is ranked by `sha256("<seed>:<question_id>")` (hex, then the id to break a
tie that never happens in practice), and each category keeps its lowest-ranked questions.
The rank of a question depends only on the seed and its own id, so a smaller sample is
contained in a larger one with the same seed (per_category=10 within per_category=20), and
the draw does not depend on file order. Categories (strata) are the dataset's own:
LoCoMo's category integer, LongMemEval's question type, BEAM's ability
(`Question.question_type` when set, else `category`). Kept questions stay in file order,
and conversations left with no question are dropped (nothing to ingest for them).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import replace
from fractions import Fraction

from bench.config import LimitConfig
from bench.errors import ConfigError
from bench.types import Dataset, Question, SampleInfo


def stratum(question: Question) -> str:
    """The category a question is sampled within: its question type, else its category."""
    return question.question_type if question.question_type is not None else str(question.category)


def rank(seed: int, question_id: str) -> tuple[str, str]:
    """The question's place in the seeded order: (sha256 of `<seed>:<id>`, id)."""
    digest = hashlib.sha256(f"{seed}:{question_id}".encode()).hexdigest()
    return digest, question_id


def quota(limit: LimitConfig, offered: int) -> int:
    """Questions kept of a category of `offered`: min(N, n) or ceil(F x n), exactly.

    `fraction` is read through its decimal text (Fraction(str(F))), so 0.1 x 50 is 5,
    not the 6 that ceil(5.000000000000001) would give.
    """
    if limit.per_category is not None:
        return min(limit.per_category, offered)
    share = Fraction(str(limit.fraction)) * offered
    return -(-share.numerator // share.denominator)


def check_sample_limits(limit: LimitConfig) -> None:
    """`per_category` a positive integer, `fraction` in (0, 1], not both, not with `questions`."""
    per, frac = limit.per_category, limit.fraction
    if per is not None and frac is not None:
        raise ConfigError(
            f"limit.per_category={per} limit.fraction={frac}: choose one sample size; "
            "set the other to null"
        )
    if per is not None and (isinstance(per, bool) or not isinstance(per, int) or per < 1):
        raise ConfigError(f"limit.per_category={per}: must be a positive integer; null: no sample")
    if frac is not None and not 0 < frac <= 1:
        raise ConfigError(f"limit.fraction={frac}: must be in (0, 1], e.g. 0.1; null: no sample")
    if (per is not None or frac is not None) and limit.questions is not None:
        raise ConfigError(
            f"limit.questions={limit.questions}: a first-N cap does not combine with a "
            "stratified sample (limit.per_category / limit.fraction); set limit.questions=null"
        )


def sample_dataset(dataset: Dataset, limit: LimitConfig) -> Dataset:
    """The dataset restricted to a seeded stratified sample, or unchanged when none is asked.

    Raises:
        ConfigError: when the sample options are invalid (`check_sample_limits`).
    """
    check_sample_limits(limit)
    if limit.per_category is None and limit.fraction is None:
        return dataset
    by_stratum: dict[str, list[Question]] = defaultdict(list)
    for question in dataset.questions():
        by_stratum[stratum(question)].append(question)
    kept: set[str] = set()
    strata = []
    for key in sorted(by_stratum):
        offered = sorted(by_stratum[key], key=lambda q: rank(limit.seed, q.question_id))
        chosen = offered[: quota(limit, len(offered))]
        kept.update(q.question_id for q in chosen)
        strata.append((key, len(chosen), len(offered)))
    convs = tuple(
        replace(c, questions=tuple(q for q in c.questions if q.question_id in kept))
        for c in dataset.conversations
    )
    ids = "\n".join(sorted(kept)).encode()
    info = SampleInfo(
        seed=limit.seed,
        per_category=limit.per_category,
        fraction=limit.fraction,
        strata=tuple(strata),
        ids_sha256=hashlib.sha256(ids).hexdigest(),
    )
    return replace(dataset, conversations=tuple(c for c in convs if c.questions), sample=info)
