"""``migcheck gate``: the proposals it reads, its verdicts, its rule codes, its acceptances.

Data only.  A proposal is one topic's change as a tool proposes it (a Terraform plan, a
Strimzi or Conduktor manifest, a kafka-gitops plan, ``--change``); the gate judges each
against the live cluster and its readers, and every reason it gives carries a rule code
from :data:`GATE_RULES`, documented in docs/rules.md under the code's own anchor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import NotRequired, TypedDict

from migcheck.model.header import Kind


class GateVerdict(StrEnum):
    """A change's verdict; :data:`SEVERITY` orders them, worst first."""

    DATA_LOSS = "DATA_LOSS"  # the tool deletes the topic (a replace, or a delete)
    CRASH = "CRASH"  # a stateful reader stops
    CORRUPT = "CORRUPT"  # a stateful reader runs on with split state
    STALL = "STALL"  # a reader waits and never makes progress
    LOSS_RISK = "LOSS_RISK"  # a reader may skip the first records of a new partition
    UNKNOWN = "UNKNOWN"  # a reader migcheck cannot judge
    ORDER = "ORDER"  # per-key order breaks for a reader with lag
    REFUSED = "REFUSED"  # the tool refuses the change: it never happens
    MOVES = "MOVES"  # keys move, no reader at risk
    SAFE = "SAFE"  # nothing moves


#: Worst first: app's order, a crash before any corruption.
SEVERITY: tuple[GateVerdict, ...] = tuple(GateVerdict)


def worst(verdicts: list[GateVerdict]) -> GateVerdict:
    """The worst of ``verdicts`` (SAFE when there are none)."""
    return min(verdicts, key=SEVERITY.index, default=GateVerdict.SAFE)


class SourceKind(StrEnum):
    """Where a proposal comes from."""

    TERRAFORM = "terraform"  # terraform (or tofu) show -json
    STRIMZI = "strimzi"  # a KafkaTopic manifest
    CONDUKTOR = "conduktor"  # a Conduktor kind: Topic resource
    KAFKA_GITOPS = "kafka-gitops"  # a kafka-gitops plan
    CHANGE = "change"  # --change TOPIC=N


@dataclass(frozen=True)
class Source:
    kind: SourceKind
    file: str | None  # None for --change
    address: str  # the resource address, the manifest's kind/name, or "--change"


@dataclass(frozen=True)
class Proposal:
    """One topic's change as its tool proposes it, before any look at the cluster."""

    topic: str
    #: the count the tool believes the topic has (Terraform's before, kafka-gitops'
    #: previousPartitions); None where the tool does not say (manifests, --change)
    before: int | None
    #: the proposed count; None when the tool deletes the topic without creating it
    after: int | None
    source: Source
    #: the tool deletes the topic (a replace, or a delete with or without a create):
    #: every record is lost whatever the counts
    destroys: bool = False
    #: why the tool destroys it, in its own words (Terraform's action_reason, the
    #: attribute in replace_paths)
    destroy_reason: str = ""
    #: the tool's own refusal when it refuses the change before the cluster is asked
    #: (kafka-gitops plans no decrease); a manifest's operator refusal needs the live count
    #: and is the gate's to find
    refused: str | None = None


class RuleCode(StrEnum):
    """Every rule the gate can cite, by what it flags; each code is written here alone, and
    :data:`GATE_RULES` says its verdict and title.  A code is never reused for another
    meaning."""

    REPLACED = "MC101"
    DELETED = "MC102"
    APP_CRASHES = "MC201"
    APP_SPLITS_STATE = "MC202"
    APP_STALLS = "MC203"
    REMEDY_LOSES_HISTORY = "MC204"
    MAY_SKIP_RECORDS = "MC301"
    CANNOT_JUDGE = "MC302"
    ORDER_BREAKS = "MC303"
    OPERATOR_REFUSES = "MC401"
    TOOL_REFUSES = "MC402"
    KEYS_MOVE = "MC501"
    TOO_MANY_MOVE = "MC502"
    DRIFT = "MC601"


@dataclass(frozen=True)
class Rule:
    """A rule code: what it flags, at which verdict; docs/rules.md#<code> explains it."""

    code: RuleCode
    verdict: GateVerdict
    title: str
    blocks: bool = True  # False: reported, never a reason to fail (drift, a MOVES)

    @property
    def anchor(self) -> str:
        """The rule's anchor in docs/rules.md."""
        return self.code.lower()


def _rules(*rules: Rule) -> Mapping[RuleCode, Rule]:
    return {r.code: r for r in rules}


