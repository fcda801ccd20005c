"""Each proposed change's verdict and rule codes, from what the cluster and its readers say.

Pure.  The order of the questions is the order of what really happens:

1. a tool that deletes the topic (a Terraform replace or delete) loses every record,
   whatever the counts: ``DATA_LOSS``;
2. a change its tool refuses never happens (kafka-gitops plans no decrease; Strimzi's
   operator and Kafka itself refuse one, Conduktor any change of the count): ``REFUSED``,
   in the tool's own words (:data:`REFUSALS`);
3. otherwise the change is its worst reader's verdict; when no reader is at risk, keys
   that move are ``MOVES`` (blocking only past ``--max-moved-fraction``), and a change
   that moves nothing is ``SAFE``.

Every reason cites a rule of :data:`~migcheck.model.gate.GATE_RULES`.  A Terraform plan whose
``before`` differs from the live count also says so (drift), without blocking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from migcheck.gate.inputs import (
    CONDUKTOR_DECREASE,
    KAFKA_DECREASE,
    STRIMZI_DECREASE,
    STRIMZI_DECREASE_REASON,
)
from migcheck.model.app import AppLevel
from migcheck.model.gate import (
    GATE_RULES,
    RULES_DOC,
    SEVERITY,
    GateMoved,
    GateReader,
    GateVerdict,
    Proposal,
    RuleCode,
    RuleRef,
    SourceKind,
    worst,
)
from migcheck.model.readers import ReaderJudgement, ReaderRisk

#: The plain readers' risks as gate rules.  Every risk has its entry (a unit test
#: enumerates them): APP belongs to a stateful app, judged by ``migcheck app``, so a plain
#: reader that carries it is one the gate cannot judge.
RISK_RULES: Mapping[ReaderRisk, RuleCode] = {
    ReaderRisk.LOSS_RISK: RuleCode.MAY_SKIP_RECORDS,
    ReaderRisk.UNKNOWN: RuleCode.CANNOT_JUDGE,
    ReaderRisk.ORDER: RuleCode.ORDER_BREAKS,
    ReaderRisk.APP: RuleCode.CANNOT_JUDGE,
}

#: A stateful app's verdict (``migcheck app``'s level) as a gate rule; SAFE cites none.
#: Every level has its entry (a unit test enumerates them).
APP_RULES: Mapping[AppLevel, RuleCode | None] = {
    AppLevel.CRASH: RuleCode.APP_CRASHES,
    AppLevel.CORRUPT: RuleCode.APP_SPLITS_STATE,
    AppLevel.SAFE: None,
}

#: The rule of whatever the gate cannot map: it blocks (the gate fails closed).
UNMAPPED = RuleCode.CANNOT_JUDGE


@dataclass(frozen=True)
class Refusal:
    """How a tool refuses a partition change, in its own words."""

    code: RuleCode
    words: str  # formatted with topic, before (the live count) and after
    any_change: bool = False  # it refuses an increase too, not only a decrease


#: Each tool that refuses a change itself; any other change reaches Kafka, which refuses a
#: decrease (KRaft's controller, checked against a 4.3 broker).
REFUSALS: Mapping[SourceKind, Refusal] = {
    SourceKind.STRIMZI: Refusal(
        RuleCode.OPERATOR_REFUSES,
        f"Strimzi's Topic Operator sets Ready=False, reason {STRIMZI_DECREASE_REASON}: "
        f"{STRIMZI_DECREASE} (the rest of the edit is still applied)",
    ),
    SourceKind.CONDUKTOR: Refusal(
        RuleCode.TOOL_REFUSES, f"Conduktor refuses it: {CONDUKTOR_DECREASE}", any_change=True
    ),
}
KAFKA_REFUSAL = Refusal(RuleCode.TOOL_REFUSES, f"Kafka refuses it: {KAFKA_DECREASE}")


def rule(code: RuleCode, text: str) -> RuleRef:
    """A reason citing ``code``, linked to its page."""
    r = GATE_RULES[code]
    return RuleRef(code=code, verdict=r.verdict, text=text, doc=f"{RULES_DOC}#{r.anchor}")


def plain_reader(kind: str, id: str, judgements: Sequence[ReaderJudgement]) -> GateReader:
    """A reader that keeps no state, by its judgements (none: SAFE).  A risk the gate
    has no rule for is cited as one it cannot judge, which blocks: never dropped."""
    codes = [RISK_RULES.get(j["risk"], UNMAPPED) for j in judgements]
    texts = [j["text"] for j in judgements]
    verdict = worst([GATE_RULES[c].verdict for c in codes])
    return GateReader(kind=kind, id=id, verdict=verdict, reasons=texts, rules=codes)


def app_reader(
    kind: str, id: str, level: str, reasons: Sequence[tuple[str, str]], stalls: bool = False
) -> GateReader:
    """A stateful app, by ``migcheck app``'s verdict for the change and its reasons, each a
    (level, text) pair cited with its own level's rule, or (a rule code, text) for a reason
    that is not a level's (what every remedy would lose: MC204).  A level the gate does not know (a
    newer report's, a typo) is UNKNOWN, which blocks: the app's makes the app a reader the
    gate cannot judge, a reason's cites :data:`UNMAPPED`.  ``stalls``: its first error, for
    certain, is the unchecked join's stall, so a CRASH cites MC203 (:func:`_app_rule`)."""
    texts = [text for _, text in reasons]
    try:
        code = _app_rule(level, stalls)
    except (ValueError, KeyError):
        why = f"migcheck app's verdict {level!r} is not one the gate knows, so it blocks"
        return unknown_reader(kind, id, why)
    if code is None:  # SAFE: its reasons, if any, cite no rule
        return GateReader(kind=kind, id=id, verdict=GateVerdict.SAFE, reasons=texts, rules=[])
    codes = [_reason_rule(reason_level, stalls) for reason_level, _ in reasons]
    return GateReader(
        kind=kind, id=id, verdict=GATE_RULES[code].verdict, reasons=texts, rules=codes
    )


