"""The actions every runbook procedure is made of: Kafka's tools against the cluster, the
pre-checks, stopping an app, the copy into a new topic, the in-place alter, wiping a local
state, restarting, and the final health check.

Why one module: each framework's procedure (in its module under
:mod:`migcheck.frameworks`) and the plain groups' (:mod:`~migcheck.runbook.groups`)
differ in their order and their words, not in how a tool is called or a state wiped;
each action is written here once.  Pure: facts in, steps out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from migcheck.model.history import ACCEPT_LOST_HISTORY, HISTORY_CHECK_WHY
from migcheck.model.readers import Protocol
from migcheck.model.runbook import (
    VERSIONED_CHANGELOG_CONFIG,
    Action,
    Check,
    Manual,
    Run,
    RunbookFacts,
    ShellCheck,
    ShellHelper,
    Step,
    StepRole,
)
from migcheck.words import listing


def kafka_run(
    bootstrap: str,
    command_config: str | None,
    tool: str,
    *args: str,
    config_flag: str = "--command-config",
) -> Run:
    """One of Kafka's tools against the cluster; secrets stay in the config file, which
    only its path names."""
    extra = (config_flag, command_config) if command_config else ()
    return Run((tool, "--bootstrap-server", bootstrap, *extra, *args), kafka_tool=True)


def alter_check(bootstrap: str, command_config: str | None, topic: str, to: int) -> Check:
    """The alter, as both runbooks run it: once, a re-run finds the count and does nothing."""
    return Check(
        ShellCheck.ENSURE_PARTITIONS,
        (topic, str(to)),
        f"{topic} has {to} partitions (altered once)",
        kafka_run(bootstrap, command_config, "kafka-topics", "--alter", "--topic", topic,
                  "--partitions", str(to)),
    )  # fmt: skip


def each_group(groups: Iterable[str]) -> tuple[str, ...]:
    """``--group G`` for each group, as Kafka's group tools take several."""
    return tuple(a for g in groups for a in ("--group", g))


def groups_drained(
    bootstrap: str, command_config: str | None, topic: str, groups: Sequence[str], timeout: int
) -> Check:
    """Every group's lag 0 on ``topic`` (waits up to ``timeout``; a group with lag and no
    members never drains, which the wait says), as both runbooks wait for it."""
    return Check(
        ShellCheck.WAIT_LAG_ZERO,
        (str(timeout), topic, *groups),
        f"the lag of {', '.join(groups)} on {topic} is 0 (waits up to {timeout} s)",
        kafka_run(bootstrap, command_config, "kafka-consumer-groups", "--describe",
                  *each_group(groups)),
    )  # fmt: skip


def topic_has(bootstrap: str, command_config: str | None, topic: str, count: int) -> Check:
    """``topic`` has exactly ``count`` partitions."""
    return Check(
        ShellCheck.TOPIC_PARTITIONS,
        (topic, str(count)),
        f"{topic} has {count} partitions",
        kafka_run(bootstrap, command_config, "kafka-topics", "--describe", "--topic", topic),
    )


def groups_assigned(
    bootstrap: str,
    command_config: str | None,
    topic: str,
    to: int,
    groups: Sequence[str],
    timeout: int,
) -> Check:
    """Every group with members owns the ``to`` partitions of ``topic`` (waits up to
    ``timeout``: a consumer sees new partitions at its next metadata refresh)."""
    return Check(
        ShellCheck.WAIT_ASSIGNED,
        (str(timeout), topic, str(to), *groups),
        f"every group with members owns the {to} partitions of {topic} "
        f"(waits up to {timeout} s)",
        kafka_run(bootstrap, command_config, "kafka-consumer-groups", "--describe",
                  *each_group(groups)),
    )  # fmt: skip


def new_partitions(partitions: int, to: int) -> str:
    """The partitions an alter from ``partitions`` to ``to`` adds, as the steps name them."""
    if to - partitions == 1:
        return f"partition {partitions}"
    return f"partitions {partitions}-{to - 1}"


def group_holds_offsets(
    bootstrap: str,
    command_config: str | None,
    topic: str,
    counts: tuple[int, int],
    group: str,
    timeout: int,
    accepted: bool = False,
) -> Check:
    """``group`` holds an offset on each partition an alter of ``topic`` from ``counts[0]``
    to ``counts[1]`` adds: committed at the start while it has no members, else by its
    members (waits up to ``timeout``); ``accepted``: --accept-loss-risk said so."""
    partitions, to = counts
    new = new_partitions(partitions, to)
    spec = f"{topic}:{','.join(str(p) for p in range(partitions, to))}"
    text = (
        f"{group} holds an offset on {new} of {topic}: committed here while it has no "
        f"members, else by its members (waits up to {timeout} s)"
    )
    if accepted:
        text += "; if they commit none, its risk is accepted (--accept-loss-risk)"
    mode = "accepted" if accepted else "required"
    return Check(
        ShellCheck.ENSURE_OFFSETS,
        (str(timeout), topic, str(partitions), str(to), mode, group),
        text,
        kafka_run(bootstrap, command_config, "kafka-consumer-groups", "--reset-offsets",
                  "--group", group, "--topic", spec, "--to-earliest", "--execute"),
    )  # fmt: skip


