"""How Kafka Connect names what it leaves on the cluster: the evidence of a sink's group.

Pure.  A sink connector's group is ``connect-<connector>``, its tasks' consumers' client
ids ``connector-consumer-<connector>-<task>``.  The stream processors' naming is each
framework's own (:mod:`migcheck.frameworks`).
"""

from __future__ import annotations

_CONNECT_GROUP = "connect-"
_CONNECT_CLIENT = "connector-consumer-"


def connect_connector(group_id: str) -> str | None:
    """The sink connector's name when ``group_id`` follows Connect's naming, else None."""
    name = group_id.removeprefix(_CONNECT_GROUP)
    return name if name != group_id and name else None


def connect_client(client_id: str) -> bool:
    """Whether a member's client id is that of a Connect sink task's consumer."""
    return client_id.startswith(_CONNECT_CLIENT)
