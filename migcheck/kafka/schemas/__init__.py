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


class StreamsGroupDescribeRequest(ApiMessage, load_json=__name__):
    """StreamsGroupDescribe (API key 89, KIP-1071): a streams group's topology and members."""


class StreamsGroupDescribeResponse(ApiMessage, load_json=__name__):
    """The answer to :class:`StreamsGroupDescribeRequest` (registered with kafka-python)."""


__all__ = ["StreamsGroupDescribeRequest", "StreamsGroupDescribeResponse"]
