"""How ``app``, ``plan`` and ``runbook`` find a Kafka Streams application: the user's
``--topology`` file, and the cluster's view of the app and the topics it names."""

from __future__ import annotations

from collections.abc import Sequence

from migcheck.errors import UsageError
from migcheck.kafka.config import ClientConfig
from migcheck.streams.discovery import Discovery, discover
from migcheck.streams.topology import Topology, parse_topology, source_topics


def read_topology(path: str | None) -> Topology | None:
    """The ``--topology`` file, parsed; None when none was given."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--topology {path}: {getattr(e, 'strerror', None) or e}") from None
    return parse_topology(text, f"--topology {path}")


def discover_app(
    client: ClientConfig, app_id: str, topology: Topology | None, topics: Sequence[str]
) -> Discovery:
    """The app's group and topics, with ``topics`` and the topology's sources described too.

    Without a topology, ``topics`` (the ones the user changes) are taken as sources when
    the group shows none: see :func:`migcheck.streams.discovery.discover`.
    """
    also = [*topics, *(source_topics(topology) if topology else [])]
    return discover(client, app_id, also, named=() if topology else topics)
