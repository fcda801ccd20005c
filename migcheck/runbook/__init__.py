"""The runbook's shared actions, and the plain consumer groups' procedure.

- :mod:`~migcheck.runbook.actions`: every action a procedure is made of (Kafka's tools,
  the pre-checks, stop, the copy, the alter, wiping a state, deleting changelogs,
  committing a start, rewinding, the restart, the health check), written once;
- :mod:`~migcheck.runbook.groups`: plain consumer groups (pause, drain, alter, commit
  the new partitions' start, resume).

Each stream processor's procedure lives in its own module under :mod:`migcheck.frameworks`
(the ``runbook`` of its entry), built from these actions; this package sits below it.
Pure.  Its model is :mod:`migcheck.model.runbook` (the steps, their checks and the
facts), rendered as Markdown and a shell script by :mod:`migcheck.report.runbook` with its
prelude; :mod:`migcheck.commands.runbook` and :mod:`migcheck.commands.groups_runbook`
read the cluster and call it.  Those stay in their layers: a command reads Kafka, a
renderer is what the CLI calls, a model is what both pass.
"""
