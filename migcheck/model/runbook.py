"""The runbook as data: the facts found on the cluster and the ordered steps built from them.

:mod:`migcheck.streams.steps` builds the steps (pure rules); :mod:`migcheck.report.runbook`
writes them as Markdown for a change ticket and as a re-runnable shell script.  They
meet here so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

NEW_TOPIC = "new-topic"
IN_PLACE = "in-place"


@dataclass(frozen=True)
class RunbookFacts:
    """Everything the steps name, found on the cluster when the runbook was written."""

    app_id: str
    bootstrap: str
    command_config: str | None
    topic: str
    partitions: int  # the topic's count today
    to: int
    new_topic: str
    strategy: str  # NEW_TOPIC or IN_PLACE
    protocol: str  # "classic" or "streams"
    internal: tuple[str, ...]  # the internal topics the reset deletes
    expected_internal: Mapping[str, int]  # internal topic -> its count after the restart
    history_lost: tuple[str, ...] = ()  # source topics whose log start offset is above 0
    state_dir: str | None = None
    verdict: str = "SAFE"
    split_keys: int | None = None  # in-place on a stateful app: keys whose history splits
    members: int = 0
    configs: Mapping[str, str] = field(default_factory=dict)

    @property
    def target(self) -> str:
        """The topic the app reads after the change."""
        return self.new_topic if self.strategy == NEW_TOPIC else self.topic


class ShellCheck(StrEnum):
    """The script's check functions (migcheck/report/runbook_prelude.sh), one per member.

    Steps name a function through this enum, not a string, so a typo fails where the
    runbook is written, not where an operator runs it; a unit test proves each member is
    defined in the prelude.
    """

    HISTORY_INTACT = "history_intact"
    RECORD_OFFSETS = "record_offsets"
    GROUP_IS_EMPTY = "group_is_empty"
    ENSURE_TOPIC = "ensure_topic"
    ENSURE_PARTITIONS = "ensure_partitions"
    WAIT_INTERNAL_TOPICS = "wait_internal_topics"
    WAIT_LAG_ZERO = "wait_lag_zero"
    APP_IS_HEALTHY = "app_is_healthy"


class ShellHelper(StrEnum):
    """The prelude's functions a command runs through (:attr:`Run.via`)."""

    KAFKA_TOOL = "kafka_tool"  # finds Kafka's tool: $MIGCHECK_KAFKA_TOOL, $KAFKA_HOME...
    RESET_TOOL = "reset_tool"  # the reset, naming only the internal topics still there


@dataclass(frozen=True)
class Run:
    """A command: a Kafka tool (``kafka-topics``...), ``migcheck``, or a plain one."""

    argv: tuple[str, ...]
    kafka_tool: bool = False
    #: The script runs it through this shell function of its own (which then calls the
    #: Kafka tool) where a re-run needs more care than the bare command gives.
    via: ShellHelper | None = None


@dataclass(frozen=True)
class Manual:
    """What only a person can do: the script waits for a confirmation with ``--execute``."""

    text: str


@dataclass(frozen=True)
class Check:
    """A read-only check the script runs with ``--execute``; it stops the script on failure.

    ``function`` is one of the script's shell functions; ``text`` says what it checks.
    """

    function: ShellCheck
    args: tuple[str, ...]
    text: str
    shown: Run | None = None  # the command a person runs to check it by hand (Markdown)


Action = Run | Manual | Check


@dataclass(frozen=True)
class Step:
    title: str
    why: str
    actions: tuple[Action, ...]
    #: Destructive (the reset, the state wipe): said in the Markdown.  The script runs
    #: every step once anyway: a marker records that it succeeded, and a re-run after a
    #: later failure resumes at the failed step instead of repeating earlier ones against
    #: a changed state (stopping the restarted app, resetting it, wiping its new state).
    destructive: bool = False
