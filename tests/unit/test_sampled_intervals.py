"""Coverage trials: how often a sample's 95% interval of distinct keys holds the truth.

Each trial makes a topic of a known shape (tests/support/shapes.py), counts its distinct
keys from the log itself, and samples it as migcheck does: its own window plan, its own
histories and figures.  Only the consumer is left out, which reads exactly the offsets it
is given, so synthetic windows are faithful here.  The seeds are fixed: these are the
same trials every run (docs/sampling.md has the table over more seeds and shares).
"""

from __future__ import annotations

import pytest
from shapes import STATIONARY, trial

#: coverage trials: slow by design, run whole in CI's integration phase, not the unit lane's minute
pytestmark = pytest.mark.trials

RECORDS = 200_000
#: a quarter of each partition read: where the issue asks for 93% and +-10%
SHARE = 0.25
SEEDS = range(20)
SPACE = {"uniform": 20_000, "zipf": 100_000, "unique": 0}


@pytest.mark.parametrize("shape", STATIONARY)
def test_on_stationary_keys_the_interval_holds_the_truth_and_is_narrow(shape: str) -> None:
    trials = [trial(shape, RECORDS, SPACE[shape], SHARE, seed) for seed in SEEDS]
    assert all(t.holds for t in trials), [t.findings for t in trials if not t.holds]
    covered = sum(t.covered for t in trials) / len(trials)
    assert covered >= 0.93, [(t.truth, t.interval) for t in trials if not t.covered]
    width = sum(t.half_width for t in trials) / len(trials)
    assert width <= 0.10
    assert all(t.bounds[0] <= t.interval[0] and t.interval[1] <= t.bounds[1] for t in trials)


@pytest.mark.parametrize(
    ("shape", "words"),
    [
        ("drifting", "the keys change over offsets"),
        ("compacted", "the keys change over offsets"),
        ("bursts", "keys live in stretches of offsets"),
    ],
)
def test_drifting_keys_are_named_and_the_interval_falls_back_to_the_bounds(
    shape: str, words: str
) -> None:
    for seed in range(4):
        t = trial(shape, RECORDS, 20_000, SHARE, seed)
        assert not t.holds and any(words in f for f in t.findings), t.findings
        assert t.interval == t.bounds and t.covered