def _app_rule(level: str, stalls: bool = False) -> RuleCode | None:
    """The rule an app's level cites (None: SAFE cites none); ValueError (or KeyError) for
    a level the gate does not know.  With ``stalls``, a CRASH is the unchecked join's:
    joined topics of unequal counts in a classic app without repartition topics, whose
    group stalls in REBALANCING until task.timeout.ms (FINDINGS.md, join-nochangelog)."""
    code = APP_RULES[AppLevel(level)]
    return RuleCode.APP_STALLS if stalls and code is RuleCode.APP_CRASHES else code


def _reason_rule(level: str, stalls: bool) -> RuleCode:
    """One reason's rule: its level's, or :data:`UNMAPPED` for a level that cites none or
    that the gate does not know (it blocks: a reason is never dropped).  A rule code is
    its own rule."""
    if isinstance(level, RuleCode):
        return level
    try:
        return _app_rule(level, stalls) or UNMAPPED
    except (ValueError, KeyError):
        return UNMAPPED


def unknown_reader(kind: str, id: str, why: str) -> GateReader:
    """A reader the gate could not judge: ``why`` says what settles it."""
    return GateReader(
        kind=kind, id=id, verdict=GATE_RULES[UNMAPPED].verdict, reasons=[why], rules=[UNMAPPED]
    )


@dataclass(frozen=True)
class Judged:
    """A change's verdict and the rules behind it."""

    verdict: GateVerdict
    rules: tuple[RuleRef, ...]

    @property
    def blocks(self) -> bool:
        """Whether it fails the gate unless accepted: any blocking rule cited."""
        return any(GATE_RULES[r["code"]].blocks for r in self.rules)


def judge(
    p: Proposal,
    live: int,
    readers: Sequence[GateReader],
    moved: GateMoved | None,
    max_moved_fraction: float | None,
) -> Judged:
    """The verdict of ``p`` against the live count."""
    return judge_without_readers(p, live) or judge_by_readers(
        p, live, readers, moved, max_moved_fraction
    )


