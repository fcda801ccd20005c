"""The runbook's steps: what to run, in order, to widen a topic under a Kafka Streams app.

Pure: :class:`RunbookFacts` (what discovery found) in, a list of :class:`Step`
out.  :mod:`migcheck.report.runbook` writes the same steps as Markdown
for a change ticket and as a shell script.

Two strategies (:mod:`migcheck.runbook.strategy` picks one for ``auto``).  In
place: ``kafka-topics --alter``, then the reset, which sends the app back to the
earliest offsets and deletes its internal topics, then an empty local state;
correct when no store reads the topic directly.  A new topic, for a store that
does: after an in-place alter each moved key's old records stay in its old
partition while its new records arrive in the new one, so reprocessing splits
the key's history over two tasks.  Reprocessing is correct only when every key's
whole history sits in the partition the new count gives it: a copy into a new,
wider topic with the producers' partitioner (``migcheck copy``), then the reset,
then an empty local state.  Both need the full history: a source whose log start
offset is above 0 has lost records a reprocess needs.
"""

from __future__ import annotations

from migcheck.model.runbook import (
    Run,
    RunbookFacts,
    ShellHelper,
    Step,
    Strategy,
)
from migcheck.runbook.actions import (
    alter_step,
    group_is_empty,
    internal_topics_back,
    kafka,
    new_topic_step,
    prechecks,
    restart,
    stop,
    wipe_state,
)

#: Why the Kafka Streams app stops first, and why the check waits.
STOP_WHY = (
    "Every instance must be down before the change and the reset: the reset refuses an "
    "active group, and a running instance would keep writing state. A Kafka Streams "
    "member of a classic group does not leave it on close(): the broker drops it when "
    "its session.timeout.ms (45 s by default) runs out."
)

#: Why in place is correct for a Kafka Streams app, when it is.
ALTER_WHY = (
    "In place is correct only when no store reads the topic directly: a store behind a "
    "repartition topic is fed by its own key, and the reset recreates the internal "
    "topics with the new counts."
)


def steps(f: RunbookFacts) -> list[Step]:
    """Kafka Streams' ordered procedure for ``f.strategy`` (the id is checked by
    :func:`migcheck.runbook.procedures.steps`, every framework's way in)."""
    change = new_topic_step(f) if f.strategy == Strategy.NEW_TOPIC else alter_step(f, ALTER_WHY)
    return [prechecks(f), stop(f, STOP_WHY), change, _reset(f), _local_state(f), _restart(f)]


#: The reset tool's flag for the config file as written: the one every reset tool of Kafka
#: 3.6 to 4.3 accepts.  4.2 deprecates it for --command-config, which 3.x to 4.1 refuse;
#: the script passes the flag the installed tool lists (runbook_prelude.sh, reset_tool).
RESET_CONFIG_FLAG = "--config-file"


def _reset(f: RunbookFacts) -> Step:
    inputs = ",".join(dict.fromkeys([f.topic, f.target]))
    args = ["--application-id", f.app_id, "--input-topics", inputs]
    if f.internal:
        args += ["--internal-topics", ",".join(f.internal)]
    tool = kafka(f, "kafka-streams-application-reset", *args, config_flag=RESET_CONFIG_FLAG)
    # a reset that deleted the internal topics and then failed must be able to run again
    reset = Run(tool.argv, kafka_tool=True, via=ShellHelper.RESET_TOOL)
    dry = Run((*tool.argv, "--dry-run"), kafka_tool=True, via=ShellHelper.RESET_TOOL)
    flag = (
        f" Its config flag depends on the tool's version: Kafka 4.2 and later take "
        f"--command-config (and deprecate {RESET_CONFIG_FLAG}), 3.x to 4.1 know only "
        f"{RESET_CONFIG_FLAG}, shown here; the script asks the installed tool's --help."
        if f.command_config
        else ""
    )
    return Step(
        "Reset the application",
        "The reset tool sends the app back to the earliest offsets of its inputs and deletes "
        "its internal topics (named here, as found on the cluster), so they come back with "
        f"{f.to}-partition counts. It runs once: its dry run first, then for real.{flag}",
        (
            group_is_empty(f, f"the group {f.app_id} still has no members"),
            dry,
            reset,
        ),
        destructive=True,
    )


def _local_state(f: RunbookFacts) -> Step:
    where = f.state_dir or "${java.io.tmpdir}/kafka-streams"
    return wipe_state(
        f,
        f"On every instance, delete {where}/{f.app_id} (state.dir/application.id), or have "
        "the app call KafkaStreams#cleanUp() before start(): the reset tool does not touch "
        "local state.",
        "A store left on disk would be restored from, and keep the old partitioning.",
    )


def _restart(f: RunbookFacts) -> Step:
    return restart(
        f,
        "Its internal topics come back with the new counts, the lag drains to 0, and "
        "migcheck app finds it healthy.",
        f"Start the application reading {f.target} (instead of {f.topic})."
        if f.target != f.topic
        else "Start the application.",
        internal_topics_back(f, "the internal topics come back with their counts: "),
    )
