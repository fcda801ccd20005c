"""The ordering-safe runbook for plain consumer groups: what to run, in order, to widen a
topic that consumers read in per-key order.

Pure: :class:`GroupsFacts` in, a list of :class:`Step` out, written out by
:mod:`migcheck.report.runbook` as the Streams runbook is.

Why this order.  Kafka keeps a key's records in order within a partition only.  After
an alter, a moved key's new records go to its new partition while its older records
may still wait, unread, in the old one; a consumer that owns both reads them in
whatever order its fetches come back, so the new can overtake the old.  With the
producers paused and every group's lag at 0 nothing waits anywhere, so the alter
splits no key's unread records.  The groups must then own the new partitions before
the producers resume: a consumer sees them only at its next metadata refresh
(``metadata.max.age.ms``, 5 min by default).

Why offsets before the resume.  A consumer that meets a partition with no committed
offset starts where ``auto.offset.reset`` says, ``latest`` by default in the Java client,
librdkafka and kafka-python: after every record already there, which it never reads.  A
group stopped during the change, or one whose members have not yet positioned on a new
partition, would skip the first records the resumed producers write there.  So before
the resume every group holds a committed offset on every new partition: a group with no
members gets the partitions' start (still offset 0: the producers are paused) committed
by Kafka's own tool, as an operator would; a group with members commits them itself
(auto-commit, within ``auto.commit.interval.ms``), and the runbook waits for that.  A
group whose members commit nothing stops the runbook, unless its risk was accepted
(``--accept-loss-risk``).
"""

from __future__ import annotations

from dataclasses import replace

from migcheck.errors import UsageError
from migcheck.model.runbook import (
    Check,
    GroupsFacts,
    Manual,
    Run,
    ShellCheck,
    Step,
    Strategy,
    check_name,
)
from migcheck.runbook.actions import (
    alter_check,
    group_holds_offsets,
    groups_assigned,
    groups_drained,
    kafka_run,
    new_partitions,
    topic_has,
)
from migcheck.runbook.online import MigrateCall, migrate_explained, migrate_step
from migcheck.untrusted import quoted


def _kafka(f: GroupsFacts, tool: str, *args: str) -> Run:
    return kafka_run(f.bootstrap, f.command_config, tool, *args)


def _describe(f: GroupsFacts) -> Run:
    """The groups' members, committed offsets, lag and assigned partitions, as a person
    checks them: kafka-consumer-groups lists assigned partitions even without an offset."""
    groups = [a for g in f.group_ids for a in ("--group", g)]
    return _kafka(f, "kafka-consumer-groups", "--describe", *groups)


def _names(f: GroupsFacts) -> str:
    return ", ".join(f.group_ids)


def steps(f: GroupsFacts) -> list[Step]:
    """The procedure: check, pause, drain, alter, wait for the assignment, hold an offset
    on every new partition, resume; a group id the steps cannot pass to Kafka's tools, or
    an --accept-loss-risk that names no group of the runbook, is refused (UsageError)."""
    hint = "; name the groups to serve with --group" if f.discovered else ""
    for group in f.group_ids:
        check_name("group id", group, hint=hint)
    for group in f.accept_loss_risk:
        if group not in f.group_ids:
            raise UsageError(
                f"--accept-loss-risk {quoted(group)} names no group of this runbook; its "
                f"groups: {', '.join(quoted(g) for g in f.group_ids)}"
            )
    if f.strategy is Strategy.ONLINE:
        return [_prechecks(f), _migrate(f)]
    return [
        _prechecks(f),
        _pause(f),
        _drain(f),
        _alter(f),
        _assigned(f),
        _offsets(f),
        _resume(f),
    ]


def _migrate(f: GroupsFacts) -> Step:
    """The online route: one ``migcheck migrate`` process runs every phase, asking at its
    own manual steps (the script's --yes answers them too)."""
    new_topic = f"{f.topic}-p{f.to}"
    groups = tuple(a for g in f.group_ids for a in ("--group", g))
    call = MigrateCall(
        f.bootstrap, f.command_config, ((f.topic, new_topic),), f.to, groups, f.tuning
    )
    return migrate_step(call, migrate_explained(f.topic, new_topic, _names(f)))


def _topic_has(f: GroupsFacts, count: int, text: str) -> Check:
    return replace(topic_has(f.bootstrap, f.command_config, f.topic, count), text=text)


def _prechecks(f: GroupsFacts) -> Step:
    return Step(
        "Pre-checks",
        f"{f.topic} must still have the {f.partitions} partitions this runbook was written "
        "for. Each group's members and lag, and the topic's end offsets, are recorded in the "
        "work directory: where every group stood before the change.",
        (
            _topic_has(f, f.partitions, f"{f.topic} has {f.partitions} partitions (< {f.to})"),
            Check(
                ShellCheck.GROUPS_LAG,
                (f.topic, "groups.before", *f.group_ids),
                f"the members and lag on {f.topic} of {_names(f)} (recorded)",
                _describe(f),
            ),
            Check(
                ShellCheck.RECORD_OFFSETS,
                (f.topic, f"{f.topic}.end-offsets"),
                f"record the end offsets of {f.topic}",
                _kafka(f, "kafka-get-offsets", "--topic", f.topic, "--time", "-1"),
            ),
        ),
    )


