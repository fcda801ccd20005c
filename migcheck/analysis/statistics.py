"""The statistics behind the figures: pure functions, checked against textbook values.

Whether a key moves depends on its hash alone, not on how often it was
written, so the keys a sample sees are a fair sample for the moved fraction
(Wilson interval); records and bytes are stratified totals over partitions;
distinct keys get an estimate with a 95% interval under the assumption that the
sampled windows represent the unread records (:func:`distinct_interval`), which the
windows themselves test (:func:`drift_findings`), and *certain* bounds beside it
(:func:`distinct_range`).  See docs/ARCHITECTURE.md, "Sampling".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054


def expected_moved_fraction(n: int, m: int) -> float:
    """Share of uniformly hashed keys whose partition changes from ``n`` to ``m`` partitions.

    A key stays exactly when ``h mod lcm(n, m) < min(n, m)``.
    """
    return 1.0 - min(n, m) / math.lcm(n, m)


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (well-behaved near 0 and 1)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def distinct_range(seen: int, unread_records: int) -> tuple[int, int]:
    """Certain bounds on distinct keys: seen keys exist; an unread record adds at most one."""
    return (seen, seen + max(0, unread_records))


# --- distinct keys from a sample ----------------------------------------------------

#: Keys read more often than this are pooled: a key read 30 times in a sample of even a
#: tenth of its log was certain to be read, and says nothing of the keys that were not.
FREQ_CAP = 30

#: Replicates of the parametric bootstrap behind :func:`distinct_interval`.
BOOTSTRAP_REPS = 200

#: The bootstrap's error quantiles are widened by this much.  A bootstrap drawn from the
#: fitted distribution understates the spread of a fit that is spiky by nature (a
#: maximum-likelihood mixture has few atoms): unwidened, its intervals held the truth in
#: 85-93% of the coverage trials; widened by 1.4, in at least 95% (docs/sampling.md).
WIDEN = 1.4

_EM_ITERATIONS = 400

#: A sample's figures, per group of partitions read alike: keys per times read, and
#: the share of the group's offsets the sample read.
Group = tuple[Mapping[int, int], float]


def _thinning(q: float) -> tuple[np.ndarray, np.ndarray]:
    """Binomial thinning at rate ``q``: ``B[j-1, i]``, the chance that a key of ``k_i``
    records in the log is read ``j`` times (j = 1..FREQ_CAP), and each ``k_i``'s chance
    of being read at all.  The ``k_i`` are every count up to 2 x FREQ_CAP, then a
    geometric grid up to where a key is all but certain to be read."""
    k_max = max(2 * FREQ_CAP, math.ceil(math.log(1e-6) / math.log1p(-q)) + FREQ_CAP)
    grid = np.geomspace(2 * FREQ_CAP, k_max, 60)
    ks = np.unique(np.concatenate([np.arange(1, 2 * FREQ_CAP + 1), np.round(grid)]))
    js = np.arange(1, FREQ_CAP + 1, dtype=np.float64)[:, None]
    lg = np.vectorize(math.lgamma, otypes=[np.float64])
    log_choose = lg(ks + 1) - lg(js + 1) - lg(np.maximum(ks - js, 0) + 1)
    with np.errstate(invalid="ignore", over="ignore"):
        log_p = log_choose + js * math.log(q) + (ks - js) * math.log1p(-q)
    return np.where(js <= ks, np.exp(log_p), 0.0), 1.0 - (1.0 - q) ** ks


def _fit(observed: np.ndarray, thin: np.ndarray, seen_p: np.ndarray) -> np.ndarray:
    """The log's keys per record count (one fit per column of ``observed``) that best
    explain the keys per times read, by EM: the nonparametric maximum likelihood of a
    binomial mixture, which keeps every count non-negative."""
    fitted = np.full((thin.shape[1], observed.shape[1]), observed.sum(0) / thin.shape[1])
    for _ in range(_EM_ITERATIONS):
        predicted = thin @ fitted
        ratio = np.divide(observed, predicted, out=np.zeros_like(observed), where=predicted > 0)
        fitted *= (thin.T @ ratio) / seen_p[:, None]
    return fitted


def _unread(
    freq: Mapping[int, int], q: float, rng: np.random.Generator
) -> tuple[float, np.ndarray]:
    """One group's unread keys (the fit's) and its bootstrap errors: per replicate, the
    refit's unread keys less the replicate's own."""
    counts = np.zeros(FREQ_CAP)
    for j, n in freq.items():
        if 1 <= j <= FREQ_CAP:
            counts[j - 1] += n
    if q >= 1 or not counts.any():
        return 0.0, np.zeros(BOOTSTRAP_REPS)
    thin, seen_p = _thinning(q)
    fitted = _fit(counts[:, None], thin, seen_p)[:, 0]
    unread = float((1.0 - seen_p) @ fitted)
    drawn = rng.poisson(thin @ fitted, size=(BOOTSTRAP_REPS, FREQ_CAP)).T.astype(np.float64)
    truth = rng.poisson(unread, size=BOOTSTRAP_REPS)
    return unread, (1.0 - seen_p) @ _fit(drawn, thin, seen_p) - truth


def distinct_interval(
    seen: int, groups: Sequence[Group], z: float = Z95, seed: int = 0
) -> tuple[float, float, float]:
    """Distinct keys of a log (estimate, and 95% interval) from the ``seen`` keys of a
    sample, read in ``groups`` of partitions: per group, the keys per times read and the
    share ``q`` of the group's offsets read.

    The assumption is that the sample is like a random one: each record was read with
    chance ``q``, whatever its offset, so a key of ``k`` records was read a binomial
    ``(k, q)`` number of times.  Per group, the log's keys per record count are fitted
    to the read counts (EM), and the unread keys are those the fit says were read 0
    times (the nonparametric MLE of a binomial mixture: Norris & Pollock 1998; the
    "unseen" idea of Efron & Thisted 1976 with the sampling rate known).  The interval
    is a parametric bootstrap: read counts drawn from each fit, fitted again, and each
    refit's error against its own draw's unread keys: the interval is their spread,
    widened by :data:`WIDEN`, around the estimate less their median (the fit's bias),
    and always holds the estimate itself.
    """
    rng = np.random.default_rng(seed)
    unread, errors = 0.0, np.zeros(BOOTSTRAP_REPS)
    for freq, q in groups:
        u, e = _unread(freq, q, rng)
        unread, errors = unread + u, errors + e
    tail = (1 - math.erf(z / math.sqrt(2))) / 2 * 100
    hi_err, bias, lo_err = np.percentile(errors, [100 - tail, 50, tail])
    estimate = seen + unread
    centre = estimate - bias  # the fit's bias, as its own draws show it
    lo = max(float(seen), min(estimate, centre - WIDEN * (hi_err - bias)))
    return (estimate, lo, max(estimate, centre + WIDEN * (bias - lo_err)))


# --- does the sample represent the unread records? ----------------------------------

#: The spread check looks at keys read 2 up to this many times.
SPREAD_CAP = 6


@dataclass(frozen=True)
class WindowShape:
    """What a sample's windows show of its keys: ``windows`` per sampled partition;
    ``masks``: keys per set of windows read in (bit i: window i); ``spread``: per times
    read (2..SPREAD_CAP), [keys, keys read in one window only]."""

    windows: int
    masks: Mapping[int, int]
    spread: Mapping[int, Sequence[int]]


#: The least excess, as a share of the keys tested, that counts as drift: a sample of
#: a million keys finds an excess of 0.5% significant, which changes no decision.
MATERIAL = 0.05

#: Standard deviations an excess must pass: the check runs on every report, and must
#: not cry wolf on stationary data (no false alarm in the trials).
STRICT_Z = 4.0


def drift_findings(shape: WindowShape) -> list[str]:
    """What the windows show against the assumption that they represent the unread
    records, in plain words; empty when nothing does.

    Two checks, each a count against what exchangeable keys would give: keys read
    twice or more whose records all fall in one window (keys that live in a stretch of
    offsets, so unread stretches hold keys never read), and keys shared by adjacent
    windows against keys shared by distant ones (keys that change over offsets).
    """
    return [f for f in (_clustered(shape), _changing(shape)) if f]


def _clustered(shape: WindowShape) -> str | None:
    """Keys whose records sit in one window far more often than chance puts them there."""
    t = shape.windows
    keys = sum(v[0] for v in shape.spread.values())
    if t < 2 or not keys:
        return None
    single = sum(v[1] for v in shape.spread.values())
    expected = sum(v[0] * t ** (1 - k) for k, v in shape.spread.items())
    var = sum(v[0] * t ** (1 - k) * (1 - t ** (1 - k)) for k, v in shape.spread.items())
    excess = single - expected
    if excess <= max(STRICT_Z * math.sqrt(var), MATERIAL * keys):
        return None
    return (
        f"{single / keys:.0%} of the keys read more than once were read in one window "
        f"only, where keys spread evenly over offsets would give {expected / keys:.0%}: "
        "keys live in stretches of offsets, so the unread stretches hold keys never read"
    )


def _changing(shape: WindowShape) -> str | None:
    """Keys shared by adjacent windows far more than by distant ones."""
    t = shape.windows
    far_gap = max(2, (t + 1) // 2)
    near, far = _shared_by_gap(shape, 1), _shared_by_gap(shape, far_gap)
    if t < 3 or near[1] == 0 or far[1] == 0:
        return None
    near_mean, far_mean = near[0] / near[1], far[0] / far[1]
    sd = math.sqrt(near_mean / near[1] + far_mean / far[1])
    if near_mean - far_mean <= max(STRICT_Z * sd, MATERIAL * near_mean):
        return None
    return (
        f"windows {far_gap} or more apart share {far_mean / near_mean:.0%} of the keys "
        "adjacent windows share: the keys change over offsets (new keys over time, a "
        "compacted log, or one writer's keys in one time range)"
    )


def _shared_by_gap(shape: WindowShape, gap: int) -> tuple[int, int]:
    """Keys shared by pairs of windows at least ``gap`` apart (exactly ``gap`` for 1),
    summed over those pairs, and the number of pairs."""
    t = shape.windows
    pairs = [(i, j) for i in range(t) for j in range(i + 1, t)
             if (j - i == gap if gap == 1 else j - i >= gap)]  # fmt: skip
    shared = sum(
        keys for mask, keys in shape.masks.items() for i, j in pairs if mask >> i & mask >> j & 1
    )
    return shared, len(pairs)


@dataclass(frozen=True)
class Stratum:
    """One partition's sample: ``population`` records, ``sampled`` of them read.

    ``total`` and ``total_sq`` are the sum and sum of squares, over the sampled
    records, of the quantity being estimated (1 per moved record, or its bytes).
    """

    population: int
    sampled: int
    total: float
    total_sq: float


def stratified_total(strata: Iterable[Stratum], z: float = Z95) -> tuple[float, float, float]:
    """Estimate a population total from per-partition samples, with a 95% interval.

    Stratified expansion estimator with the finite-population correction; a
    fully read partition contributes its exact total and no variance.
    """
    estimate = 0.0
    variance = 0.0
    for s in strata:
        if s.sampled <= 0:
            continue
        scale = s.population / s.sampled
        estimate += scale * s.total
        if s.sampled < s.population and s.sampled > 1:
            mean = s.total / s.sampled
            sample_var = max(0.0, (s.total_sq - s.sampled * mean * mean) / (s.sampled - 1))
            fpc = 1 - s.sampled / s.population
            variance += s.population**2 * fpc * sample_var / s.sampled
    half = z * math.sqrt(variance)
    return (estimate, max(0.0, estimate - half), estimate + half)


def skew(loads: Sequence[int]) -> float:
    """max/mean of a load vector (1.0 is perfectly even); 0.0 when there is no load."""
    if not loads or sum(loads) == 0:
        return 0.0
    return max(loads) / (sum(loads) / len(loads))
