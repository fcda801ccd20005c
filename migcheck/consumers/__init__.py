"""Plain consumer groups (not Kafka Streams) that read a topic about to be widened.

- :mod:`~migcheck.consumers.groups` tells a plain consumer group from a Kafka Streams
  application's group, and sums a group's lag on the topic (pure);
- :mod:`~migcheck.consumers.steps` the ordering-safe runbook's steps (pure).

:mod:`migcheck.commands.groups_runbook` reads the cluster and wires them;
:mod:`migcheck.report.runbook` renders the steps as the Streams runbook's are.
"""
