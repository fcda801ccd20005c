"""The one line per refusal or failed verdict that goes to stderr, whatever the format.

A gate reads the exit code; a person watching a CI log reads stderr.  With ``--output``
the report itself goes to a file, so each command says there why it exits non-zero: a
topic it cannot predict (exit 3), a gate that failed, a change that would CRASH or
CORRUPT the app, or a refused runbook (exit 1).  Every line comes from the result's own
fields, shown with :func:`~migcheck.untrusted.visible`: they quote names from the cluster.
Each function returns the lines as the CLI prints them, after ``migcheck: ``.
"""

from __future__ import annotations

from migcheck.model.analyze import Report
from migcheck.model.app import AppCandidate, AppLevel, AppReport
from migcheck.model.gate import GateReport
from migcheck.model.plan import PlanReport
from migcheck.model.runbook import Runbook, SplitRefusal
from migcheck.report.runbook import refusal_line
from migcheck.untrusted import visible


def analyze_lines(report: Report) -> list[str]:
    """Each unpredictable topic's verdict, then the failed gate's reason."""
    lines = [
        f"{t['topic']}: {t['verdict']['text']}" for t in report["topics"] if not t["predictable"]
    ]
    gate = report["gate"]
    if gate["failed"]:
        lines.append(f"gate failed: {gate['reason']}")
    return [_one_line(line) for line in lines]


def _one_line(text: str) -> str:
    """A report's text on one line: hidden characters escaped, runs of spaces one space."""
    return " ".join(visible(text).split())


def app_lines(report: AppReport) -> list[str]:
    """Each candidate that is not SAFE, with its first reason of that level; each
    unpredictable topic."""
    lines = [
        f"{c['verdict']} at {c['partitions']} partitions: {_first(c)}"
        for c in report["candidates"]
        if c["verdict"] != AppLevel.SAFE and c["reasons"]
    ]
    state = report.get("state")
    for t in state["topics"] if state else []:
        if not t["predictable"]:
            lines.append(f"{t['topic']}: {t['verdict']['text']}")
    return [_one_line(line) for line in lines]


def _first(candidate: AppCandidate) -> str:
    reasons = candidate["reasons"]
    return next((r for r in reasons if r["level"] == candidate["verdict"]), reasons[0])["text"]


def plan_lines(report: PlanReport) -> list[str]:
    """The proposed change's verdict when it is not SAFE, with its first reason."""
    proposed = report.get("proposed")
    if not proposed or proposed["verdict"] == AppLevel.SAFE:
        return []
    reasons = proposed["verdict_reasons"]
    return [_one_line(f"{proposed['verdict']}: {reasons[0] if reasons else 'see the report'}")]


def runbook_lines(result: Runbook | SplitRefusal) -> list[str]:
    """A refused in-place runbook: how many keys would split, and where."""
    if not isinstance(result, SplitRefusal):
        return []
    return [visible(refusal_line(result.topic, result.stores, result.keys))]


def gate_lines(report: GateReport) -> list[str]:
    """Each change that fails the gate, with its first blocking reason's code."""
    lines = []
    for c in report["changes"]:
        if c["blocking"]:
            first = next((r for r in c["rules"] if r["verdict"] == c["verdict"]), None)
            why = f": {first['code']} {first['text']}" if first else ""
            lines.append(f"{c['topic']} -> {c['to']}: {c['verdict']}{why}")
    return [_one_line(line) for line in lines]
