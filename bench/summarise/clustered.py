"""Clustered paired inference: questions that share a store are not independent draws.

Standard library only (methodology §6.8). Every arm builds one store per *cluster*, the
unit that owns a store: a LoCoMo or BEAM conversation, the LoCoMo conversation a
LoCoMo-Plus haystack is stitched into (`bench.haystack.host_conversation`), a LongMemEval
question (its own haystack). The per-question tests (`stats.mcnemar_exact_p`) treat the
questions as the sample and generalise to *these questions*; the tests here treat the
clusters as the sample and generalise to *conversations like these*.

For clusters c = 1..K with n_c paired questions, A right on a_c and B right on b_c:

- D_c = b_c − a_c (an integer), d̂ = Σ D_c / Σ n_c (B − A accuracy);
- exact sign-flip test: under H₀ each D_c is as likely −D_c, so S = Σ ε_c·D_c with
  independent fair signs ε_c; two-sided p = P(|S| ≥ |Σ D_c|), the exact null
  distribution of S being a convolution over the integer sums (`sign_flip_p`). It
  cannot go below 2 / 2^K (`min_p`); with one question per cluster it *is* the
  exact McNemar p;
- a cluster bootstrap 95% interval of d̂ (`bootstrap_interval`) and the design effect
  with the effective number of questions (`design_effect`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bench.haystack import HOST_SEPARATOR, host_conversation
from bench.records import QuestionRecord
from bench.summarise.stats import percentile

SEED = 37
"""Default seed of the cluster bootstrap (`random.Random(SEED)`): reruns are identical."""
REPLICATES = 2000
"""Default number B of cluster bootstrap replicates."""


CLUSTER_KEY = "conversation_id"
"""The cluster key of a run whose conversations are their own stores (LoCoMo, BEAM,
LongMemEval: there each question is its own haystack, a cluster of one)."""
HOST_KEY = "host conversation of conversation_id"
"""The cluster key of stitched haystacks (LoCoMo-Plus, `bench.haystack.host_conversation`)."""


def cluster_ids(conversation_ids: Sequence[str]) -> tuple[list[str], str]:
    """Each question's cluster, from its conversation id, and the cluster key of the run.

    A run with stitched haystacks (`<item>@<host>`) clusters on the host conversation
    (`HOST_KEY`), any other on the conversation id itself (`CLUSTER_KEY`).
    """
    stitched = any(HOST_SEPARATOR in i for i in conversation_ids)
    if not stitched:
        return list(conversation_ids), CLUSTER_KEY
    return [host_conversation(i) for i in conversation_ids], HOST_KEY


def clusters_of(records: list[QuestionRecord]) -> tuple[tuple[str, ...], tuple[int, ...], str]:
    """(cluster names, position -> cluster index, cluster key) of a run's records."""
    keys, key = cluster_ids([r.conversation_id for r in records])
    names = tuple(sorted(set(keys)))
    number = {name: i for i, name in enumerate(names)}
    return names, tuple(number[k] for k in keys), key


@dataclass(frozen=True)
class ClusterTally:
    """One cluster's paired questions: how many, and how many each side got right."""

    n: int
    """Paired questions in the cluster."""
    a: int
    """Questions side A got right."""
    b: int
    """Questions side B got right."""


@dataclass
class ClusteredTest:
    """The clustered counterpart of one per-question paired test (B − A)."""

    k: int
    """Clusters with at least one paired question."""
    k_discordant: int
    """Clusters whose difference D_c = b_c − a_c is not 0 (only they move the test)."""
    n: int
    """Paired questions over all clusters."""
    diff: float | None
    """d̂ = Σ D_c / n, B's accuracy minus A's; None when n = 0."""
    p: float
    """Exact two-sided sign-flip p over clusters (1 when every D_c is 0)."""
    p_min: float
    """Smallest p reachable with K clusters: 2 / 2^K (1 when K = 0)."""
    deff: float | None
    """Design effect V_cluster / V_question (`design_effect`); None when undefined."""
    n_eff: float | None
    """Effective number of independent questions, n / deff; None with deff."""
    ci95: tuple[float, float] | None = None
    """Cluster bootstrap 95% percentile interval of d̂; None when not computed or K < 2."""
    seed: int | None = None
    """The bootstrap's seed; None when no interval was computed."""
    replicates: int | None = None
    """The bootstrap's B; None when no interval was computed."""
    p_holm: float | None = None
    """Holm-adjusted clustered p within the family of comparisons printed."""