def kafka(f: RunbookFacts, tool: str, *args: str, config_flag: str = "--command-config") -> Run:
    return kafka_run(f.bootstrap, f.command_config, tool, *args, config_flag=config_flag)


def migcheck(f: RunbookFacts, command: str, *args: str) -> Run:
    extra = ("--command-config", f.command_config) if f.command_config else ()
    return Run(("migcheck", command, "--bootstrap-server", f.bootstrap, *extra, *args))


def group_tool(f: RunbookFacts, *args: str) -> Run:
    tool = "kafka-streams-groups" if f.protocol is Protocol.STREAMS else "kafka-consumer-groups"
    return kafka(f, tool, "--describe", "--group", f.app_id, *args)


def prechecks(f: RunbookFacts) -> Step:
    return Step(
        "Pre-checks",
        f"Record today's end offsets of {_the_topics(f)} for the final check.",
        tuple(
            Check(
                ShellCheck.RECORD_OFFSETS,
                (t, f"{t}.end-offsets"),
                f"record the end offsets of {t}",
                kafka(f, "kafka-get-offsets", "--topic", t, "--time", "-1"),
            )
            for t in f.topics
        ),
        role=StepRole.PRECHECKS,
    )


def _the_topics(f: RunbookFacts) -> str:
    """The topic, or the set's topics as a sentence names them."""
    return "the topic" if not f.also else listing(f.topics)


def history_check(f: RunbookFacts) -> Check:
    """Every source still starts at offset 0: read before anything changes, again right
    before the reprocess, and in the dry run (model/history.py says why)."""
    sources = f.sources or (f.topic,)
    said = "every source still holds its whole history: every log start offset is 0"
    if f.accept_lost_history:
        said += f" (or, accepted with {ACCEPT_LOST_HISTORY}, said so)"
    return Check(
        ShellCheck.HISTORY_INTACT,
        ("accepted" if f.accept_lost_history else "required", *sources),
        f"{said}: {', '.join(sources)}",
        kafka(f, "kafka-get-offsets", "--topic-partitions", ",".join(sources), "--time", "-2"),
        dry_run=True,
    )


def reprocesses(steps: Iterable[Step]) -> bool:
    """Whether a procedure rebuilds the app's state from its sources (a step of role
    REPROCESS): only then does a source's lost history matter."""
    return any(s.role is StepRole.REPROCESS for s in steps)


def guard_history(f: RunbookFacts, steps: list[Step]) -> list[Step]:
    """A procedure that reprocesses checks every source's history in its pre-checks and
    again first thing in its REPROCESS step; one that rebuilds no state (an alter that
    splits none) has nothing to lose and is left as it is."""
    if not reprocesses(steps):
        return steps
    check = history_check(f)
    return [_checking_first(s, check) for s in steps]


def _checking_first(step: Step, check: Check) -> Step:
    if step.role is StepRole.PRECHECKS:
        return replace(step, why=f"{HISTORY_CHECK_WHY} {step.why}", actions=(check, *step.actions))
    if step.role is StepRole.REPROCESS:
        return replace(step, actions=(check, *step.actions))
    return step


def group_is_empty(f: RunbookFacts, text: str) -> Check:
    return Check(
        ShellCheck.GROUP_IS_EMPTY,
        (str(f.group_timeout), f.app_id),
        text,
        group_tool(f, "--members"),
    )


def stop(f: RunbookFacts, why: str, what: str = "") -> Step:
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


def copy_input(f: RunbookFacts, at: int = 0) -> Run:
    """migcheck copy of the input (the set's ``at``-th topic, ``f.topic`` first) into its
    new topic, resumable from its checkpoint (one per topic of a set): the placement by
    the producers' partitioner, which the copy detects from each topic's own records."""
    w = f.widened[at]
    checkpoint = "@copy.checkpoint" if at == 0 else f"@copy-{at + 1}.checkpoint"
    return migcheck(
        f, "copy", "--topic", w.topic, "--into", w.new_topic, "--checkpoint", checkpoint
    )


def switch_producers(f: RunbookFacts, then: str = "") -> Manual:
    """Every producer of the input pointed at its copy (``then``: what they do next); of
    a set, every topic's at once."""
    pairs = listing([f"{w.topic} to {w.new_topic}" for w in f.widened])
    return Manual(f"Switch every producer of {pairs}{then}.")


