"""The online route's one step: ``migcheck migrate`` runs every phase in one long-lived
process (the copy's follow, the shadow's start, the wait, the barrier, each reader's
move), asking at its own ``MANUAL:`` lines.  The plain groups' runbook and the stateful
apps' (Kafka Streams, ksqlDB) share it, so that one barrier moves every reader named.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from migcheck.model.history import ACCEPT_LOST_HISTORY
from migcheck.model.migrate import MigrateTuning
from migcheck.model.runbook import Run, RunbookFacts, ShellHelper, Step, StepRole, check_name


@dataclass(frozen=True)
class MigrateCall:
    """Where ``migcheck migrate`` runs, and which readers it moves (its options)."""

    bootstrap: str
    command_config: str | None
    topic: str
    to: int
    new_topic: str
    readers: tuple[str, ...]  # --group, --application-id, --output-topic... and values
    tuning: MigrateTuning


def migrate_step(call: MigrateCall, why: str) -> Step:
    """The step that runs ``migcheck migrate``, its checkpoint in the work directory; the
    script's --yes is passed on (ShellHelper.ANSWERING)."""
    extra = ("--command-config", call.command_config) if call.command_config else ()
    into = ("--into", call.new_topic) if call.new_topic != f"{call.topic}-p{call.to}" else ()
    checkpoint = f"@{call.new_topic}.migrate.json"  # in the work directory
    argv = ("migcheck", "migrate", "--bootstrap-server", call.bootstrap, *extra, "--topic",
            call.topic, "--to", str(call.to), *into, *call.readers, *call.tuning.args(),
            "--checkpoint", checkpoint)  # fmt: skip
    return Step("Migrate online", why, (Run(argv, via=ShellHelper.ANSWERING),))


def app_migrate_step(f: RunbookFacts, shadow: str) -> Step:
    """An app's online step: its shadow (``shadow``: how the framework's is started, in
    words) rebuilds its state on the new topic; at the barrier it takes over, and the
    app's downstream groups and the topic's plain groups move with it."""
    for group in (*f.downstream, *f.groups):
        check_name("group id", group)
    for topic in f.outputs:
        check_name("output topic", topic)
    outputs = [a for o in f.outputs for a in ("--output-topic", o)] or ["--output-topic", ""]
    readers = (
        "--application-id", f.app_id, *outputs,
        *(a for g in f.downstream for a in ("--downstream-group", g)),
        *(a for g in f.groups for a in ("--group", g)),
        *((ACCEPT_LOST_HISTORY,) if f.accept_lost_history else ()),
    )  # fmt: skip
    call = MigrateCall(f.bootstrap, f.command_config, f.topic, f.to, f.new_topic, readers, f.tuning)
    sinks = ", ".join(f.outputs) or "none"
    why = (
        f"migcheck migrate creates {f.new_topic} with {f.topic}'s configs and each output's "
        f"shadow (<output>-p{f.to}, for {sinks}), copies {f.topic} and follows it. It then "
        f"asks you to start {shadow}: it reads {f.new_topic} from the start and rebuilds the "
        "app's state while the app keeps serving; nothing downstream reads its replay. Once "
        "the copy and the shadow are close behind, it asks you to pause the producers, takes "
        "the barrier once the topic's ends stay quiet for 2 s, drains and checks the copy, "
        "waits for the shadow to reach lag 0 and records its outputs' ends, and asks you to "
        f"switch the producers to {f.new_topic}: the pause lasts seconds (a cut-over that "
        "takes longer reverts and is asked again). Then the app reads the old topic to the "
        "barrier, and each downstream group moves to the shadow's outputs at the recorded "
        "ends, each plain group to the new topic. Its MANUAL: lines ask on this terminal; "
        "its checkpoint lets a stopped run go on (docs/runbooks.md, Online)."
    )
    return replace(migrate_step(call, why), role=StepRole.REPROCESS)  # the shadow's rebuild
