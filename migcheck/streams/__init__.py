"""Kafka Streams applications: the model a verdict is judged on, and the pure rules.

- :mod:`~migcheck.frameworks.topology` parses ``Topology#describe()``;
- :mod:`~migcheck.streams.discovery` finds an app's group, sources and internal
  topics on the cluster (read-only);
- :mod:`~migcheck.streams.build` combines those into the app model;
- :mod:`~migcheck.streams.rules` holds Kafka Streams' sizing rules and the
  CRASH / CORRUPT / SAFE checks, one registry entry per check;
- :mod:`~migcheck.streams.parallelism` and :mod:`~migcheck.streams.advice` the
  plan's figures and its recommendation.

The runbook's procedures are :mod:`migcheck.runbook`'s.

The commands that use them live in :mod:`migcheck.commands`; their reports are
rendered by :mod:`migcheck.report`.
"""
