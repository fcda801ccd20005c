"""Claims: each partition is read by exactly one reader, whatever the race."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from migcheck.analysis.claims import Claims, largest_first
from migcheck.analysis.scan.share import finishes_within
from migcheck.kafka.fetch import WorkUnit


def test_a_partition_goes_to_its_first_claimant_and_again_to_it_only(tmp_path: Path) -> None:
    claims = Claims.create(tmp_path / "claims")
    assert claims.claim("orders", 0, "driver")
    assert not claims.claim("orders", 0, "task 1")
    assert claims.claim("orders", 0, "driver")  # a retried attempt of the same owner
    assert claims.claim("orders", 1, "task 1")
    assert claims.claim("orders.v2", 0, "task 1")  # another topic's partition 0


def test_units_are_claimed_lazily_a_partition_at_a_time(tmp_path: Path) -> None:
    claims = Claims.create(tmp_path / "claims")
    units = [WorkUnit("t", 0, 0, 10), WorkUnit("t", 0, 10, 20), WorkUnit("t", 1, 0, 5)]
    mine = claims.claimed(units, "driver")
    assert next(mine) == units[0]
    assert not claims.claim("t", 0, "task 0")  # taken with its first unit
    assert claims.claim("t", 1, "task 0")  # not asked for yet: still free
    assert list(mine) == [units[1]]  # the rest of partition 0, not partition 1


def test_largest_partitions_first_each_in_offset_order() -> None:
    units = [
        WorkUnit("a", 0, 0, 100),
        WorkUnit("b", 3, 500, 900),
        WorkUnit("a", 1, 50, 60),
        WorkUnit("b", 3, 0, 500),
    ]
    assert largest_first(units) == [
        WorkUnit("b", 3, 0, 500),
        WorkUnit("b", 3, 500, 900),
        WorkUnit("a", 0, 0, 100),
        WorkUnit("a", 1, 50, 60),
    ]


def _claim_all(path: str, owner: str, out: multiprocessing.Queue) -> None:
    units = [WorkUnit("t", p, 0, 1) for p in range(200)]
    out.put((owner, [u.partition for u in Claims(path).claimed(units, owner)]))


def test_racing_processes_read_every_partition_exactly_once(tmp_path: Path) -> None:
    claims = Claims.create(tmp_path / "claims")
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    readers = [
        context.Process(target=_claim_all, args=(claims.path, f"task {i}", out)) for i in range(4)
    ]
    for reader in readers:
        reader.start()
    got = dict(out.get(timeout=60) for _ in readers)
    for reader in readers:
        reader.join(timeout=60)
    every = sorted(p for partitions in got.values() for p in partitions)
    assert every == list(range(200))  # none twice, none missed
    assert len(got) == 4


def test_a_reader_is_told_of_each_partition_it_lost(tmp_path: Path) -> None:
    claims = Claims.create(tmp_path / "claims")
    assert claims.claim("t", 1, "task 0")
    lost: list[int] = []
    units = [WorkUnit("t", p, 0, 10) for p in range(3)]
    mine = list(claims.claimed(units, "driver", lost=lambda: lost.append(1)))
    assert [u.partition for u in mine] == [0, 2]
    assert lost == [1]


def test_a_reader_finishes_within_its_pace_so_far() -> None:
    # 300 of 1,000 records in 3 s: the other 700 take 7 s at that pace
    assert finishes_within(300, 1_000, 3.0, 7.0)
    assert not finishes_within(300, 1_000, 3.0, 6.9)
    assert not finishes_within(0, 1_000, 3.0, 100.0)  # no pace yet
    assert finishes_within(1_000, 1_000, 3.0, 0.0)  # done
    assert finishes_within(0, 0, 0.0, 0.0)  # nothing to read


#: A claimant that stops for good at one step of its claim, until it is killed.
_STUCK = """
import os, sys, time
from pathlib import Path
from migcheck.analysis.claims import Claims
step = sys.argv[2]
def stuck(*args, **kwargs):
    Path(sys.argv[3]).touch()
    time.sleep(600)
if step == "write":  # about to write the owner's name
    os.fdopen = stuck
else:  # about to make the claim visible
    os.link = stuck
Claims(sys.argv[1]).claim("orders", 0, "task 3")
"""


def test_an_attempt_killed_mid_claim_leaves_the_partition_to_its_retry(tmp_path: Path) -> None:
    """Killed between writing its name and making the claim (or while writing it), an
    attempt leaves no claim: its retry, same owner, and any other reader can claim the
    partition; none finds a claim without an owner and skips it."""
    import subprocess
    import sys
    import time

    for step in ("write", "link"):
        claims = Claims.create(tmp_path / f"claims-{step}")
        reached = tmp_path / f"reached-{step}"
        child = subprocess.Popen([sys.executable, "-c", _STUCK, claims.path, step, str(reached)])
        deadline = time.monotonic() + 60
        while not reached.exists():
            assert child.poll() is None and time.monotonic() < deadline, "never reached the step"
            time.sleep(0.02)
        child.kill()
        child.wait()
        assert claims.claim("orders", 0, "task 3")  # the retry reads its partition again
        assert (Path(claims.path) / "orders-0").read_text(encoding="utf-8") == "task 3"
        assert not claims.claim("orders", 0, "driver")