def new_topic_step(f: RunbookFacts) -> Step:
    copies = [copy_input(f, at) for at in range(len(f.widened))]
    created = listing([w.new_topic for w in f.widened])
    moved: tuple[Action, ...] = (
        _groups_moved(f, copies) if f.group_reads else (*copies, switch_producers(f), *copies)
    )
    return Step(
        f"Create {created} and copy the history into it"
        if not f.also
        else f"Create {created}, and copy each topic's history into its copy",
        (f"{f.strategy_reason} " if f.strategy_reason else "")
        + f"{_copy_said(f)} Its checkpoint makes the catch-up copy take only what arrived "
        f"since, never a record twice.{_GROUPS_MOVED if f.group_reads else ''}",
        (
            *(ensure_topic(f, w.new_topic, f.to, w.topic, w.configs) for w in f.widened),
            *moved,
        ),
        role=StepRole.CHANGE,
    )


#: How plain groups move to the copies offline, said once.
_GROUPS_MOVED = (
    " The plain groups (--group) move with it, each to the copy of every topic it reads, "
    "at a quiet point: the producers pause, each group reads its topics to the end, the "
    "catch-up copy then holds every record, and each group, its consumers stopped, is "
    "committed at its copy's end. Started on the copy after the switch, it reads on from "
    "the first record written there: nothing twice, nothing skipped, each key in order."
)


def _groups_moved(f: RunbookFacts, copies: list[Run]) -> tuple[Action, ...]:
    """The copies caught up at a quiet point, and each plain group moved to the copies of
    the topics it reads (``f.group_reads``): drained, stopped, committed at the copy's end,
    then started there once the producers switch."""
    pause = Manual(
        f"Pause every producer of {listing(f.topics)}, and keep them paused until they switch."
    )
    switched = switch_producers(f, ", and resume them")
    return (*copies, pause, *copies, *groups_at_copy_end(f), switched, *groups_started(f))


def _group_ids(f: RunbookFacts) -> list[str]:
    return list(dict.fromkeys(g for g, _ in f.group_reads))


def groups_at_copy_end(f: RunbookFacts) -> tuple[Action, ...]:
    """Each plain group of ``f.group_reads``, its producers paused and its copies whole,
    drained on the topics it reads, stopped, and committed at each copy's end: where it
    stands there (none when no group moves)."""
    if not f.group_reads:
        return ()
    copy_of = {w.topic: w.new_topic for w in f.widened}
    drained = (
        groups_drained(f.bootstrap, f.command_config, topic, readers, f.lag_timeout)
        for topic, readers in _readers(f).items()
    )
    stopped = (
        Check(
            ShellCheck.GROUP_IS_EMPTY,
            (str(f.group_timeout), group),
            f"the group {group} has no members (waits up to {f.group_timeout} s)",
            kafka(f, "kafka-consumer-groups", "--describe", "--group", group, "--state"),
        )
        for group in _group_ids(f)
    )
    committed = (
        Check(
            ShellCheck.COMMIT_AT_END,
            (group, copy_of[topic], str(f.to)),
            f"{group} holds the end of every partition of {copy_of[topic]}",
            kafka(f, "kafka-consumer-groups", "--reset-offsets", "--group", group, "--topic",
                  copy_of[topic], "--to-latest", "--execute"),
        )
        for group, topic in f.group_reads
    )  # fmt: skip
    stop = Manual(f"Stop every consumer of {listing([f'group {g}' for g in _group_ids(f)])}.")
    return (*drained, stop, *stopped, *committed)


def groups_started(f: RunbookFacts) -> tuple[Manual, ...]:
    """Each plain group's consumers started on its copies, once the producers switched."""
    copy_of = {w.topic: w.new_topic for w in f.widened}
    return tuple(
        Manual(
            f"Start the consumers of group {group} on "
            + listing([f"{copy_of[t]} (instead of {t})" for g, t in f.group_reads if g == group])
            + ": they read on from where they stopped."
        )
        for group in _group_ids(f)
    )


def _readers(f: RunbookFacts) -> dict[str, list[str]]:
    """The plain groups of ``f.group_reads`` by each topic they read, in order."""
    readers: dict[str, list[str]] = {}
    for group, topic in f.group_reads:
        readers.setdefault(topic, []).append(group)
    return readers


def _copy_said(f: RunbookFacts) -> str:
    """What the input's copy is and proves, as each route that copies it says."""
    each = (
        ""
        if not f.also
        else (
            " Every topic of the set is copied, each by its own producers' partitioner, so "
            "that the sides of a join stay co-partitioned; the producers switch together."
        )
    )
    return (
        f"{f.new_topic} gets {f.topic}'s configs and {f.to} partitions; migcheck copy puts "
        "each record where the producers' partitioner sends its key under the new count, in "
        f"order per key, and verifies records per key on both sides.{each}"
    )