def sign_flip_p(diffs: Iterable[int]) -> float:
    """Exact two-sided p of the paired sign-flip (randomisation) test over clusters.

        S = Σ_c ε_c·D_c, ε_c = ±1 fair and independent;  p = #{ε: |S| ≥ |s_obs|} / 2^m

    over the m clusters with D_c ≠ 0 (a 0 flips to itself: it doubles both counts).
    Clusters sharing |D_c| = v, m_v of them, add v·(2X − m_v) with X ~ Bin(m_v, ½), so
    the count of every sum is a convolution of binomial rows, exact in integers; the
    quotient is one correctly rounded division. With every |D_c| = 1 (one question per
    cluster) this is 2·Σ_{i ≤ min} C(m, i) / 2^m: `stats.mcnemar_exact_p`, float for float.
    """
    magnitudes: dict[int, int] = {}
    observed = 0
    for d in diffs:
        observed += d
        if d:
            magnitudes[abs(d)] = magnitudes.get(abs(d), 0) + 1
    if observed == 0:
        return 1.0
    counts = [1]  # counts[i]: sign patterns so far with sum i − offset
    for value, m in sorted(magnitudes.items()):
        row = _binomial_row(m)
        grown = [0] * (len(counts) + 2 * value * m)
        for i, count in enumerate(counts):
            if count:
                for x, ways in enumerate(row):
                    grown[i + 2 * value * x] += count * ways
        counts = grown
    offset = (len(counts) - 1) // 2
    threshold = abs(observed)
    extreme = sum(c for i, c in enumerate(counts) if abs(i - offset) >= threshold)
    return min(1.0, extreme / (1 << sum(magnitudes.values())))


def _binomial_row(m: int) -> list[int]:
    """C(m, 0), ..., C(m, m), exactly."""
    row, term = [], 1
    for i in range(m + 1):
        row.append(term)
        term = term * (m - i) // (i + 1)
    return row


def min_p(k: int) -> float:
    """Smallest two-sided sign-flip p with K clusters: 2 / 2^K (every D_c of one sign)."""
    return 1.0 if k <= 0 else min(1.0, 2 / (1 << k))


def design_effect(tallies: Sequence[ClusterTally], questions: int) -> float | None:
    """V_cluster / V_question of d̂ (B − A accuracy): how much clustering inflates its variance.

        V_question = Σ_i (x_i − d̂)² / (n(n − 1)),  x_i = b_i − a_i ∈ {−1, 0, 1}
                   = (q − n·d̂²) / (n(n − 1)),      q = discordant questions
        V_cluster  = K/(K − 1) · Σ_c (D_c − d̂·n_c)² / n²   (cluster-robust, ratio estimator)

    With one question per cluster the two are equal (deff = 1). `questions` is q. None
    when K < 2 or V_question = 0 (no discordant question, or all of one sign).
    """
    k, n = len(tallies), sum(t.n for t in tallies)
    if k < 2 or n < 2:
        return None
    d_hat = sum(t.b - t.a for t in tallies) / n
    v_question = (questions - n * d_hat * d_hat) / (n * (n - 1))
    if v_question <= 1e-15:
        return None
    v_cluster = k / (k - 1) * sum((t.b - t.a - d_hat * t.n) ** 2 for t in tallies) / (n * n)
    return v_cluster / v_question


_DRAWS: dict[tuple[int, int, int], list[list[int]]] = {}
"""Bootstrap draws by (seed, K, B): they depend on nothing else, so tests share them."""


def bootstrap_draws(seed: int, k: int, replicates: int) -> list[list[int]]:
    """B resamples of K cluster indices with replacement, from `random.Random(seed)`.

    Replicate r is `rng.choices(range(K), k=K)`, the r-th call on one generator.
    """
    key = (seed, k, replicates)
    if key not in _DRAWS:
        import random  # only when an interval is asked for (start-up time)

        rng = random.Random(seed)
        population = range(k)
        _DRAWS[key] = [rng.choices(population, k=k) for _ in range(replicates)]
    return _DRAWS[key]