def judge_without_readers(p: Proposal, live: int) -> Judged | None:
    """Decides the verdict of a change its readers cannot change: a destroyed topic, a
    refused change, no change of the count; None for a topic that grows (its readers
    decide: :func:`judge_by_readers`)."""
    drift = _drift(p, live)
    if p.destroys:
        code = RuleCode.DELETED if p.after is None else RuleCode.REPLACED
        return Judged(GateVerdict.DATA_LOSS, (rule(code, _destroyed(p)), *drift))
    if p.refused:
        return Judged(GateVerdict.REFUSED, (rule(RuleCode.TOOL_REFUSES, p.refused), *drift))
    assert p.after is not None  # only a destroying change has none
    if p.after == live:
        return Judged(GateVerdict.SAFE, drift)
    refusal = REFUSALS.get(p.source.kind, KAFKA_REFUSAL)
    if p.after < live or refusal.any_change:
        text = refusal.words.format(topic=p.topic, before=live, after=p.after)
        return Judged(GateVerdict.REFUSED, (rule(refusal.code, text), *drift))
    return None


def judge_by_readers(
    p: Proposal,
    live: int,
    readers: Sequence[GateReader],
    moved: GateMoved | None,
    max_moved_fraction: float | None,
) -> Judged:
    """Decides a growing topic's verdict: its worst reader's, citing every reason of every
    reader; MOVES when keys move and no reader is at risk (blocking past
    ``max_moved_fraction``); SAFE when nothing moves."""
    drift = _drift(p, live)
    cited = [c for r in readers for c in _cited(r)]
    cited.sort(key=lambda r: SEVERITY.index(r["verdict"]))  # worst first, stable
    at_risk = worst([r["verdict"] for r in readers])
    if at_risk is not GateVerdict.SAFE:
        return Judged(at_risk, (*cited, *drift))
    if moved is None or moved["keys"] == 0:
        return Judged(GateVerdict.SAFE, drift)
    share = f"{moved['keys']:,} keys ({moved['fraction']:.1%} of the topic's) change partition"
    if max_moved_fraction is not None and moved["fraction"] > max_moved_fraction:
        text = f"{share}: more than --max-moved-fraction {max_moved_fraction:g}"
        return Judged(GateVerdict.MOVES, (rule(RuleCode.TOO_MANY_MOVE, text), *drift))
    return Judged(GateVerdict.MOVES, (rule(RuleCode.KEYS_MOVE, share), *drift))


def _cited(r: GateReader) -> list[RuleRef]:
    """Each reason of a reader with its own rule (a reader's rules and reasons pair one to
    one; a SAFE app's reasons, if any, cite none)."""
    if not r["rules"]:
        return []
    return [
        rule(code, f"{r['kind']} {r['id']}: {text}")
        for code, text in zip(r["rules"], r["reasons"], strict=True)
    ]


#: What keeps a topic that Terraform would destroy.
PREVENT_DESTROY = (
    "; keep it: lifecycle {{ prevent_destroy = true }} on {address}, and raise partitions "
    "only upward (Kafka cannot remove partitions, so the provider replaces the topic)"
)


def _destroyed(p: Proposal) -> str:
    how = "replaces" if p.after is not None else "deletes"
    why = f" ({p.destroy_reason})" if p.destroy_reason else ""
    keep = (
        PREVENT_DESTROY.format(address=p.source.address)
        if p.source.kind is SourceKind.TERRAFORM
        else ""
    )
    return f"{p.source.address} {how} the topic{why}: every record in it is lost{keep}"


def _drift(p: Proposal, live: int) -> tuple[RuleRef, ...]:
    if p.source.kind is not SourceKind.TERRAFORM or p.before is None or p.before == live:
        return ()
    return (
        rule(
            RuleCode.DRIFT,
            f"the plan says {p.topic} has {p.before} partitions; the cluster has {live}: "
            "the change is judged against the cluster",
        ),
    )