def ensure_topic(
    f: RunbookFacts, topic: str, count: int, like: str, configs: Mapping[str, str]
) -> Check:
    """``topic`` created once with ``count`` partitions, ``configs`` and the replication
    factor of ``like``; a re-run finds it and checks its count."""
    return Check(
        ShellCheck.ENSURE_TOPIC,
        (topic, str(count), like, *[f"{k}={v}" for k, v in configs.items()]),
        f"{topic} exists with {count} partitions (created like {like}, with the "
        f"replication factor of {like})",
        kafka(
            f,
            "kafka-topics",
            "--create",
            "--topic",
            topic,
            "--partitions",
            str(count),
            *[a for k, v in configs.items() for a in ("--config", f"{k}={v}")],
        ),
    )


def alter_step(f: RunbookFacts, why: str, split: str = "", resume: Manual | None = None) -> Step:
    """The in-place alter; ``why`` unless --strategy auto said why, and what splits when
    --accept-split-history wrote it anyway (``split`` adds how).  ``resume``: the
    producers' resume that ends it, where they were paused before it (a moved state)."""
    text = f.strategy_reason or why
    if f.split_keys is not None:
        text += f" This splits the history of {f.split_keys} keys (--accept-split-history)."
        text += f" {split}" if split else ""
    alters = tuple(alter_check(f.bootstrap, f.command_config, w.topic, f.to) for w in f.widened)
    actions: tuple[Action, ...] = (
        _groups_in_order(f, alters, resume)
        if f.group_reads
        else (*alters, *([resume] if resume else []))
    )
    return Step(
        f"Alter {listing(f.topics)} to {f.to} partitions in place",
        text + (_GROUPS_IN_ORDER if f.group_reads else ""),
        actions,
        role=StepRole.CHANGE,
    )


#: How plain groups keep per-key order through an alter in place, said once (the groups'
#: own runbook says each part at length: runbook/groups.py).
_GROUPS_IN_ORDER = (
    " The plain groups (--group) keep each key in order through it: the producers pause "
    "and each group reads its topics to the end, so no moved key's record waits in its old "
    "partition; after the alter each group with members owns the new partitions, and "
    "every group holds an offset on each (its start, committed here while it has no "
    "members), so none starts a new partition at latest; then the producers resume."
)


def _groups_in_order(
    f: RunbookFacts, alters: tuple[Check, ...], resume: Manual | None
) -> tuple[Action, ...]:
    """The alter with the plain groups kept in order (``f.group_reads``): paused,
    drained, altered, assigned, an offset held on every new partition, resumed (by
    ``resume`` where given)."""
    where, counts = (f.bootstrap, f.command_config), {w.topic: w.partitions for w in f.widened}
    readers = _readers(f)
    pause = Manual(
        f"Pause every producer of {listing(f.topics)}, and keep them paused until they resume."
    )
    drained = [groups_drained(*where, t, gs, f.lag_timeout) for t, gs in readers.items()]
    assigned = [
        check
        for t, gs in readers.items()
        for check in (topic_has(*where, t, f.to), groups_assigned(*where, t, f.to, gs,
                                                                  f.assign_timeout))
    ]  # fmt: skip
    held = [
        group_holds_offsets(*where, t, (counts[t], f.to), g, f.commit_timeout)
        for g, t in f.group_reads
    ]
    resume = resume or Manual(
        f"Resume every producer of {listing(f.topics)}: restart them, so that they fetch the "
        "new count at once."
    )
    return (pause, *drained, *alters, *assigned, *held, resume)


def app_is_healthy(f: RunbookFacts) -> Check:
    """migcheck app on the restarted app: the script reads its JSON report (the ``health``
    list, empty when every internal topic matches its sources), never its prose; a person
    reads the text report, which says the same in a sentence."""
    topics = [a for t in f.targets for a in ("--topic", t)]
    app = migcheck(f, "app", "--application-id", f.app_id, *topics, "--to", str(f.to))
    return Check(
        ShellCheck.APP_IS_HEALTHY,
        (*app.argv[1:], "--format", "json"),
        "migcheck app finds the app healthy (every internal topic matches its sources) "
        "and exits 0 (verdict SAFE)",
        app,
    )


def wipe_state(
    f: RunbookFacts,
    manual: str,
    why: str,
    path: str | None = None,
    role: StepRole | None = None,
) -> Step:
    """The local state deleted on every instance (``manual`` says where and the app's own
    call that does it), and by the script when the state directory was given: ``path``,
    else the framework's ``<state dir>/<application id>``.  ``role`` REPROCESS where the
    wipe is what makes the app rebuild its state (Quix Streams, Faust)."""
    actions: list[Action] = [Manual(manual)]
    if f.state_dir:
        actions.append(Run(("rm", "-rf", "--", path or f"{f.state_dir}/{f.app_id}")))
    return Step("Wipe the local state", why, tuple(actions), destructive=True, role=role)


