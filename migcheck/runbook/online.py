"""The online route's one step: ``migcheck migrate`` runs every phase in one long-lived
process (the copy's follow, the shadow's start, the wait, the barrier, each reader's
move), asking at its own ``MANUAL:`` lines.  The plain groups' runbook and the stateful
apps' (Kafka Streams, ksqlDB) share it, so that one barrier moves every reader named.

What ``migrate`` does is explained here once (:func:`migrate_explained`,
:func:`migrate_in_brief`), for both runbooks' steps and the groups' header, its numbers
quoted from their homes (:data:`migcheck.model.migrate.QUIET_S`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from migcheck.model.history import ACCEPT_LOST_HISTORY
from migcheck.model.migrate import QUIET_S, MigrateTuning, ShadowState
from migcheck.model.runbook import Run, RunbookFacts, ShellHelper, Step, StepRole, check_name
from migcheck.words import listing


@dataclass(frozen=True)
class MigrateCall:
    """Where ``migcheck migrate`` runs, and which readers it moves (its options)."""

    bootstrap: str
    command_config: str | None
    topics: tuple[tuple[str, str], ...]  # each topic of the set and its new topic
    to: int
    readers: tuple[str, ...]  # --group, --application-id, --output-topic... and values
    tuning: MigrateTuning


def migrate_step(call: MigrateCall, why: str) -> Step:
    """The step that runs ``migcheck migrate``, its checkpoint in the work directory; the
    script's --yes is passed on (ShellHelper.ANSWERING)."""
    extra = ("--command-config", call.command_config) if call.command_config else ()
    (topic, new_topic), *_ = call.topics
    named = len(call.topics) == 1 and new_topic != f"{topic}-p{call.to}"
    into = ("--into", new_topic) if named else ()  # a set's are each <topic>-p<to>
    checkpoint = f"@{new_topic}.migrate.json"  # in the work directory
    argv = ("migcheck", "migrate", "--bootstrap-server", call.bootstrap, *extra,
            *(a for t, _ in call.topics for a in ("--topic", t)), "--to", str(call.to), *into,
            *call.readers, *call.tuning.args(), "--checkpoint", checkpoint)  # fmt: skip
    return Step(MIGRATE_TITLE, why, (Run(argv, via=ShellHelper.ANSWERING),))


#: The online step's title: an online procedure ends with it (``commands/runbook``'s
#: several apps put each one's other steps before the one migrate of them all).
MIGRATE_TITLE = "Migrate online"


def app_migrate_step(f: RunbookFacts, shadow: str) -> Step:
    """An app's online step: its shadow (``shadow``: how the framework's is started, in
    words) rebuilds its state on the new topic; at the barrier it takes over, and the
    app's downstream groups and the topic's plain groups move with it."""
    for group in (*f.downstream, *f.groups, *f.left):
        check_name("group id", group)
    for topic in (*f.outputs, *(o for p in f.peers for o in p.outputs)):
        check_name("output topic", topic)
    readers = (
        *_apps(f),
        *(a for g in f.downstream for a in ("--downstream-group", g)),
        *(a for g in f.groups for a in ("--group", g)),
        *(a for g in f.left for a in ("--leave-group", g)),
        *((ACCEPT_LOST_HISTORY,) if f.accept_lost_history else ()),
        *(("--shadow-state", f.shadow_state.value) if f.shadow_state else ()),
    )  # fmt: skip
    pairs = tuple((w.topic, w.new_topic) for w in f.widened)
    call = MigrateCall(f.bootstrap, f.command_config, pairs, f.to, readers, f.tuning)
    sinks = ", ".join((*f.outputs, *(o for p in f.peers for o in p.outputs))) or "none"
    moved = f.shadow_state is ShadowState.MOVE
    topics, news = listing([t for t, _ in pairs]), listing([n for _, n in pairs])
    if f.peers:
        shadow += f"; then a shadow of each other app ({listing([p.app_id for p in f.peers])})"
    why = migrate_explained(topics, news, Shadow(f.to, sinks, shadow, moved))
    step = migrate_step(call, why)
    return step if moved else replace(step, role=StepRole.REPROCESS)  # the shadow's rebuild


