"""Faust's runbook (faust-streaming): no reset tool, and a changelog Faust creates itself.

What differs from Kafka Streams, as faust-streaming 0.15 behaves (``tests/integration/
test_faust.py`` runs it):

- a table's changelog is ``<app id>-<table>-changelog`` whatever the source topic is
  called, so a copy into a new topic keeps the old changelog's name: it must be deleted,
  or Faust refuses it (``PartitionsMismatch``: a changelog of another count than its
  source) at the first table write;
- Faust creates a missing changelog with the app's ``topic_partitions`` (8 by default)
  or the table's ``partitions``: the restarted worker must say the new count, or it
  creates the changelog with the wrong one and refuses it again;
- the state is the worker's datadir (``<app id>-data`` by default, one RocksDB database
  per table and partition): deleted, with the changelog gone, the tables are rebuilt
  from the reprocess alone;
- its consumer starts a partition without a committed offset where
  ``consumer_auto_offset_reset`` says: the start of the new topic is committed for the
  group, so the reprocess reads everything whatever the app says.

Pure: facts in, steps out.
"""

from __future__ import annotations

from collections.abc import Iterable

from migcheck.model.runbook import RunbookFacts, Step, Strategy
from migcheck.readers.naming import faust_table
from migcheck.runbook.actions import (
    alter_step,
    commit_start,
    delete_changelogs,
    internal_topics_back,
    new_topic_step,
    prechecks,
    restart,
    rewind,
    stop,
    wipe_state,
)

_STOP_WHY = (
    "Every worker must be down before the change: a running worker would keep writing its "
    "tables and their changelogs, and the offsets below can be committed only while the "
    "group has no members. A Faust worker leaves the group when it stops (SIGTERM)."
)

_ALTER_WHY = (
    "In place is correct only when no table reads the topic directly: a table behind a "
    "group_by keeps its partitioning (Faust never checks a repartition topic's count)."
)
_SPLIT = (
    "Each moved key's old records stay in its old partition, so the reprocess counts them "
    "in another partition's table than its new records."
)


def faust_steps(f: RunbookFacts) -> list[Step]:
    """The ordered procedure for ``f.strategy``.

    New topic: copy, wipe the datadir, delete the changelogs, commit the new topic's
    start, restart with the new count.  In place with a table fed directly (written only
    with --accept-split-history): alter, wipe, delete the changelogs, send the group back
    to the start, restart; each moved key's history then splits.  In place otherwise: the
    alter, and the new partitions' start committed.
    """
    what = f"the Faust application (consumer group {f.app_id})"
    head = [prechecks(f), stop(f, _STOP_WHY, what)]
    rebuild = [_wipe(f), *([_delete_changelogs(f)] if f.internal else [])]
    if f.strategy is Strategy.NEW_TOPIC:
        return [*head, new_topic_step(f), *rebuild, _offsets(f, 0), _restart(f)]
    if f.split_keys is not None:
        return [
            *head,
            alter_step(f, _ALTER_WHY, _SPLIT),
            *rebuild,
            rewind(f, "empty tables"),
            _restart(f),
        ]
    return [*head, alter_step(f, _ALTER_WHY, _SPLIT), _offsets(f, f.partitions), _restart(f)]


def _wipe(f: RunbookFacts) -> Step:
    where = f.state_dir or f"{f.app_id}-data"
    return wipe_state(
        f,
        f"On every worker, delete {where} (the app's datadir, '{{conf.id}}-data' by "
        "default, relative to the worker's working directory): it holds every table's "
        "RocksDB databases, partitioned as before.",
        "A table left on disk keeps the old partitioning and its changelog offsets, and "
        "would be read instead of being rebuilt from the reprocess.",
        path=f.state_dir,
    )


def _delete_changelogs(f: RunbookFacts) -> Step:
    return delete_changelogs(
        f,
        f"Faust names a table's changelog after the app, not its topic, so the restarted "
        f"worker would find them with {f.partitions} partitions and refuse them "
        f"(PartitionsMismatch): deleted, Faust creates them again with the count the "
        f"worker says.",
    )


def _offsets(f: RunbookFacts, first: int) -> Step:
    return commit_start(
        f,
        first,
        "Faust starts a partition without a committed offset where the app's "
        "consumer_auto_offset_reset says (earliest by default, latest where the app says "
        "so). The group has no members now, so Kafka's tool commits the start of each "
        "partition that has no offset, and the reprocess reads every record.",
    )


def _restart(f: RunbookFacts) -> Step:
    source = (
        f"with app.topic({f.target!r}) in place of {f.topic!r}, " if f.target != f.topic else ""
    )
    start = (
        f"Start every worker {source}the same app id, and topic_partitions={f.to} (and "
        f"partitions={f.to} on each Table that names a count): Faust creates the "
        "changelogs with that count."
    )
    topics = internal_topics_back(f, "its changelogs exist with their counts: ")
    return restart(
        f,
        "Faust creates its changelogs, rebuilds its tables from the start, the lag drains "
        "to 0, and migcheck app finds it healthy.",
        start,
        topics if f.expected_internal else None,
    )


def faust_internal(
    app_id: str, internal: Iterable[str], to: int
) -> tuple[tuple[str, ...], dict[str, int]]:
    """The changelogs the runbook deletes, and those the restarted worker creates with
    the new count: the same names (a group_by's topic keeps its count, as Faust never
    checks it, and is left alone)."""
    changelogs = tuple(sorted(t for t in internal if faust_table(app_id, t) is not None))
    return changelogs, dict.fromkeys(changelogs, to)
