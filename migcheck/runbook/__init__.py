"""The runbook's procedures: what to run, in order, to widen a topic under each kind of
reader, built from facts the command found on the cluster.

- :mod:`~migcheck.runbook.actions`: every action a procedure is made of (Kafka's tools,
  the pre-checks, stop, the copy, the alter, wiping a state, the restart, the health
  check), written once;
- :mod:`~migcheck.runbook.procedures`: the one table of the frameworks' procedures, by
  reader kind, and the way in that checks the application id;
- one module per procedure: :mod:`~migcheck.runbook.kafka_streams` (the reset tool),
  :mod:`~migcheck.runbook.ksqldb` (TERMINATE and CREATE again),
  :mod:`~migcheck.runbook.quix` (clear the state, delete the changelogs, commit the
  start), :mod:`~migcheck.runbook.groups` (plain consumer groups: pause, drain, alter,
  commit the new partitions' start, resume);
- :mod:`~migcheck.runbook.strategy`: in place or through a new topic, for ``auto``.

Pure.  Its model is :mod:`migcheck.model.runbook` (the steps, their checks and the facts),
rendered as Markdown and a shell script by :mod:`migcheck.report.runbook` with its
prelude; :mod:`migcheck.commands.runbook` and :mod:`migcheck.commands.groups_runbook`
read the cluster and call it.  Those stay in their layers: a command reads Kafka, a
renderer is what the CLI calls, a model is what both pass.
"""
