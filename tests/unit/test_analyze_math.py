"""The pure statistics and planning, checked against brute force and textbook values."""

from __future__ import annotations

import itertools
import random

import pytest

from migcheck.analysis.statistics import (
    Stratum,
    distinct_estimate,
    distinct_range,
    expected_moved_fraction,
    skew,
    stratified_total,
    wilson_interval,
)
from migcheck.kafka.metadata import PartitionMeta, TopicMeta
from migcheck.kafka.reader import WorkUnit, pack_units, plan_units


@pytest.mark.parametrize(("n", "m"), [(3, 6), (6, 8), (6, 12), (4, 6), (2, 3), (5, 5), (7, 100)])
def test_expected_moved_fraction_by_enumeration(n: int, m: int) -> None:
    period = n * m  # a multiple of lcm(n, m): every residue pair appears equally often
    moved = sum(1 for h in range(period) if h % n != h % m)
    assert expected_moved_fraction(n, m) == pytest.approx(moved / period)


def test_wilson_textbook_values() -> None:
    # Newcombe (1998), Table I: 0/10 -> 0 to 0.2775; 5/10 -> 0.2366 to 0.7634
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0)


def test_wilson_covers_truth_about_95_percent() -> None:
    rng = random.Random(3)
    p, n, hits = 0.3, 200, 0
    for _ in range(400):
        k = sum(rng.random() < p for _ in range(n))
        lo, hi = wilson_interval(k, n)
        hits += lo <= p <= hi
    assert 0.90 <= hits / 400 <= 0.99


def test_distinct_estimate_chao_lin_formula() -> None:
    # Chao & Lin (2012): f0 = f1^2 / (n/(n-1) * 2 f2 + q/(1-q) * f1)
    # 50 seen, f1 = 10, f2 = 5, n = 101 records, q = 0.5: 100 / (1.01 * 10 + 10) = 4.975...
    assert distinct_estimate(50, 10, 5, 101, 0.5) == pytest.approx(50 + 100 / 20.1)
    assert distinct_estimate(50, 0, 20, 100, 0.5) == 50.0  # nothing seen once: nothing unseen
    assert distinct_estimate(50, 10, 5, 100, 1.0) == 50.0  # everything read: exact


def test_distinct_estimate_on_a_compacted_style_log() -> None:
    # every key once (a compacted changelog), a quarter read: about 4x the keys seen
    rng = random.Random(4)
    log = list(range(40_000))
    sample = rng.sample(log, 10_000)
    est = distinct_estimate(len(set(sample)), 10_000, 0, 10_000, 0.25)
    assert est == pytest.approx(40_000, rel=0.01)
    assert distinct_range(10_000, 30_000) == (10_000, 40_000)


def test_stratified_total_exact_when_fully_read() -> None:
    est, lo, hi = stratified_total([Stratum(100, 100, 37, 37), Stratum(50, 50, 5, 5)])
    assert (est, lo, hi) == (42.0, 42.0, 42.0)


def test_stratified_total_covers_truth() -> None:
    rng = random.Random(11)
    population = [[rng.random() < 0.4 for _ in range(5000)] for _ in range(4)]
    truth = sum(sum(p) for p in population)
    covered = 0
    for _ in range(200):
        strata = []
        for p in population:
            sample = rng.sample(p, 500)
            strata.append(Stratum(len(p), 500, sum(sample), sum(sample)))
        _, lo, hi = stratified_total(strata)
        covered += lo <= truth <= hi
    assert covered / 200 >= 0.9


def test_skew() -> None:
    assert skew([10, 10, 10]) == 1.0
    assert skew([30, 0, 0]) == 3.0
    assert skew([]) == 0.0


def _meta(sizes: list[tuple[int, int]]) -> TopicMeta:
    parts = tuple(PartitionMeta(i, s, e) for i, (s, e) in enumerate(sizes))
    return TopicMeta("t", "delete", len(parts), parts)


def test_full_scan_chunks_cover_every_offset_once() -> None:
    units = plan_units([_meta([(0, 1000), (250, 250), (10, 2510)])], None, chunk_records=300)
    for partition, (start, end) in enumerate([(0, 1000), (250, 250), (10, 2510)]):
        covered = sorted(
            o for u in units if u.partition == partition for o in range(u.start, u.end)
        )
        assert covered == list(range(start, end))


def test_sample_windows_spread_over_the_range() -> None:
    units = plan_units([_meta([(1000, 101_000), (0, 500)])], 8000, windows=8)
    big = sorted((u for u in units if u.partition == 0), key=lambda u: u.start)
    assert len(big) == 8
    assert sum(u.end - u.start for u in big) == 8000
    assert big[0].start == 1000 and big[-1].end == 101_000  # first and last windows at the ends
    assert all(a.end <= b.start for a, b in itertools.pairwise(big))  # no overlap
    small = [u for u in units if u.partition == 1]
    assert [(u.start, u.end) for u in small] == [(0, 500)]  # small partitions are read fully


def test_pack_units_balances_and_keeps_all() -> None:
    units = [WorkUnit("t", p, 0, size) for p, size in enumerate([900, 100, 500, 500, 300, 700])]
    bins = pack_units(units, 3)
    assert sorted(u for b in bins for u in b) == sorted(units)
    loads = sorted(sum(u.end - u.start for u in b) for b in bins)
    assert loads == [1000, 1000, 1000]


def test_pack_units_keeps_a_partitions_windows_in_one_task_in_offset_order() -> None:
    windows = [WorkUnit("t", p, s, s + 10) for s in (500, 0, 250) for p in range(5)]
    bins = pack_units(windows, 2)
    assert sorted(u for b in bins for u in b) == sorted(windows)
    for b in bins:
        assert b == sorted(b)  # partition by partition, each in offset order
    owners = {u.partition: i for i, b in enumerate(bins) for u in b}
    assert all(sum(u.partition == p for u in bins[owners[p]]) == 3 for p in range(5))
