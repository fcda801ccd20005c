"""The runbook's steps: what to run, in order, to widen a topic under a Kafka Streams app.

Pure: :class:`RunbookFacts` (what discovery found) in, a list of :class:`Step`
out.  :mod:`migcheck.report.runbook` writes the same steps as Markdown
for a change ticket and as a shell script.

Two strategies (:mod:`migcheck.streams.strategy` picks one for ``auto``).  In
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
    NEW_TOPIC,
    Action,
    Check,
    Manual,
    Run,
    RunbookFacts,
    ShellCheck,
    ShellHelper,
    Step,
    StepRole,
    alter_check,
    kafka_run,
)


def kafka(f: RunbookFacts, tool: str, *args: str, config_flag: str = "--command-config") -> Run:
    return kafka_run(f.bootstrap, f.command_config, tool, *args, config_flag=config_flag)


def migcheck(f: RunbookFacts, command: str, *args: str) -> Run:
    extra = ("--command-config", f.command_config) if f.command_config else ()
    return Run(("migcheck", command, "--bootstrap-server", f.bootstrap, *extra, *args))


def group_tool(f: RunbookFacts, *args: str) -> Run:
    tool = "kafka-streams-groups" if f.protocol == "streams" else "kafka-consumer-groups"
    return kafka(f, tool, "--describe", "--group", f.app_id, *args)


def steps(f: RunbookFacts) -> list[Step]:
    """Kafka Streams' ordered procedure for ``f.strategy`` (the id is checked by
    :func:`migcheck.streams.runbooks.steps`, every framework's way in)."""
    change = new_topic_step(f) if f.strategy == NEW_TOPIC else alter_step(f)
    return [prechecks(f), stop(f), change, _reset(f), _local_state(f), _restart(f)]


def prechecks(f: RunbookFacts) -> Step:
    return Step(
        "Pre-checks",
        "A reprocess is correct only with every source's full history: nothing deleted yet "
        "(log start offset 0). Record today's end offsets of the topic for the final check.",
        (
            Check(
                ShellCheck.HISTORY_INTACT,
                (f.topic,),
                f"{f.topic} still holds its full history: every log start offset is 0",
                kafka(f, "kafka-get-offsets", "--topic", f.topic, "--time", "-2"),
            ),
            Check(
                ShellCheck.RECORD_OFFSETS,
                (f.topic, f"{f.topic}.end-offsets"),
                f"record the end offsets of {f.topic}",
                kafka(f, "kafka-get-offsets", "--topic", f.topic, "--time", "-1"),
            ),
        ),
    )


def group_is_empty(f: RunbookFacts, text: str) -> Check:
    return Check(
        ShellCheck.GROUP_IS_EMPTY,
        (str(f.group_timeout), f.app_id),
        text,
        group_tool(f, "--members"),
    )


#: Why the Kafka Streams app stops first, and why the check waits.
_STOP_WHY = (
    "Every instance must be down before the change and the reset: the reset refuses an "
    "active group, and a running instance would keep writing state. A Kafka Streams "
    "member of a classic group does not leave it on close(): the broker drops it when "
    "its session.timeout.ms (45 s by default) runs out."
)


def stop(f: RunbookFacts, why: str = _STOP_WHY, what: str = "") -> Step:
    """Every instance stopped, and the group found empty (``what``: the app as the
    manual step names it)."""
    return Step(
        "Stop the application",
        f"{why} So the check waits up to {f.group_timeout} s (--group-timeout) for the group "
        "to empty before it refuses.",
        (
            Manual(f"Stop every instance of {what or f'the application {f.app_id}'}."),
            group_is_empty(
                f, f"the group {f.app_id} has no members (waits up to {f.group_timeout} s)"
            ),
        ),
        role=StepRole.STOP,
    )