def internal_topics_back(f: RunbookFacts, said: str) -> Check:
    """The restarted app's internal topics exist with their counts (``said``: what they
    are, before the list)."""
    internal = [f"{t}={n}" for t, n in sorted(f.expected_internal.items())]
    return Check(
        ShellCheck.WAIT_INTERNAL_TOPICS,
        tuple(internal),
        said + ", ".join(internal),
        kafka(f, "kafka-topics", "--describe", "--topic", ",".join(f.expected_internal)),
    )


#: Why an app restarted on a copy must read committed records only (each framework names
#: its own setting): a copy killed mid-transaction and resumed leaves that transaction's
#: records in the new topic, aborted, and a consumer at read_uncommitted reads them.
READ_COMMITTED_WHY = (
    "It must read committed records only: a copy killed and resumed leaves the records of "
    "its aborted transactions in the new topic, and a consumer reading uncommitted ones "
    "would process them as well (twice, for every record the resumed copy wrote again)."
)


def restart(f: RunbookFacts, why: str, start: str, topics: Check | None) -> Step:
    """The app started on the target (``start`` says how), its internal topics back
    (``topics``), its lag drained, and migcheck app finding it healthy."""
    return Step(
        f"Restart the application on {listing(f.targets)}",
        why,
        (
            Manual(start),
            *([topics] if topics else []),
            *(
                Check(
                    ShellCheck.WAIT_LAG_ZERO,
                    (str(f.lag_timeout), t, f.app_id),
                    f"the group's lag on {t} drains to 0 (waits up to {f.lag_timeout} s)",
                    group_tool(f, "--offsets"),
                )
                for t in f.targets
            ),
            app_is_healthy(f),
        ),
    )


def commit_start(f: RunbookFacts, first: int, why: str) -> Step:
    """The group's offset on each partition of the target from ``first`` on: committed at
    the partition's start where it has none (the group is empty); ``why`` says how the
    framework starts a partition without one."""
    span = "every partition" if first == 0 else f"partitions {first}-{f.to - 1}"
    return Step(
        f"Commit the start of {span} of {f.target} for the group",
        why,
        (
            Check(
                ShellCheck.ENSURE_OFFSETS,
                (str(f.group_timeout), f.target, str(first), str(f.to), "required", f.app_id),
                f"{f.app_id} holds an offset on {span} of {f.target}",
                to_earliest(f, f.target),
            ),
        ),
    )


def to_earliest(f: RunbookFacts, topic: str) -> Run:
    """Kafka's tool committing the start of every partition of ``topic`` for the group
    (only while the group has no members)."""
    return kafka(f, "kafka-consumer-groups", "--reset-offsets", "--group", f.app_id,
                 "--topic", topic, "--to-earliest", "--execute")  # fmt: skip


def delete_topic(f: RunbookFacts, topic: str) -> Run:
    return kafka(f, "kafka-topics", "--delete", "--if-exists", "--topic", topic)


def rewind(f: RunbookFacts, into: str) -> Step:
    """The group sent back to the start of the topic, to reprocess ``into`` a store that
    was emptied (the group is empty)."""
    return Step(
        f"Send the group back to the start of {f.topic}",
        f"The reprocess must read every record again into the {into}.",
        (to_earliest(f, f.topic),),
        destructive=True,
    )


def delete_changelogs(f: RunbookFacts, why: str) -> Step:
    """The app's changelogs (``f.internal``) deleted, so that the framework creates them
    again with the new count (``why``: why it would refuse them as they are)."""
    return Step(
        "Delete the changelogs",
        why,
        tuple(delete_topic(f, topic) for topic in f.internal),
        destructive=True,
    )


# --- moving the state (--strategy move-state) --------------------------------------


def _untouched(f: RunbookFacts) -> str:
    """What a refused move leaves as it was."""
    if not f.onto_copy:
        return "nothing has changed"
    return f"{f.topic} is as it was" if not f.also else f"{listing(f.topics)} are as they were"


def _the_change(f: RunbookFacts) -> str:
    """What the paused producers wait for: the alter, or their switch to the copy."""
    return f"the switch to {listing(f.targets)}" if f.onto_copy else "the alter"


def reading(f: RunbookFacts) -> str:
    """What the app restarted under the new id reads, as its start says it."""
    if f.copied:
        return "reading " + listing([f"{f.target_of(w)} in place of {w.topic}" for w in f.widened])
    return f"reading {listing(f.topics)}"


