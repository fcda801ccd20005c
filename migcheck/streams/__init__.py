"""Kafka Streams applications: topology, internal topics and their verdicts (to come).

This package will hold the Streams model: discovering an application's
internal topics, parsing ``Topology#describe()``, and the CRASH / CORRUPT /
SAFE verdicts of ``migcheck app``, built on :mod:`migcheck.analysis`.
"""