def _pause(f: GroupsFacts) -> Step:
    return Step(
        f"Pause every producer of {f.topic}",
        "After the alter a moved key's new records go to a new partition, which a consumer "
        "can read before the key's old records still waiting in the old partition. With "
        "nothing new arriving, every group can read everything before the alter, so no "
        "record of a moved key is left waiting when its records start to go elsewhere.",
        (Manual(f"Pause every producer of {f.topic}, and keep it paused until the last step."),),
    )


def _drain(f: GroupsFacts) -> Step:
    return Step(
        f"Wait until every group has read all of {f.topic}",
        "Lag 0 on every partition: each group has consumed and committed every record "
        f"written before the pause. Waits up to {f.lag_timeout} s (--lag-timeout). A group "
        "with lag and no members never drains: start its consumers.",
        (groups_drained(f.bootstrap, f.command_config, f.topic, f.group_ids, f.lag_timeout),),
    )


def _alter(f: GroupsFacts) -> Step:
    return Step(
        f"Alter {f.topic} to {f.to} partitions",
        "No record waits in any partition now, so no key leaves unread records behind when "
        "its new records start to go to its new partition. Kafka adds partitions and moves "
        "no record; run again, the step finds the count and does nothing.",
        (alter_check(f.bootstrap, f.command_config, f.topic, f.to),),
    )


def _assigned(f: GroupsFacts) -> Step:
    return Step(
        f"Wait until every group reads the {f.to} partitions",
        "A consumer sees new partitions at its next metadata refresh (metadata.max.age.ms, "
        "5 minutes by default), then its group rebalances. A record written to a new "
        "partition before its group owns it has no committed offset to start from: a "
        "consumer with auto.offset.reset=latest starts after it and never reads it. So "
        "every group with members must own all the partitions (and, next, hold an offset on "
        f"each) before the producers resume (waits up to {f.assign_timeout} s, "
        "--assign-timeout). A group with no members now "
        "is not waited for: the next step commits its offsets on the new partitions.",
        (
            _topic_has(f, f.to, f"{f.topic} has {f.to} partitions"),
            groups_assigned(
                f.bootstrap, f.command_config, f.topic, f.to, f.group_ids, f.assign_timeout
            ),
        ),
    )


def _offsets(f: GroupsFacts) -> Step:
    new, t = new_partitions(f.partitions, f.to), f.commit_timeout
    accepted = ""
    if f.accept_loss_risk:
        accepted = (
            f" Accepted (--accept-loss-risk) for {', '.join(f.accept_loss_risk)}: if its "
            "members commit none, the step says so and goes on."
        )
    return Step(
        f"Make every group hold an offset on {new} of {f.topic}",
        "A consumer that meets a partition with no committed offset starts where its "
        "auto.offset.reset says, latest by default (the Java client, librdkafka, "
        "kafka-python): after the records already there, which it never reads. The "
        "producers are still paused, so the new partitions are empty and their start is "
        "offset 0: once every group holds an offset there, it reads every record the "
        "producers write after the resume. For a group with no members when the step runs, "
        "the script commits the start of each new partition that lacks an offset, with "
        "Kafka's tool (below; Kafka allows it only while the group has no members), and "
        "checks it. A group with members commits them itself (auto-commit does within "
        "auto.commit.interval.ms, 5 s by default, of the assignment): the script waits up "
        f"to {t} s (--commit-timeout). If they commit none, it stops: stop that group's "
        "consumers and run it again (it then commits the offsets itself), or accept the "
        "risk (--accept-loss-risk GROUP)." + accepted,
        tuple(_holds_offsets(f, group) for group in f.group_ids),
    )


def _holds_offsets(f: GroupsFacts, group: str) -> Check:
    return group_holds_offsets(
        f.bootstrap, f.command_config, f.topic, (f.partitions, f.to), group, f.commit_timeout,
        group in f.accept_loss_risk,
    )  # fmt: skip


def _resume(f: GroupsFacts) -> Step:
    return Step(
        f"Resume the producers of {f.topic}",
        "Every group owns every partition and holds an offset on each new one, and no "
        "record of a moved key waits in its old partition: from now on its records arrive, "
        "in order, in its new one. A restarted "
        "producer fetches the new count at once; one kept running learns it only at its "
        "next metadata refresh (metadata.max.age.ms, 5 minutes by default), so resume it "
        "no sooner after the alter, or a moved key's first records still go to its old "
        "partition and can be read after its later ones.",
        (Manual(f"Resume every producer of {f.topic}."),),
    )
