"""The report's one typed definition: what ``--format json`` writes, field by field.

Each TypedDict below is one object of the JSON report, its fields in the
documented order.  Everything else follows from here: the analysis builds these
dicts, :mod:`migcheck.report.schema` derives the JSON key order and the check
of a saved report from them, and ``docs/report-schema.md`` is tested against
them field by field.  It lives in ``analysis/`` because the analysis produces
it and the renderers (``report/``, one layer up) only read it.

Fixed vocabularies are :class:`~enum.StrEnum` members: they compare equal to,
and serialize as, their plain string values, so the JSON is unchanged.
"""

from enum import StrEnum
from typing import NotRequired, TypedDict

from migcheck.model.header import Kind


class Level(StrEnum):
    """A topic verdict's level: what a gate or a script branches on."""

    MOVES = "moves"  # some state key changes partition
    SAFE = "safe"  # none does
    EMPTY = "empty"  # no keyed record
    UNPREDICTABLE = "unpredictable"  # no known partitioner placed every key


class State(StrEnum):
    """What counts as a topic's state."""

    LIVE = "live"  # compacted: the latest record per key, tombstoned keys dropped
    LOG = "log"  # delete policy: every keyed record


class KeyLayout(StrEnum):
    """How a topic's key holds the bytes its partitioner hashed.

    A Kafka Streams changelog record sits in its task's partition, placed by the
    *source* key; a window or session store's changelog key appends a fixed-size
    suffix to that key, so only the key without the suffix (the inner key) is hashed.
    """

    PLAIN = "plain"  # the whole key
    WINDOW = "window"  # [inner key][8-byte window start][4-byte seqnum]
    SESSION = "session"  # [inner key][8-byte session end][8-byte session start]


class Mode(StrEnum):
    FULL = "full"
    SAMPLE = "sample"


class SourceKind(StrEnum):
    KAFKA = "kafka"
    FILE = "file"


#: ``[lo, hi]``, a 95% interval under :data:`ASSUMPTION`; its ends may be floats where
#: the figure is an int.
Interval = list[float]

#: ``[lo, hi]``, certain bounds: whatever the unread records hold, the figure is in
#: them; ``hi`` is null where nothing read bounds it (the size of unread records).
Bounds = list[float | None]

#: What a sampled figure's 95% interval assumes, in the words every report uses.
ASSUMPTION = (
    "the sampled windows represent the unread records (keys are exchangeable over "
    "offsets: no key is likelier at one offset than at another)"
)


class SampleAssumption(TypedDict):
    """Whether a sampled topic's windows bear out :data:`ASSUMPTION`: ``findings`` say
    in words what they show against it; when there are any, the keys' intervals are
    their certain bounds."""

    assumption: str
    holds: bool
    findings: list[str]


class Source(TypedDict):
    kind: SourceKind
    bootstrap_servers: NotRequired[str]
    path: NotRequired[str]


class PartitionEntry(TypedDict):
    partition: int
    log_start_offset: int
    log_end_offset: int
    records_scanned: int


class LoadEntry(TypedDict):
    partition: int
    keys: int
    bytes: int


class MovedKey(TypedDict):
    key: str
    key_hex: str
    partition: int
    new_partition: int


class Verdict(TypedDict):
    level: Level
    text: str


class ShareEntry(TypedDict):
    partitioners: list[str]
    share: float


class CandidateEntry(TypedDict):
    partitions: int
    moved_keys: int
    moved_keys_interval: Interval | None
    moved_keys_bounds: NotRequired[Bounds | None]
    moved_fraction: float
    moved_fraction_interval: Interval | None
    moved_fraction_bounds: NotRequired[Bounds | None]
    expected_moved_fraction: float
    moved_records: int
    moved_records_interval: Interval | None
    moved_records_bounds: NotRequired[Bounds | None]
    moved_bytes: int
    moved_bytes_interval: Interval | None
    moved_bytes_bounds: NotRequired[Bounds | None]
    matrix: list[list[int]] | None
    flows: list[list[int]]
    load: list[LoadEntry]
    skew: float
    moved_key_sample: list[MovedKey]


class TopicEntry(TypedDict):
    topic: str
    cleanup_policy: str
    current_partitions: int
    partitioner: str | None
    partitioner_forced: bool
    key_layout: NotRequired[KeyLayout]  # absent when only plain keys were allowed
    predictable: bool
    conformance: float | None
    conformance_by_partitioner: dict[str, float | None]
    records_total: int
    records_scanned: int
    null_key_records: int
    unhashed_records: int
    non_conforming_records: int
    non_conforming_keys: int
    sampled: bool
    distinct_keys: int
    distinct_keys_interval: list[int] | None
    distinct_keys_bounds: NotRequired[list[int] | None]
    sample_assumption: NotRequired[SampleAssumption | None]
    state: State
    state_records: int
    state_bytes: int
    partitions: list[PartitionEntry]
    candidates: list[CandidateEntry]
    verdict: Verdict
    # absent in reports of migcheck before the client partitioners (issue 25)
    clients: NotRequired[str | None]
    placed_alike: NotRequired[list[str]]
    mixed_shares: NotRequired[list[ShareEntry]]


class Gate(TypedDict):
    fail_if_moved: bool
    max_moved_fraction: float | None
    failed: bool
    reason: str | None


class Report(Kind):
    migcheck_version: str
    generated_at: str
    source: Source
    mode: Mode
    sample_per_partition: int | None
    candidates: list[int]
    topics: list[TopicEntry]
    gate: Gate
