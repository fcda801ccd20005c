"""What every command returns: its ``model/`` object and the exit code it calls for.

One shape for every command, so that the CLI alone renders (through ``report/``) and
says why it exits non-zero, and a command never prints.  ``analyze``'s adds the moved
keys when asked (``AnalyzeOutcome``: ``runbook`` reads them in-process).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

#: The command's model object: a report, a runbook, a copy's result, a key lookup
#: (covariant: an outcome is frozen, so a runbook's is also a runbook-or-refusal's).
Result = TypeVar("Result", covariant=True)


@dataclass(frozen=True)
class Outcome(Generic[Result]):
    """A command's result and its exit code (0, or 1 when a gate closes or a change is
    refused, 3 when a placement cannot be predicted; bad input raises instead)."""

    report: Result  # named as analyze's: what the CLI renders
    exit_code: int
