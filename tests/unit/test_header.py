"""Every report's header, and the registry's say over auto-detection."""

from __future__ import annotations

import datetime as dt
import re

from migcheck.hashing.partitioners import AUTO_CANDIDATES, PARTITIONERS
from migcheck.model.header import report_header


def test_generated_at_is_utc_with_a_z_as_the_schema_promises() -> None:
    berlin = dt.timezone(dt.timedelta(hours=1))
    header = report_header(dt.datetime(2026, 3, 1, 0, 30, 5, 999, tzinfo=berlin))
    assert header["generated_at"] == "2026-02-28T23:30:05Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", report_header()["generated_at"])


def test_auto_detection_scores_what_the_registry_marks_in_its_order() -> None:
    # murmur2_random and fnv1a_random place keyed records exactly as murmur2 and fnv1a;
    # consistent and consistent_random differ only for empty keys (consistent_random stands
    # for both, since it leaves empty keys unhashed).
    # Every client partitioner of issue 25 is scored too: each has a placement no other has.
    assert AUTO_CANDIDATES == (
        "murmur2",
        "consistent_random",
        "fnv1a",
        "kafkajs-legacy",
        "sarama-reference",
        "sarama-crc32",
        "franz-sarama-fnv1a",
        "kafka-rust",
    )
    assert all(PARTITIONERS[n].auto_detect for n in AUTO_CANDIDATES)
