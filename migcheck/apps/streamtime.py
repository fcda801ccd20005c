"""Whether an app's results depend on stream time, which an online shadow cannot reproduce.

A Kafka Streams task's stream time is the largest record timestamp it has seen on its
partitions.  Windows close, grace periods end and ``suppress`` emits by it.  The copy
into the wider topic interleaves several old partitions into each new one, so a shadow
task sees other records first and its stream time runs ahead of the old task's: a
record on time for the old app can be dropped as late by the shadow, and a window can
close earlier.  The shadow's results would then differ from the app's, and a cut-over
would switch readers to them.  So ``--strategy online`` refuses such an app; the
new-topic runbook reprocesses under the new partitioning on purpose.

Pure rules over what the cluster and the topology show:

- a window or session store: Kafka Streams creates its changelog with
  ``cleanup.policy=compact,delete`` (``WindowedChangelogTopicConfig``), where a
  key-value store's is ``compact`` alone (stream-stream joins keep window stores too);
- a ``suppress`` node: ``KTABLE-SUPPRESS-<n>``, its default name in the topology;
- a store of the topology that logs to no changelog: nothing shows its kind, so it is
  refused as one that may be windowed (safety decisions fail closed).

A named ``suppress`` over a key-value table with a logged buffer looks like a key-value
store to every one of these: docs/runbooks.md names that limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from migcheck.errors import UsageError
from migcheck.frameworks.topology import Topology

CHANGELOG = "-changelog"
SUPPRESS = "KTABLE-SUPPRESS-"


def stream_time_reasons(
    app_id: str, changelogs: Mapping[str, str], topology: Topology | None
) -> tuple[str, ...]:
    """Why the app's results depend on stream time (empty: nothing shows they do).

    ``changelogs`` maps each of the app's changelog topics to its ``cleanup.policy``."""
    reasons = [
        f"{name} is a window or session store's changelog (cleanup.policy {policy})"
        for name, policy in sorted(changelogs.items())
        if "delete" in policy.split(",")
    ]
    if topology is not None:
        reasons += _from_topology(app_id, changelogs, topology)
    return tuple(reasons)


def _from_topology(app_id: str, changelogs: Mapping[str, str], topology: Topology) -> list[str]:
    tasks = [s for s in topology.subtopologies if not s.is_global]
    nodes = [n.name for s in tasks for n in s.nodes if n.name.startswith(SUPPRESS)]
    stores = dict.fromkeys(store for s in tasks for store in s.stores)
    unlogged = [s for s in stores if f"{app_id}-{s}{CHANGELOG}" not in changelogs]
    return [f"{n} suppresses by stream time" for n in nodes] + [
        f"store {s} logs to no changelog, so nothing shows whether it is windowed" for s in unlogged
    ]


def changelogs(internal: Iterable[str]) -> list[str]:
    """The changelog topics among an app's internal topics."""
    return [t for t in internal if t.endswith(CHANGELOG)]


def refuse_stream_time(
    subject: str, app_id: str, changelogs: Mapping[str, str], topology: Topology | None
) -> None:
    """One line (UsageError) when :func:`stream_time_reasons` finds any."""
    reasons = stream_time_reasons(app_id, changelogs, topology)
    if reasons:
        raise UsageError(refusal(subject, reasons))


def refusal(subject: str, reasons: tuple[str, ...]) -> str:
    """The one line ``runbook --strategy online`` and ``migrate`` refuse such an app with;
    ``subject`` is the option that asked for the shadow."""
    return (
        f"{subject}: {'; '.join(reasons)}: the app's results depend on stream time, "
        "which the copy's interleaving of partitions changes for a shadow, so its results "
        "would differ; use runbook --strategy new-topic"
    )
