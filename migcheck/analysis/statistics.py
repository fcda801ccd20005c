"""The statistics behind the figures: pure functions, checked against textbook values.

Whether a key moves depends on its hash alone, not on how often it was
written, so the keys a sample sees are a fair sample for the moved fraction
(Wilson interval); records and bytes are stratified totals over partitions;
distinct keys get an estimate inside *certain* bounds.  See
docs/ARCHITECTURE.md, "Sampling".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


def distinct_estimate(
    seen: int, singletons: int, doubletons: int, sampled: int, fraction: float
) -> float:
    """Distinct keys in the whole log, from a sample without replacement (Chao & Lin 2012).

    ``seen`` distinct keys were observed in ``sampled`` records, ``singletons``
    of them once and ``doubletons`` twice; ``fraction`` is the share of the log
    that was read.  This is a lower-bound style estimator: in simulations of
    windowed samples it stayed close to the truth and below it, where classic
    Chao1 (which estimates the key *space*, not this log) ran far high
    (docs/benchmarks.md).
    No sample-based distinct count has a guaranteed error (Charikar et al.
    2000), so reports pair it with the certain range from :func:`distinct_range`.
    """
    f1, f2 = singletons, doubletons
    if f1 == 0 or fraction >= 1 or sampled < 2:
        return float(seen)
    unseen = f1 * f1 / ((sampled / (sampled - 1)) * 2 * f2 + (fraction / (1 - fraction)) * f1)
    return seen + unseen


def distinct_range(seen: int, unread_records: int) -> tuple[int, int]:
    """Certain bounds on distinct keys: seen keys exist; an unread record adds at most one."""
    return (seen, seen + max(0, unread_records))


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