#: Every rule the gate can cite, by code (a unit test holds it to :class:`RuleCode`).
GATE_RULES: Mapping[RuleCode, Rule] = _rules(
    Rule(RuleCode.REPLACED, GateVerdict.DATA_LOSS, "the topic is replaced (deleted and created)"),
    Rule(RuleCode.DELETED, GateVerdict.DATA_LOSS, "the topic is deleted"),
    Rule(RuleCode.APP_CRASHES, GateVerdict.CRASH, "a stateful app crashes on its internal topics"),
    Rule(
        RuleCode.APP_SPLITS_STATE,
        GateVerdict.CORRUPT,
        "a stateful app runs on with its state split",
    ),
    Rule(RuleCode.APP_STALLS, GateVerdict.STALL, "a stateful app's group stalls"),
    Rule(
        RuleCode.REMEDY_LOSES_HISTORY,
        GateVerdict.CORRUPT,
        "a stateful app's every remedy rebuilds its state from a trimmed history",
    ),
    Rule(
        RuleCode.MAY_SKIP_RECORDS,
        GateVerdict.LOSS_RISK,
        "a reader may skip a new partition's first records",
    ),
    Rule(RuleCode.CANNOT_JUDGE, GateVerdict.UNKNOWN, "a reader migcheck cannot judge"),
    Rule(RuleCode.ORDER_BREAKS, GateVerdict.ORDER, "per-key order breaks for a reader with lag"),
    Rule(
        RuleCode.OPERATOR_REFUSES, GateVerdict.REFUSED, "the operator refuses a partition decrease"
    ),
    Rule(RuleCode.TOOL_REFUSES, GateVerdict.REFUSED, "the tool refuses a partition decrease"),
    Rule(RuleCode.KEYS_MOVE, GateVerdict.MOVES, "keys change partition", blocks=False),
    Rule(
        RuleCode.TOO_MANY_MOVE,
        GateVerdict.MOVES,
        "more keys move than --max-moved-fraction allows",
    ),
    Rule(
        RuleCode.DRIFT,
        GateVerdict.SAFE,
        "the plan's count differs from the cluster's",
        blocks=False,
    ),
)


@dataclass(frozen=True)
class Acceptance:
    """One entry of ``--accept FILE``: a change accepted on purpose, with its reason."""

    topic: str
    to: int
    verdict: str  # a GateVerdict's value or a rule code
    reason: str
    expires: str | None = None  # an ISO date (YYYY-MM-DD): void from the day after


@dataclass(frozen=True)
class AcceptanceMatch:
    """How the acceptances meet one change: the one that covers it, or why none does."""

    accepted: bool
    acceptance: Acceptance | None  # the covering one, or the nearest stale one
    #: the fields of the nearest acceptance for this topic that differ from the change
    #: ("to", "verdict") or "expires" when it has run out; empty when accepted or when no
    #: acceptance names the topic
    stale: tuple[str, ...] = ()


#: Where the rule pages live, relative to the repository's root; a report links each
#: code as ``RULES_DOC#<anchor>``.
RULES_DOC = "docs/rules.md"


class RuleRef(TypedDict):
    code: RuleCode
    verdict: GateVerdict
    text: str  # this change's reason, in the words of what happens
    doc: str  # RULES_DOC#<anchor>


class GateSource(TypedDict):
    kind: SourceKind
    file: str | None
    address: str


class GateReader(TypedDict):
    kind: str  # a ReaderKind's value: kafka-streams, consumer-group, ...
    id: str
    verdict: GateVerdict
    reasons: list[str]
    rules: list[RuleCode]  # one per reason, in the order of its reasons
    #: a stateful app's co-partitioned groups holding the change's topic: the topics that
    #: must widen with it (migcheck app's ``together``); absent for other readers
    together: NotRequired[list[list[str]]]


class GateMoved(TypedDict):
    keys: int
    fraction: float  # of the topic's distinct keys
    records: int
    bytes: int
    exact: bool  # a full scan; False: a sample's estimate


class GateAcceptance(TypedDict):
    topic: str
    to: int
    verdict: str
    reason: str
    expires: str | None
    stale: list[str]  # the fields that differ from the change ("to", "verdict", "expires")


#: One change as the gate judged it; "from" is the live count (a Python keyword, hence
#: the functional form).
GateChange = TypedDict(
    "GateChange",
    {
        "topic": str,
        "from": int | None,  # the cluster's count; None when the topic does not exist
        "to": int | None,  # None: the tool deletes the topic
        "source": GateSource,
        "verdict": GateVerdict,
        "blocking": bool,  # it fails the gate: a blocking rule, not accepted
        "rules": list[RuleRef],
        "accepted": bool,
        "acceptance": GateAcceptance | None,  # the covering acceptance, or the stale one
        "moved": GateMoved | None,  # None: nothing was measured (no growth, or unpredictable)
        "readers": list[GateReader],
        "next": list[str],  # the commands that do it safely, real ids filled in
    },
)


class GateReport(Kind):
    migcheck_version: str
    generated_at: str
    bootstrap_servers: str
    verdict: GateVerdict  # the worst change's
    passed: bool  # every change SAFE, a MOVES that does not block, or accepted
    changes: list[GateChange]
    notes: list[str]
