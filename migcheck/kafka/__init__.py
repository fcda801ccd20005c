"""Talking to Kafka, strictly read-only: client configuration, metadata and record reading.

No consumer here joins a group, commits an offset or creates anything: each one
has ``group_id=None`` and ``enable_auto_commit=False``, is ``assign()``-ed to
exact offset ranges and reads ``read_committed``.
"""
