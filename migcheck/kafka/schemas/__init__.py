"""Kafka protocol messages kafka-python lacks, built from our JSON schemas in this package.

kafka-python builds each message class from a JSON schema written in Apache
Kafka's message format; its class keyword ``load_json`` names the package
the schema file is read from, and the file is named after the class.  The
schemas here are migcheck's own, so this package must ship its ``*.json``
files (``[tool.setuptools.package-data]`` in pyproject.toml).

Only read requests live here: migcheck never alters a cluster.
"""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

# kafka-python ships no types, so mypy checks load_json against object's
# __init_subclass__, which takes none: hence each class's ignore.


class StreamsGroupDescribeRequest(ApiMessage, load_json=__name__):  # type: ignore[call-arg]
    """StreamsGroupDescribe (API key 89, KIP-1071): a streams group's topology and members."""


class StreamsGroupDescribeResponse(ApiMessage, load_json=__name__):  # type: ignore[call-arg]
    """The answer to :class:`StreamsGroupDescribeRequest` (registered with kafka-python)."""


class ConsumerGroupDescribeRequest(ApiMessage, load_json=__name__):  # type: ignore[call-arg]
    """ConsumerGroupDescribe (API key 69, KIP-848): a consumer-protocol group's members and
    their assignment (DescribeGroups answers only classic groups)."""


class ConsumerGroupDescribeResponse(ApiMessage, load_json=__name__):  # type: ignore[call-arg]
    """The answer to :class:`ConsumerGroupDescribeRequest` (registered with kafka-python)."""


class ShareGroupDescribeRequest(ApiMessage, load_json=__name__):  # type: ignore[call-arg]
    """ShareGroupDescribe (API key 77, KIP-932): a share group's members and their
    assignment."""


class ShareGroupDescribeResponse(ApiMessage, load_json=__name__):  # type: ignore[call-arg]
    """The answer to :class:`ShareGroupDescribeRequest` (registered with kafka-python)."""


class DescribeShareGroupOffsetsRequest(ApiMessage, load_json=__name__):  # type: ignore[call-arg]
    """DescribeShareGroupOffsets (API key 90, KIP-932): the partitions a share group has
    state for, and each one's start offset (a share group commits no offsets)."""


class DescribeShareGroupOffsetsResponse(ApiMessage, load_json=__name__):  # type: ignore[call-arg]
    """The answer to :class:`DescribeShareGroupOffsetsRequest` (registered with kafka-python)."""


__all__ = [
    "ConsumerGroupDescribeRequest",
    "ConsumerGroupDescribeResponse",
    "DescribeShareGroupOffsetsRequest",
    "DescribeShareGroupOffsetsResponse",
    "ShareGroupDescribeRequest",
    "ShareGroupDescribeResponse",
    "StreamsGroupDescribeRequest",
    "StreamsGroupDescribeResponse",
]
