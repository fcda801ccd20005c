"""``migcheck copy``'s JSON summary and its progress line, from a result built by hand."""

from __future__ import annotations

import json

from migcheck.model.copy import CopyResult, PartitionCopied, Verification
from migcheck.report.copy import copy_progress, render_copy_json

RESULT = CopyResult(
    topic="orders\n",
    into="orders-v2",
    partitioner="murmur2",
    partitions=(PartitionCopied(0, 120, 3, 100), PartitionCopied(1, 80, 0, 80)),
    verification=Verification(records=500, missing=0, duplicated=1, misplaced=0),
)


def test_the_json_summary_holds_each_count_in_the_documented_order() -> None:
    summary = json.loads(render_copy_json(RESULT))
    assert list(summary) == ["migcheck_version", "topic", "into", "partitioner", "copied",
                             "null_keys", "from_detection", "partitions",
                             "verification"]  # fmt: skip
    assert summary["topic"] == "orders\n"  # a name is data: JSON escapes it
    assert (summary["copied"], summary["null_keys"], summary["from_detection"]) == (200, 3, 180)
    assert summary["partitions"] == [
        {"partition": 0, "records": 120, "null_keys": 3, "from_detection": 100},
        {"partition": 1, "records": 80, "null_keys": 0, "from_detection": 80},
    ]
    assert summary["verification"] == {
        "records": 500, "missing": 0, "duplicated": 1, "misplaced": 0, "ok": False,
    }  # fmt: skip


def test_progress_says_bytes_rate_and_time_left_once_a_chunk_is_done() -> None:
    assert copy_progress(0, 150_000, 0, 3.0) == "0.0 MiB, rate not known yet"
    # 50,000 records in 10 s: 5,000 a second, so the 100,000 left take 20 s
    assert copy_progress(50_000, 150_000, 10 * 2**20, 10.0) == (
        "10.0 MiB, 5,000 records/s, 0:20 left"
    )
    assert copy_progress(1_000, 181_000, 2**20, 1.0) == "1.0 MiB, 1,000 records/s, 3:00 left"
