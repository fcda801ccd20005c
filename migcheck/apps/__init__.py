"""Stream processors' applications, of every framework alike (Kafka Streams, ksqlDB,
Quix Streams, Faust: each a peer, named by discovery, none assumed): the model a verdict
is judged on, and the pure rules.  Each framework's own naming, words and procedures are
its module in :mod:`migcheck.frameworks`.

- :mod:`~migcheck.frameworks.topology` parses ``Topology#describe()``;
- :mod:`~migcheck.apps.discovery` finds an app's group, sources and internal
  topics on the cluster (read-only);
- :mod:`~migcheck.apps.build` combines those into the app model;
- :mod:`~migcheck.apps.rules` holds the sizing rules (Kafka Streams' own, which the
  others share or narrow through their framework) and the
  CRASH / CORRUPT / SAFE checks, one registry entry per check;
- :mod:`~migcheck.apps.parallelism` and :mod:`~migcheck.apps.advice` the
  plan's figures and its recommendation.

The runbook's procedures are :mod:`migcheck.runbook`'s.

The commands that use them live in :mod:`migcheck.commands`; their reports are
rendered by :mod:`migcheck.report`.
"""