def moved_not_rebuilt(f: RunbookFacts) -> str:
    """Why the state is moved, with both sizes: what the changelogs hold against what a
    reprocess would read, and that nothing of the old app is deleted (the way back)."""
    held = sum(m.records for m in f.moves)
    stores = ", ".join(m.store for m in f.moves) or "none"
    return (
        f"The state is moved, not rebuilt: each store's changelog (stores: {stores}; at most "
        f"{held} records) is copied into {f.moved_app_id}'s at the new count, where a "
        f"reprocess would read the sources' whole history again ({f.history} records, of "
        f"which retention deleted up to {f.history_gone}); nothing is reprocessed. The app "
        f"restarts as application.id={f.moved_app_id}. Nothing of {f.app_id} is deleted: "
        "its changelogs, its group and its offsets stay as the way back."
    )


def _left_as_it_was(f: RunbookFacts) -> str:
    """Why the state moves onto a copy (--into): the input itself stays as it was."""
    if not f.also:
        return (
            f"{f.topic} is not altered: it is copied into {f.new_topic} at {f.to} partitions, "
            "where its producers switch and the app reads on, and stays as it was for its "
            "other readers, or as the way back."
        )
    pairs = listing([f"{w.topic} into {w.new_topic}" for w in f.widened])
    return (
        f"No topic of the set is altered: each is copied ({pairs}) at {f.to} partitions, "
        "where its producers switch and the app reads on, and stays as it was for its other "
        "readers, or as the way back."
    )


def drain(f: RunbookFacts, topics: Iterable[str]) -> Step:
    """The producers paused and the running app drained to lag 0 on ``topics`` (its
    sources and repartition topics), so that its state holds every record written."""
    topics = tuple(topics)
    sources = ", ".join(f.sources or (f.topic,))
    return Step(
        "Pause the producers and let the application drain",
        f"The moved state must hold every record the producers wrote, and the app must "
        f"stop exactly there: the producers stay paused until {_the_change(f)}, so that "
        + (
            f"the copy of {listing(f.topics)} ends at the barrier."
            if f.onto_copy
            else f"no record reaches {listing(f.topics)} under the old count after the barrier."
        ),
        (
            Manual(
                f"Pause every producer of {sources}, and keep them paused until "
                f"{_the_change(f)}; leave the application running."
            ),
            *(
                Check(
                    ShellCheck.WAIT_LAG_ZERO,
                    (str(f.lag_timeout), topic, f.app_id),
                    f"the group's lag on {topic} drains to 0 (waits up to {f.lag_timeout} s)",
                    group_tool(f, "--offsets"),
                )
                for topic in topics
            ),
        ),
    )


def record_barrier(f: RunbookFacts) -> Step:
    """The stopped app's committed offsets, which must be every source's end, and each
    changelog's end offsets, recorded before anything changes."""
    sources = f.sources or (f.topic,)
    return Step(
        "Record the barrier",
        "The app committed its offsets as it stopped: on every partition of every source "
        "they must be the end (lag 0), so that its changelogs hold the state of every record "
        f"before them. They are recorded in {f.barrier_file} in the work directory, where "
        f"{f.moved_app_id} starts from, with each changelog's end offsets.",
        (
            Check(
                ShellCheck.RECORD_BARRIER,
                (f.app_id, f.barrier_file, *sources),
                f"{f.app_id} committed the end of every partition of {', '.join(sources)} "
                f"(recorded in {f.barrier_file})",
                group_tool(f, "--offsets"),
            ),
            *(
                Check(
                    ShellCheck.RECORD_OFFSETS,
                    (m.changelog, f"{m.changelog}.end-offsets"),
                    f"record the end offsets of {m.changelog}",
                    kafka(f, "kafka-get-offsets", "--topic", m.changelog, "--time", "-1"),
                )
                for m in f.moves
            ),
        ),
    )


