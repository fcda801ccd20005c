"""Sampled intervals on real topics: Kafka's Java producer writes keys of a known shape,
migcheck samples a quarter of each partition, and the truth is the keys the test wrote.

A few seeds only: the many-seed coverage trials run on synthetic windows in
tests/unit/test_sampled_intervals.py, where the consumer is the only part left out.
Here the consumer, the broker's offsets and the read tasks are real too.
"""

from __future__ import annotations

import json
import random

import pytest
from kafkatest import Kafka

from migcheck.cli import main

pytestmark = [pytest.mark.kafka, pytest.mark.spark]

RECORDS = 40_000
PARTITIONS = 4
#: about a quarter of each partition's 10,000 records
SAMPLE = "2500"


def _uniform(seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [f"user-{rng.randrange(8_000)}".encode() for _ in range(RECORDS)]


def _drifting(seed: int) -> list[bytes]:
    """New users over time: record i's key is drawn from a window of 2,000 ids that slides
    from 0 to 16,000 as i goes from the first record to the last."""
    rng = random.Random(seed)
    return [f"user-{i * 16_000 // RECORDS + rng.randrange(2_000)}".encode() for i in range(RECORDS)]


def _analyze(capsys: pytest.CaptureFixture[str], kafka: Kafka, topics: list[str]) -> dict:
    args = ["analyze", "--bootstrap-server", kafka.bootstrap, "--to", "8"]
    args += [x for t in topics for x in ("--topic", t)]
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--sample-per-partition", SAMPLE, "--format", "json"])
    out, err = capsys.readouterr()
    assert exit_.value.code in (0, 1), err
    return {t["topic"]: t for t in json.loads(out)["topics"]}


def test_real_topics_get_intervals_that_hold_their_keys_and_drift_is_named(
    kafka: Kafka, capsys: pytest.CaptureFixture[str]
) -> None:
    written: dict[str, list[bytes]] = {}
    for shape, keys_of in (("uniform", _uniform), ("drifting", _drifting)):
        for seed in (1, 2, 3) if shape == "uniform" else (1,):
            topic = kafka.create_topic(f"intervals-{shape}-{seed}", PARTITIONS)
            keys = keys_of(seed)
            kafka.produce(topic, [(k, 20, None) for k in keys])  # the producer places them
            written[topic] = keys
    report = _analyze(capsys, kafka, list(written))
    for topic, keys in written.items():
        t, truth = report[topic], len(set(keys))
        assert t["sampled"] and t["records_scanned"] < RECORDS / 3, t["records_scanned"]
        lo, hi = t["distinct_keys_interval"]
        assert lo <= truth <= hi, (topic, truth, t["distinct_keys_interval"])
        b_lo, b_hi = t["distinct_keys_bounds"]
        assert b_lo <= lo and hi <= b_hi
        check = t["sample_assumption"]
        if "uniform" in topic:
            assert check["holds"] and not check["findings"], check
            assert max(truth - lo, hi - truth) <= 0.10 * truth, (truth, lo, hi)
        else:
            # its windows share almost no key: each key lives in a stretch of offsets
            assert not check["holds"] and "stretches of offsets" in " ".join(check["findings"])
            assert [lo, hi] == [b_lo, b_hi]  # only the certain bounds are left
        (cand,) = t["candidates"]
        k_lo, k_hi = cand["moved_keys_interval"]
        bound_lo, bound_hi = cand["moved_keys_bounds"]
        assert bound_lo <= k_lo <= cand["moved_keys"] <= k_hi <= bound_hi