def _apps(f: RunbookFacts) -> tuple[str, ...]:
    """migrate's options for the apps it moves: one app's outputs by --output-topic
    ('' when it writes none); several apps each by --topology ID=FILE, whose sinks are
    its outputs (migrate takes no --output-topic with several).  Each peer's id was
    checked when its own runbook was written."""
    if not f.peers:
        outputs = [a for o in f.outputs for a in ("--output-topic", o)] or ["--output-topic", ""]
        return ("--application-id", f.app_id, *outputs)
    apps = (
        (f.app_id, f.topology_file or ""),
        *((p.app_id, p.topology_file or "") for p in f.peers),
    )
    return tuple(
        a for app, file in apps for a in ("--application-id", app, "--topology", f"{app}={file}")
    )


def shadow_moved(f: RunbookFacts) -> str:
    """What an online runbook whose shadow is seeded with moved state says at its top."""
    return (
        f"{f.app_id}'s sources no longer hold their whole history and every store can "
        f"move, so migcheck migrate runs with --shadow-state {ShadowState.MOVE}: the "
        "shadow's state is moved from the app's changelogs at the barrier, each one's "
        "partitioner proven from its records at migrate's start (refused there, before any "
        "cut-over, where none placed them all), not rebuilt from the new topic, which "
        "would miss what retention deleted."
    )


@dataclass(frozen=True)
class Shadow:
    """An app's shadow, as the explanation names it: the new count (its outputs' shadows
    are ``<output>-p<to>``), the app's outputs in words, and how it is started."""

    to: int
    sinks: str
    start: str
    moved: bool = False  # seeded with the old app's moved state, started after the switch


def migrate_explained(topic: str, new_topic: str, moved: str | Shadow) -> str:
    """What ``migrate`` does, in the runbook's words: for plain groups (``moved``: their
    names), or for an app and its shadow, with the plain groups that move with it."""
    if isinstance(moved, Shadow) and moved.moved:
        made = (
            f"migcheck migrate creates {new_topic} with {topic}'s configs and each output's "
            f"shadow (<output>-p{moved.to}, for {moved.sinks}), copies {topic} and follows "
            "it; the shadow is seeded with the app's moved state, so it starts only after the "
            "switch. Once the copy is close behind, it asks you to "
        )
        cut = _cut_over(new_topic, "")
        after = (
            "Then the app reads the old topic to the barrier and commits; each of its "
            "changelogs is moved into the shadow's at the new count, the shadow's offsets are "
            f"committed at the barrier, and it asks you to start {moved.start}: it restores "
            "the moved state and reads on from the barrier. Each downstream group waits for "
            "that restore and moves to the shadow's outputs, each plain group to the new "
            "topic. "
        )
    elif isinstance(moved, Shadow):
        made = (
            f"migcheck migrate creates {new_topic} with {topic}'s configs and each output's "
            f"shadow (<output>-p{moved.to}, for {moved.sinks}), copies {topic} and follows "
            f"it. It then asks you to start {moved.start}: it reads {new_topic} from the start "
            "and rebuilds the app's state while the app keeps serving; nothing downstream "
            "reads its replay. Once the copy and the shadow are close behind, it asks you to "
        )
        cut = _cut_over(
            new_topic, "waits for the shadow to reach lag 0 and records its outputs' ends, "
        )
        after = (
            "Then the app reads the old topic to the barrier, and each downstream group moves "
            "to the shadow's outputs at the recorded ends, each plain group to the new topic. "
        )
    else:
        made = (
            f"migcheck migrate creates {new_topic} with {topic}'s configs, copies {topic} into "
            f"it and follows it while {moved} go on reading. At the cut-over it asks you to "
        )
        cut = _cut_over(new_topic, "")
        after = "Then it moves each group to the new topic at the barrier's ends. "
    return (
        made + cut + after + "Its MANUAL: lines ask on this terminal; its checkpoint lets a "
        "stopped run go on (docs/runbooks.md, Online)."
    )


def _cut_over(new_topic: str, shadow: str) -> str:
    """The cut-over as the operator meets it: the barrier after :data:`QUIET_S` of quiet,
    the drain and the check (``shadow``: what the shadow adds), the switch."""
    return (
        f"pause the producers, takes the barrier once the topic's ends stay quiet for "
        f"{QUIET_S:g} s, drains and checks the copy, {shadow}and asks you to switch the "
        f"producers to {new_topic}: the pause lasts seconds (a cut-over that takes longer "
        "reverts and is asked again). "
    )


def migrate_in_brief(new_topic: str) -> str:
    """What ``migrate`` does, in one clause of the groups' runbook's header."""
    return (
        f"copy it into {new_topic} and follow it while they read (migcheck migrate), pause "
        "the producers for seconds at a barrier and switch them, then move each group to the "
        "new topic at the barrier's ends."
    )
