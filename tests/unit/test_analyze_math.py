"""The pure statistics and planning, checked against brute force and textbook values."""

from __future__ import annotations

import itertools
import random

import pytest

from migcheck.analysis.statistics import (
    Stratum,
    distinct_interval,
    distinct_range,
    expected_moved_fraction,
    skew,
    stratified_total,
    wilson_interval,
)
from migcheck.kafka.fetch import WorkUnit, pack_units, plan_units, task_count
from migcheck.kafka.metadata import PartitionMeta, TopicMeta


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


def test_distinct_interval_recovers_the_unread_keys_of_exact_binomial_counts() -> None:
    # 1,600 keys of 4 records each, half the log read: a key is read j times with chance
    # C(4, j) / 16, so 400 once, 600 twice, 400 three times, 100 four times, 100 never.
    est, lo, hi = distinct_interval(1500, [({1: 400, 2: 600, 3: 400, 4: 100}, 0.5)])
    assert est == pytest.approx(1600, abs=3)
    assert 1500 <= lo < 1600 < hi < 1700


def test_distinct_interval_of_keys_read_once_each() -> None:
    # every key once (a cleaned changelog), a quarter read: four times the keys seen
    rng = random.Random(4)
    sample = rng.sample(range(40_000), 10_000)
    est, lo, hi = distinct_interval(len(set(sample)), [({1: 10_000}, 0.25)])
    assert est == pytest.approx(40_000, rel=0.01)
    assert lo < 40_000 < hi and hi - lo < 0.05 * 40_000
    assert distinct_range(10_000, 30_000) == (10_000, 40_000)


def test_distinct_interval_is_exact_when_everything_was_read() -> None:
    assert distinct_interval(50, [({1: 10, 2: 40}, 1.0)]) == (50, 50, 50)
    assert distinct_interval(50, []) == (50, 50, 50)


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


def test_task_count_is_a_multiple_of_the_cores_of_at_most_per_task_records() -> None:
    # worked by hand: the fewest tasks of at most per_task records, rounded up to whole waves
    assert task_count(0, 2, 100) == 2
    assert task_count(200, 2, 100) == 2
    assert task_count(201, 2, 100) == 4
    assert task_count(5_000_000, 2, 2_500_000) == 2
    assert task_count(10, 1, 3) == 4
    assert task_count(10, 3, 3) == 6


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