def bootstrap_interval(
    tallies: Sequence[ClusterTally], seed: int = SEED, replicates: int = REPLICATES
) -> tuple[float, float] | None:
    """Cluster bootstrap 95% percentile interval of d̂ = Σ D_c / Σ n_c.

    Each replicate draws K clusters with replacement (`bootstrap_draws`) and computes
    d* = Σ_{drawn} D_c / Σ_{drawn} n_c; the interval is the 2.5th and 97.5th percentiles
    of the B values (linear interpolation, numpy's default). None when K < 2. Clusters
    without a paired question are left out.
    """
    tallies = [t for t in tallies if t.n]
    k = len(tallies)
    if k < 2 or replicates < 1:
        return None
    # One sum per replicate: each cluster packs n_c and D_c + n_c (both in 0..2n, so
    # below 2^shift) into one integer, n_c·2^shift + (D_c + n_c); sums unpack exactly.
    shift = (2 * sum(t.n for t in tallies) + 1).bit_length()
    mask = (1 << shift) - 1
    get = [t.n << shift | (t.b - t.a + t.n) for t in tallies].__getitem__
    sums = [sum(map(get, draw)) for draw in bootstrap_draws(seed, k, replicates)]
    values = [((s & mask) - (s >> shift)) / (s >> shift) for s in sums]
    lo, hi = percentile(values, 2.5), percentile(values, 97.5)
    return None if lo is None or hi is None else (lo, hi)


def clustered_test(
    tallies: Sequence[ClusterTally],
    discordant: int,
    *,
    seed: int = SEED,
    replicates: int | None = REPLICATES,
) -> ClusteredTest:
    """The clustered test of per-cluster tallies; `discordant`: questions where A ≠ B.

    `replicates=None` skips the bootstrap interval (the exact p and deff are cheap).
    """
    kept = [t for t in tallies if t.n]
    n = sum(t.n for t in kept)
    diffs = [t.b - t.a for t in kept]
    deff = design_effect(kept, discordant)
    interval = None if replicates is None else bootstrap_interval(kept, seed, replicates)
    return ClusteredTest(
        k=len(kept),
        k_discordant=sum(1 for d in diffs if d),
        n=n,
        diff=sum(diffs) / n if n else None,
        p=sign_flip_p(diffs),
        p_min=min_p(len(kept)),
        deff=deff,
        n_eff=n / deff if deff else None,
        ci95=interval,
        seed=None if interval is None else seed,
        replicates=None if interval is None else replicates,
    )


def clustered_paired(
    pairs: Sequence[tuple[str, bool, bool]], seed: int = SEED, replicates: int = REPLICATES
) -> ClusteredTest:
    """The clustered test of paired outcomes `(cluster, a_correct, b_correct)`, one per question.

    The stable entry point for callers outside the summary (per-budget comparisons,
    sweeps): tallies each cluster, then `clustered_test` with the bootstrap interval.
    """
    by_cluster: dict[str, list[int]] = {}
    discordant = 0
    for cluster, a_right, b_right in pairs:
        cell = by_cluster.setdefault(cluster, [0, 0, 0])
        cell[0] += 1
        cell[1] += bool(a_right)
        cell[2] += bool(b_right)
        discordant += bool(a_right) != bool(b_right)
    tallies = [ClusterTally(n, a, b) for n, a, b in (by_cluster[c] for c in sorted(by_cluster))]
    return clustered_test(tallies, discordant, seed=seed, replicates=replicates)


def generalises(k: int) -> tuple[str, str]:
    """The two sentences saying what each p-value generalises to (K clusters in the run)."""
    return (
        "Per-question p (exact McNemar) takes the questions as the sample: it generalises "
        "to these questions, asked again of these same conversations.",
        f"Clustered p (exact sign-flip over conversations, K = {k}) takes the conversations "
        "as the sample: it generalises to conversations like these, and cannot go below "
        f"2/2^{k} = {min_p(k):.2g}.",
    )


def clustered_json(t: ClusteredTest | None) -> dict[str, object] | None:
    """A clustered test as the `clustered` object of `--json` (docs/interfaces.md)."""
    if t is None:
        return None
    return {
        "k": t.k,
        "k_discordant": t.k_discordant,
        "n": t.n,
        "diff": t.diff,
        "p": t.p,
        "p_holm": t.p_holm,
        "p_min": t.p_min,
        "ci95": list(t.ci95) if t.ci95 else None,
        "deff": t.deff,
        "n_eff": t.n_eff,
        "bootstrap": None if t.seed is None else {"seed": t.seed, "b": t.replicates},
    }