def new_topic_step(f: RunbookFacts) -> Step:
    copy = migcheck(
        f, "copy", "--topic", f.topic, "--into", f.new_topic, "--checkpoint", "@copy.checkpoint"
    )
    return Step(
        f"Create {f.new_topic} and copy the history into it",
        (f"{f.strategy_reason} " if f.strategy_reason else "")
        + f"{f.new_topic} gets {f.topic}'s configs and {f.to} partitions; migcheck copy puts "
        "each record where the producers' partitioner sends its key under the new count, in "
        "order per key, and verifies records per key on both sides. Its checkpoint makes the "
        "catch-up copy take only what arrived since, never a record twice.",
        (
            Check(
                ShellCheck.ENSURE_TOPIC,
                (f.new_topic, str(f.to), f.topic, *[f"{k}={v}" for k, v in f.configs.items()]),
                f"{f.new_topic} exists with {f.to} partitions (created like {f.topic}, with the "
                f"replication factor of {f.topic})",
                kafka(
                    f,
                    "kafka-topics",
                    "--create",
                    "--topic",
                    f.new_topic,
                    "--partitions",
                    str(f.to),
                    *[a for k, v in f.configs.items() for a in ("--config", f"{k}={v}")],
                ),
            ),
            copy,
            Manual(f"Switch every producer of {f.topic} to {f.new_topic}."),
            copy,
        ),
    )


#: Why in place is correct for a Kafka Streams app, when it is.
_ALTER_WHY = (
    "In place is correct only when no store reads the topic directly: a store behind a "
    "repartition topic is fed by its own key, and the reset recreates the internal "
    "topics with the new counts."
)


def alter_step(f: RunbookFacts, why: str = _ALTER_WHY, split: str = "") -> Step:
    """The in-place alter; ``why`` unless --strategy auto said why, and what splits when
    --accept-split-history wrote it anyway (``split`` adds how)."""
    text = f.strategy_reason or why
    if f.split_keys is not None:
        text += f" This splits the history of {f.split_keys} keys (--accept-split-history)."
        text += f" {split}" if split else ""
    return Step(
        f"Alter {f.topic} to {f.to} partitions in place",
        text,
        (alter_check(f.bootstrap, f.command_config, f.topic, f.to),),
    )


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
    actions: list[Action] = [
        Manual(
            f"On every instance, delete {where}/{f.app_id} (state.dir/application.id), or have "
            "the app call KafkaStreams#cleanUp() before start(): the reset tool does not "
            "touch local state."
        )
    ]
    if f.state_dir:
        actions.append(Run(("rm", "-rf", "--", f"{f.state_dir}/{f.app_id}")))
    return Step(
        "Wipe the local state",
        "A store left on disk would be restored from, and keep the old partitioning.",
        tuple(actions),
        destructive=True,
    )


def _restart(f: RunbookFacts) -> Step:
    internal = [f"{t}={n}" for t, n in sorted(f.expected_internal.items())]
    return Step(
        f"Restart the application on {f.target}",
        "Its internal topics come back with the new counts, the lag drains to 0, and "
        "migcheck app finds it healthy.",
        (
            Manual(f"Start the application reading {f.target} (instead of {f.topic}).")
            if f.target != f.topic
            else Manual("Start the application."),
            Check(
                ShellCheck.WAIT_INTERNAL_TOPICS,
                tuple(internal),
                "the internal topics come back with their counts: " + ", ".join(internal),
                kafka(f, "kafka-topics", "--describe", "--topic", ",".join(f.expected_internal)),
            ),
            Check(
                ShellCheck.WAIT_LAG_ZERO,
                (str(f.lag_timeout), f.target, f.app_id),
                f"the group's lag on {f.target} drains to 0 (waits up to {f.lag_timeout} s)",
                group_tool(f, "--offsets"),
            ),
            app_is_healthy(f),
        ),
    )


def app_is_healthy(f: RunbookFacts) -> Check:
    """migcheck app on the restarted app: the script reads its JSON report (the ``health``
    list, empty when every internal topic matches its sources), never its prose; a person
    reads the text report, which says the same in a sentence."""
    app = migcheck(f, "app", "--application-id", f.app_id, "--topic", f.target, "--to", str(f.to))
    return Check(
        ShellCheck.APP_IS_HEALTHY,
        (*app.argv[1:], "--format", "json"),
        "migcheck app finds the app healthy (every internal topic matches its sources) "
        "and exits 0 (verdict SAFE)",
        app,
    )