def move_changelogs(f: RunbookFacts, placed: str, refused: str) -> Step:
    """Each store's changelog copied into the new id's, created like it at the new count:
    before the alter, so that a refusal of the copy leaves everything as it was.
    ``placed``: where the framework writes each changelog record, so what the copy proves;
    ``refused``: what it refuses that only the records show."""
    actions: list[Action] = []
    for m in f.moves:
        proven = (
            ("--partitioner", m.partitioner.value, "--check-placement") if m.partitioner else ()
        )
        latest = ("--latest-per-key",) if m.latest_only else ()
        copy = migcheck(f, "copy", "--topic", m.changelog, "--into", m.into, *proven, *latest,
                        "--checkpoint", f"@{m.into}.checkpoint")  # fmt: skip
        actions += [
            ensure_topic(f, m.into, m.partitions, m.changelog, m.configs),
            replace(copy, via=ShellHelper.MOVING),
        ]
    return Step(
        f"Move the state into {f.moved_app_id}'s changelogs",
        f"{moved_not_rebuilt(f)} {placed} The runbook detected that partitioner from each "
        "changelog's records as it was written, and refused where none placed them all "
        f"({refused}); migcheck copy checks it again against every record the changelog "
        "holds now and places by it (--partitioner with --check-placement: a record "
        "written since that it did not place refuses the copy before it writes; where a "
        "changelog held no keyed record then, it detects it from the records itself and "
        "refuses where none placed them all), puts each record where it places the store "
        "key under the new count, keeping its timestamp and headers, exactly once, and "
        "verifies every record per key. Of a changelog without "
        f"{VERSIONED_CHANGELOG_CONFIG} it copies only each key's latest record "
        "(--latest-per-key: a key-value store restores no more, and a key whose latest is "
        "a tombstone is left out); one with it, as Kafka Streams creates a versioned "
        "store's, is copied whole, every version. Its checkpoint makes a killed copy "
        "resume. It "
        "comes before "
        f"{_the_change(f)}: a copy refused or not verified here stops the script in one "
        f"FAILED line, {_untouched(f)}, "
        "and the app restarts as it was.",
        tuple(actions),
    )


def alter_and_resume(f: RunbookFacts) -> Step:
    """The input altered once the state has moved, and its producers resumed then."""
    resume = Manual(
        f"Resume the producers of {', '.join(f.sources or (f.topic,))}: restart them, so "
        "that they fetch the new count at once (a producer kept running learns it only at "
        "its next metadata refresh, metadata.max.age.ms, and until then sends a moved "
        "key's records to its old partition)."
    )
    return alter_step(
        f,
        "The state has moved, so the input can take the new count; the app stays down "
        "until its new id's offsets are committed.",
        resume=resume,
    )


def commit_barrier(f: RunbookFacts) -> Step:
    """The new id's group offsets: the barrier on the old partitions, 0 on the new ones,
    with Kafka's offsets tool (never the streams reset tool, which deletes internal
    topics)."""
    added = listing([f"partitions {w.partitions}-{f.to - 1} of {w.topic}" for w in f.widened])
    return Step(
        f"Commit {f.moved_app_id}'s offsets at the barrier",
        f"{f.moved_app_id} reads on from the barrier: each partition that "
        f"{listing(f.topics)} had at its offset in {f.barrier_file}, each new partition from 0 "
        "(the producers wrote there only after the alter). kafka-consumer-groups commits "
        "them from a file (topic,partition,offset), while the new group has no members; "
        f"never the streams reset tool, which deletes internal topics.{_streams_join(f)}",
        (
            _commit_offsets(
                f, f.barrier_file, f.topics,
                f"{f.moved_app_id} holds the barrier's offsets, and 0 on {added}",
            ),
        ),
    )  # fmt: skip


def _commit_offsets(f: RunbookFacts, recorded: str, topics: Iterable[str], said: str) -> Check:
    """The new id's offsets committed from ``recorded``'s plan with Kafka's offsets tool
    (never the streams reset tool, which deletes internal topics), and read back, by the
    script's commit_barrier: the barrier in place (each of ``topics``' new partitions
    from 0), or the copy's ends."""
    return Check(
        ShellCheck.COMMIT_BARRIER,
        (f.moved_app_id, recorded, str(f.to), *topics),
        said,
        kafka(f, "kafka-consumer-groups", "--reset-offsets", "--group", f.moved_app_id,
              "--from-file", f"@{recorded}.commit", "--execute"),
    )  # fmt: skip


def copy_at_barrier(f: RunbookFacts) -> Step:
    """The input (each topic of a set) copied into its copy while its producers are paused
    at the barrier, before they switch to it: the route that leaves the input as it was
    (--into), for its other readers or as the way back."""
    copies = listing(f.targets)
    return Step(
        f"Create {f.new_topic} and copy the history of {f.topic} into it"
        if not f.also
        else f"Create {copies}, and copy each topic's history into its copy",
        f"{_left_as_it_was(f)} {_copy_said(f)} Its checkpoint makes a killed copy resume. "
        "The producers are still paused, so the copy ends at the barrier.",
        (
            *(
                a
                for at, w in enumerate(f.widened)
                for a in (ensure_topic(f, w.new_topic, f.to, w.topic, w.configs),
                          copy_input(f, at))
            ),
            *groups_at_copy_end(f),
        ),
        role=StepRole.CHANGE,
    )  # fmt: skip


def copies_as_barrier(f: RunbookFacts) -> Step:
    """Each copy's ends recorded as the app's barrier in place of its topic's, before the
    producers switch to it: where the new id reads on."""
    return Step(
        f"Record the ends of {listing(f.targets)} as the barrier",
        f"The copy ends at the barrier: its end offsets are recorded in "
        f"{f.copy_barrier_file}, with the barrier of any other source, and "
        f"{f.moved_app_id} reads on from there.",
        tuple(_copy_barrier(f, at) for at in range(len(f.widened))),
    )


