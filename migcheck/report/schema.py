"""The report schema as the renderers and docs see it, derived from its one definition.

:mod:`migcheck.model` defines every object of the JSON reports as a TypedDict.  From
those, this module derives the key order of the JSON output (:func:`ordered`), the check
that a saved report is complete before it is rendered again (:func:`check_report`), its
verdicts, levels and other words made their enums' members again (:func:`typed`), which
kind of report a saved one is (:func:`kind_of`), and the map from each documented section
of ``docs/report-schema.md`` to its TypedDict, which the tests hold the document to.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable
from enum import Enum
from typing import Any

from migcheck.errors import ReportFormatError
from migcheck.model import analyze as model
from migcheck.model import app as appmodel
from migcheck.model import copy as copymodel
from migcheck.model import gate as gatemodel
from migcheck.model import partition as partitionmodel
from migcheck.model import plan as planmodel
from migcheck.model import readers as readersmodel
from migcheck.model.header import ReportKind

#: docs/report-schema.md's section headings, each with the object its table documents.
DOC_SECTIONS: dict[str, type] = {
    "Top level": model.Report,
    "Source": model.Source,
    "Topic": model.TopicEntry,
    "Sample assumption": model.SampleAssumption,
    "Partition": model.PartitionEntry,
    "Verdict": model.Verdict,
    "Share": model.ShareEntry,
    "Candidate": model.CandidateEntry,
    "Load": model.LoadEntry,
    "Moved key": model.MovedKey,
    "Gate": model.Gate,
    "App report": appmodel.AppReport,
    "Group": appmodel.AppGroup,
    "App topic": appmodel.AppTopic,
    "Sub-topology": appmodel.AppSubtopology,
    "Reason": appmodel.AppReason,
    "App candidate": appmodel.AppCandidate,
    "Error candidate": appmodel.ErrorCandidate,
    "Sub-topology verdict": appmodel.SubtopologyVerdict,
    "Store impact": appmodel.StoreImpact,
    "State": appmodel.AppState,
    "State route": appmodel.StateRoute,
    "Plan report": planmodel.PlanReport,
    "Plan sub-topology": planmodel.PlanSubtopology,
    "Plan instance": planmodel.PlanInstance,
    "Balance": planmodel.PlanBalance,
    "Standby": planmodel.PlanStandby,
    "Narrow repartition": planmodel.PlanNarrow,
    "Proposal": planmodel.PlanProposal,
    "Key placement": partitionmodel.KeyRow,
    "Readers report": readersmodel.ReadersReport,
    "Readers topic": readersmodel.ReadersTopic,
    "Reader": readersmodel.ReaderEntry,
    "Judgement": readersmodel.ReaderJudgement,
    "Reader partition": readersmodel.ReaderPartition,
    "Gate report": gatemodel.GateReport,
    "Gate change": gatemodel.GateChange,
    "Gate source": gatemodel.GateSource,
    "Gate rule": gatemodel.RuleRef,
    "Gate reader": gatemodel.GateReader,
    "Gate moved": gatemodel.GateMoved,
    "Gate acceptance": gatemodel.GateAcceptance,
    "Copy summary": copymodel.CopySummary,
    "Copy partition": copymodel.CopyPartitionEntry,
    "Copy verification": copymodel.CopyVerificationEntry,
    "Copy lag": copymodel.CopyLagLine,
}


def kind_of(report: Any) -> ReportKind:
    """Which kind of report a JSON object is: its ``report`` field says; one saved before
    that field existed is told by its fields (:func:`legacy_kind`)."""
    if not isinstance(report, dict) or "report" not in report:
        return legacy_kind(report)
    try:
        return ReportKind(report["report"])
    except ValueError:
        known = ", ".join(ReportKind)
        raise ReportFormatError(
            f"unknown report kind {report['report']!r} (this migcheck knows {known})"
        ) from None


def legacy_kind(report: Any) -> ReportKind:
    """A report saved without its ``report`` field, told by its fields: ``migcheck plan``'s
    recommends, ``migcheck app``'s names its application, and ``analyze``'s does neither.
    Only for those: a report of a newer kind may hold any of these fields."""
    if isinstance(report, dict) and "recommendation" in report:
        return ReportKind.PLAN
    if isinstance(report, dict) and "application_id" in report:
        return ReportKind.APP
    return ReportKind.ANALYZE


@functools.cache
def fields(cls: type) -> dict[str, Any]:
    """A TypedDict's fields and their types, in declaration (= documented) order."""
    return typing.get_type_hints(cls)


def _held(tp: Any, kind: Callable[[Any], bool]) -> Any:
    """The type of ``kind`` a field holds: itself, or its items' for a list, or inside
    ``| None``; None when it holds none."""
    if kind(tp):
        return tp
    if typing.get_origin(tp) in (list, typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            found = _held(arg, kind)
            if found is not None:
                return found
    return None


def _nested(tp: Any) -> type | None:
    """The TypedDict a field holds."""
    return _held(tp, typing.is_typeddict)


def _enum(tp: Any) -> type[Enum] | None:
    """The enum a field holds."""
    return _held(tp, lambda t: isinstance(t, type) and issubclass(t, Enum))


def ordered(value: Any, cls: type) -> Any:
    """``value`` with every object's keys in documented order (``cls``'s); unknown keys
    follow in their own order, so a newer report's extra fields survive."""
    if isinstance(value, list | tuple):
        return [ordered(v, cls) for v in value]
    if not isinstance(value, dict):
        return value
    known = fields(cls)
    keys = [k for k in known if k in value] + [k for k in value if k not in known]
    out = {}
    for k in keys:
        child = _nested(known[k]) if k in known else None
        out[k] = ordered(value[k], child) if child is not None else value[k]
    return out


def typed(value: Any, cls: type) -> Any:
    """A saved report (of TypedDict ``cls``) with each enum field's word as its member, as
    the command built it: the renderers compare members, never strings.  A word this
    migcheck does not know (a newer report's) stays as written, as :func:`ordered` keeps a
    newer report's fields: the renderers show it as it is."""
    if isinstance(value, list):
        return [typed(v, cls) for v in value]
    if not isinstance(value, dict):
        return value
    known = fields(cls)
    return {k: _typed_field(v, known[k]) if k in known else v for k, v in value.items()}


def _typed_field(value: Any, tp: Any) -> Any:
    child = _nested(tp)
    if child is not None:
        return typed(value, child)
    enum = _enum(tp)
    if enum is None:
        return value
    if isinstance(value, list):
        return [_member(enum, v) for v in value]
    return _member(enum, value)


def _member(enum: type[Enum], value: Any) -> Any:
    try:
        return enum(value)
    except (ValueError, TypeError):
        return value


def check_report(value: Any, cls: type, path: str = "") -> None:
    """Refuse a report (of TypedDict ``cls``) that lacks a field the renderers need, naming
    the first one missing."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            check_report(item, cls, f"{path}[{i}]")
        return
    if not isinstance(value, dict):
        raise ReportFormatError(f"{path or 'the report'} is not an object")
    for name in sorted(cls.__required_keys__, key=list(fields(cls)).index):  # type: ignore[attr-defined]
        where = f"{path}.{name}" if path else name
        if name not in value:
            raise ReportFormatError(f"no {where!r}")
        child = _nested(fields(cls)[name])
        if child is not None and value[name] is not None:
            check_report(value[name], child, where)
