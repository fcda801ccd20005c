"""A whole report built by hand: three topics (exact, sampled, unpredictable) and a gate.

Renderer and schema tests read it; every figure in it is written out, never
computed by migcheck.
"""

from __future__ import annotations

from typing import Any

EVIL_KEY = "a|b<script>alert(1)</script>"
MARKUP_KEY = "[bold]x[/] :smile: *y* _z_ `w` [/red]"

# 4 -> 6: a key on partition i (h mod 4) goes to h mod 6, three cells per row.
M4_6 = [
    [34, 0, 33, 0, 33, 0],
    [0, 35, 0, 32, 0, 33],
    [31, 0, 36, 0, 33, 0],
    [0, 30, 0, 33, 0, 37],
]  # stays on the diagonal: 34 + 35 + 36 + 33 = 138 of 400, so 262 move
# 4 -> 8: partition i goes to i or i + 4.
M4_8 = [
    [52, 0, 0, 0, 48, 0, 0, 0],
    [0, 49, 0, 0, 0, 51, 0, 0],
    [0, 0, 47, 0, 0, 0, 53, 0],
    [0, 0, 0, 50, 0, 0, 0, 50],
]  # 52 + 49 + 47 + 50 = 198 stay, 202 move


def candidate(m: int, matrix: list[list[int]], **figures: Any) -> dict[str, Any]:
    cand: dict[str, Any] = {
        "partitions": m,
        "moved_keys": 0,
        "moved_keys_interval": None,
        "moved_fraction": 0.0,
        "moved_fraction_interval": None,
        "expected_moved_fraction": 0.0,
        "moved_records": 0,
        "moved_records_interval": None,
        "moved_bytes": 0,
        "moved_bytes_interval": None,
        "matrix": matrix,
        "flows": [[i, j, v] for i, row in enumerate(matrix) for j, v in enumerate(row) if v],
        "load": [
            {"partition": j, "keys": sum(row[j] for row in matrix), "bytes": 0} for j in range(m)
        ],
        "skew": 1.0,
        "moved_key_sample": [],
    }
    cand.update(figures)
    return cand


def topic(name: str, **fields: Any) -> dict[str, Any]:
    topic: dict[str, Any] = {
        "topic": name,
        "cleanup_policy": "delete",
        "current_partitions": 4,
        "partitioner": "murmur2",
        "partitioner_forced": False,
        "predictable": True,
        "conformance": 1.0,
        "conformance_by_partitioner": {"murmur2": 1.0, "consistent_random": 0.26, "fnv1a": None},
        "records_total": 1200,
        "records_scanned": 1200,
        "null_key_records": 12,
        "unhashed_records": 0,
        "non_conforming_records": 0,
        "non_conforming_keys": 0,
        "sampled": False,
        "distinct_keys": 400,
        "distinct_keys_interval": None,
        "state": "log",
        "state_records": 1188,
        "state_bytes": 2_400_000,
        "partitions": [
            {"partition": p, "log_start_offset": 0, "log_end_offset": 300, "records_scanned": 300}
            for p in range(4)
        ],
        "candidates": [],
        "verdict": {"level": "safe", "text": "SAFE: no key changes partition."},
    }
    topic.update(fields)
    return topic