def _copy_barrier(f: RunbookFacts, at: int) -> Check:
    """The ``at``-th copy's ends recorded in place of its topic's barrier: the first from
    the app's barrier, each next one from the record so far (the script's
    record_copy_barrier reads one file and writes the other whole)."""
    w = f.widened[at]
    recorded = f.barrier_file if at == 0 else f.copy_barrier_file
    return Check(
        ShellCheck.RECORD_COPY_BARRIER,
        (recorded, w.topic, w.new_topic, str(f.to), f.copy_barrier_file),
        f"record the end offsets of {w.new_topic}, where the barrier of {w.topic} is "
        f"(in {f.copy_barrier_file})",
        kafka(f, "kafka-get-offsets", "--topic", w.new_topic, "--time", "-1"),
    )


def switch_and_resume(f: RunbookFacts) -> Step:
    """The producers switched to the copies and resumed once the state has moved."""
    others = [s for s in f.sources if s not in f.topics]
    also = f" and those of {', '.join(others)}" if others else ""
    copies = listing(f.targets)
    return Step(
        f"Switch the producers to {copies}",
        "The state has moved and the copy's ends are recorded, so the producers resume, "
        f"writing to {copies}; the app stays down until its new id's offsets are "
        "committed.",
        (switch_producers(f, f", and resume them{also}"), *groups_started(f)),
        role=StepRole.CHANGE,
    )


def commit_copy_barrier(f: RunbookFacts) -> Step:
    """The new id's group offsets on the copies at their recorded ends, and any other
    source at the barrier: committed by the script's commit_barrier, as the barrier in
    place is."""
    copies = listing(f.targets)
    return Step(
        f"Commit {f.moved_app_id}'s offsets at the ends of {copies}",
        f"{f.moved_app_id} reads {copies} on from the ends recorded in "
        f"{f.copy_barrier_file}: the copy holds the records of {listing(f.topics)} up to the "
        "barrier, whose state has moved, and the producers wrote there only after, so it "
        "reads none of the copied records again (nor those a killed copy left aborted). "
        "Committed as the barrier in place is: kafka-consumer-groups --from-file, while the "
        f"new group has no members.{_streams_join(f)}",
        (
            _commit_offsets(
                f, f.copy_barrier_file, f.targets,
                f"{f.moved_app_id} holds the recorded end offsets of every partition of "
                f"{copies}",
            ),
        ),
    )  # fmt: skip


def _streams_join(f: RunbookFacts) -> str:
    """How a streams-protocol app's new id keeps the offsets committed before it starts
    (proven on Kafka 4.3.1, fixtures/java/streams/FINDINGS.md); nothing for a classic one."""
    if f.protocol is not Protocol.STREAMS:
        return ""
    return (
        " On the streams protocol (KIP-1071) too: the commit makes the new id an empty "
        "classic group, and its first streams member's join converts that group into a "
        "streams group, keeping its offsets; kafka-consumer-groups also reads them back, "
        "which kafka-streams-groups cannot while the group is classic."
    )


def move_state_steps(
    f: RunbookFacts,
    *,
    stopped: Step,
    placed: str,
    refused: str,
    wipe: Step,
    restarted: Step,
    repartition: Iterable[str] = (),
) -> list[Step]:
    """The state moved, not rebuilt, in every framework's order: the app drains (its
    sources and ``repartition`` topics) and stops at a barrier (``stopped``), the barrier
    and its changelogs' ends are recorded, each changelog is copied into
    ``f.moved_app_id``'s at the new count (:func:`move_changelogs`: ``placed`` and
    ``refused`` say what the framework's records show), the input is altered and its
    producers resume, the new id's offsets are committed at the barrier, its local state
    is found empty (``wipe``) and the app restarts under it (``restarted``), restoring
    from the moved changelogs.  Onto a copy (``f.onto_copy``, --into) the input is copied
    at the barrier instead of altered, its producers switch to the copy and resume, and
    the new id reads on from the copy's ends.  Nothing is reprocessed (no step of role
    REPROCESS), and nothing of the old id is deleted: the way back."""
    moved = move_changelogs(f, placed, refused)
    change = (
        [
            copy_at_barrier(f),
            copies_as_barrier(f),
            moved,
            switch_and_resume(f),
            commit_copy_barrier(f),
        ]
        if f.onto_copy
        else [moved, alter_and_resume(f), commit_barrier(f)]
    )
    return [
        prechecks(f),
        drain(f, [*(f.sources or (f.topic,)), *repartition]),
        stopped,
        record_barrier(f),
        *change,
        wipe,
        restarted,
    ]
