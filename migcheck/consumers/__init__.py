"""Plain consumer groups (not Kafka Streams) that read a topic about to be widened.

- :mod:`~migcheck.consumers.steps` the ordering-safe runbook's steps (pure).

:mod:`migcheck.readers` tells a plain group from a stateful app's and sums its lag;
:mod:`migcheck.commands.groups_runbook` reads the cluster and wires them;
:mod:`migcheck.report.runbook` renders the steps as the Streams runbook's are.
"""