def report() -> dict[str, Any]:
    orders = topic(
        "orders",
        candidates=[
            candidate(
                6,
                M4_6,
                moved_keys=262,
                moved_fraction=0.655,
                expected_moved_fraction=2 / 3,
                moved_records=786,
                moved_bytes=1536 * 1024,
                skew=1.11,
                moved_key_sample=[
                    {
                        "key": "user-17",
                        "key_hex": "757365722d3137",
                        "partition": 1,
                        "new_partition": 5,
                    },
                    {"key": EVIL_KEY, "key_hex": "617c62", "partition": 0, "new_partition": 4},
                    {"key": MARKUP_KEY, "key_hex": "5b", "partition": 2, "new_partition": 0},
                ],
            ),
            candidate(
                8,
                M4_8,
                moved_keys=202,
                moved_fraction=0.505,
                expected_moved_fraction=0.5,
                moved_records=606,
                moved_bytes=1_212_416,
                skew=1.06,
                moved_key_sample=[
                    {"key": "user-4", "key_hex": "757365722d34", "partition": 0, "new_partition": 4}
                ],
            ),
        ],
        verdict={
            "level": "moves",
            "text": "STATE MOVES: going 4 -> 6 partitions moves 65.5% of keys (262)",
        },
    )
    clicks = topic(
        "clicks",
        cleanup_policy="compact",
        key_layout="window",  # a window store's changelog, as migcheck app --state reads it
        state="live",
        sampled=True,
        records_total=90_000,
        records_scanned=20_000,
        distinct_keys=9000,
        distinct_keys_interval=[8800, 9300],
        distinct_keys_bounds=[8600, 78_600],
        sample_assumption={
            "assumption": "the sampled windows represent the unread records (keys are "
            "exchangeable over offsets: no key is likelier at one offset than at another)",
            "holds": True,
            "findings": [],
        },
        state_records=9000,
        state_bytes=9_200_000,
        candidates=[
            candidate(
                6,
                [[v * 22 for v in row] for row in M4_6],
                moved_keys=5900,
                moved_keys_interval=[5700, 6150.4],
                moved_keys_bounds=[5600, 75_600],
                moved_fraction_bounds=[0.0712, 0.9822],
                moved_records_bounds=[5600, 75_600],
                moved_bytes_bounds=[5_700_000, None],
                moved_fraction=0.6556,
                moved_fraction_interval=[0.641, 0.67],
                expected_moved_fraction=2 / 3,
                moved_records=5900,
                moved_records_interval=[5700, 6150.4],
                moved_bytes=6_040_000,
                moved_bytes_interval=[5_830_000.0, 6_300_000.0],
            ),
            candidate(
                8,
                [[v * 22 for v in row] for row in M4_8],
                moved_keys=4500,
                moved_keys_interval=[4390, 4702.8],
                moved_keys_bounds=[4300, 74_300],
                moved_fraction_bounds=[0.0547, 0.9453],
                moved_records_bounds=[4300, 74_300],
                moved_bytes_bounds=[4_400_000, None],
                moved_fraction=0.5,
                moved_fraction_interval=[0.488, 0.512],
                expected_moved_fraction=0.5,
                moved_records=4500,
                moved_records_interval=[4390, 4702.8],
                moved_bytes=4_600_000,
                moved_bytes_interval=[4_480_000.0, 4_800_000.0],
            ),
        ],
        verdict={"level": "moves", "text": "STATE MOVES: going 4 -> 6 partitions moves ~65.6%"},
    )
    custom = topic(
        "custom",
        partitioner=None,
        predictable=False,
        conformance=0.41,
        conformance_by_partitioner={"murmur2": 0.41, "consistent_random": 0.26, "fnv1a": 0.24},
        state_records=0,  # nothing is predicted without a partitioner
        state_bytes=0,
        verdict={
            "level": "unpredictable",
            "text": "CANNOT PREDICT: no known partitioner placed every key where it is",
        },
    )
    return {
        "migcheck_version": "0.1.0",
        "generated_at": "2026-11-22T11:00:00Z",
        "source": {"kind": "kafka", "bootstrap_servers": "127.0.0.1:9092"},
        "mode": "sample",
        "sample_per_partition": 5000,
        "candidates": [6, 8],
        "topics": [orders, clicks, custom],
        "gate": {
            "fail_if_moved": False,
            "max_moved_fraction": 0.6,
            "failed": True,
            "reason": "orders: 65.5% of keys move at 6 partitions (limit 60.0%)",
        },
    }


def app_report() -> dict[str, Any]:
    """A ``migcheck app --state`` report by hand: CRASH at 6, its store's figures, and the
    analysis of its source (the ``orders`` topic of :func:`report`) under ``state``."""
    orders = report()["topics"][0]
    return {
        "migcheck_version": "0.1.0",
        "generated_at": "2026-11-22T11:00:00Z",
        "source": {"kind": "kafka", "bootstrap_servers": "127.0.0.1:9092"},
        "application_id": "count-<app>",
        "group": {"type": "classic", "state": "Stable", "members": 2},
        "protocol": "classic",
        "basis": "topology",
        "basis_note": None,
        "notes": [f"key {EVIL_KEY} is only a note"],
        "topics": [
            {"topic": "orders", "role": "source", "partitions": 4, "cleanup_policy": "delete"},
            {
                "topic": "count-<app>-counts-changelog",
                "role": "changelog",
                "partitions": 4,
                "cleanup_policy": "compact",
            },
        ],
        "subtopologies": [
            {
                "id": 0,
                "is_global": False,
                "sources": ["orders"],
                "sinks": [],
                "stores": ["counts"],
                "tasks": 4,
            }
        ],
        "health": [],
        "changes": ["orders"],
        "candidates": [
            {
                "partitions": 6,
                "verdict": "CRASH",
                "error": "Existing internal topic count-<app>-counts-changelog has invalid "
                "partitions: expected: 6; actual: 4.",
                "reasons": [],
                "subtopologies": [{"id": 0, "tasks": 4, "new_tasks": 6, "verdict": "CRASH"}],
                "stores": [
                    {
                        "store": "counts",
                        "subtopology": 0,
                        "logged": True,
                        "analyzed_topic": "orders",
                        "partitions": 4,
                        "new_partitions": 6,
                        "moved_keys": 262,
                        "moved_keys_interval": None,
                        "moved_bytes": 1536 * 1024,
                        "moved_bytes_interval": None,
                        "restore_records": 400,
                        "restore_bytes": 2_400_000,
                    }
                ],
            }
        ],
        "verdict": "CRASH",
        "state": {"mode": "full", "sample_per_partition": None, "topics": [orders]},
    }


def readers_report() -> dict[str, Any]:
    """A readers report as ``migcheck readers`` writes one: a plain group and an idle one."""
    lag = {"partition": 0, "end_offset": 9, "committed_offset": 5, "lag": 4}
    reader = {
        "id": "billing",
        "kind": "consumer-group",
        "evidence": ["its members use the consumer assignor 'range'"],
        "protocol": "classic",
        "state": "Stable",
        "members": 1,
        "lag": 4,
        "last_commit": None,
        "judgements": [{"risk": "ORDER", "text": "per-key order breaks"}],
        "partitions": [lag],
    }
    return {
        "report": "readers",
        "migcheck_version": "0",
        "generated_at": "2026-01-01T00:00:00Z",
        "bootstrap_servers": "localhost:9092",
        "to": 6,
        "topics": [{"topic": "orders", "partitions": 1, "readers": [reader]}],
        "notes": [],
    }
