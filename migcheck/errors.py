"""migcheck's exceptions: one root, so the command line can tell a user's mistake from a bug.

Every error a user can fix (bad input, a topic that does not exist, a cluster
that does not answer) is a :class:`MigcheckError`.  Its message is one line,
safe to print (it never carries a secret), and the CLI turns it into
``migcheck: error: <message>`` and exit code 2.  Anything else is a bug and
keeps its traceback.

Nothing here imports Click or any other layer: this module is the bottom of
the dependency graph (see docs/ARCHITECTURE.md).
"""

from __future__ import annotations

#: Exit codes, as documented in the README.
EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
#: No partitioner migcheck knows placed the keys (a custom one, explicit partitions, two
#: clients, or candidates the keys cannot tell apart): the change cannot be predicted.
#: Apart from bad input (2), so that a gate can tell "fix the command" from "tell
#: migcheck the producers' partitioner".
EXIT_UNPREDICTABLE = 3


class MigcheckError(Exception):
    """A problem the user can fix: reported as one line on stderr, exit code 2."""

    exit_code = EXIT_USAGE


class UsageError(MigcheckError):
    """Options that contradict each other or Kafka's rules (e.g. fewer partitions)."""


class NothingChanges(MigcheckError):
    """``--to`` is the count every topic has already: no report to make, nothing to alter.

    Not a failure (exit 0): the CLI prints ``migcheck: nothing changes: ...`` on stderr,
    and no report, which would only call an unchanged topic SAFE."""

    exit_code = EXIT_OK


class Refused(MigcheckError):
    """A change migcheck will not write a procedure for, because carrying it out would lose
    data (exit 1, as a failed gate): the one line names what would be lost and the way
    out.  Not "error": the input was right, and the answer is no."""

    exit_code = EXIT_GATE


class UnpredictableError(MigcheckError):
    """The keys' partitioner cannot be told, so no placement can be predicted (exit 3)."""

    exit_code = EXIT_UNPREDICTABLE


class ReadError(MigcheckError):
    """Kafka or a key file could not be read; the message is safe to print (no secrets)."""


class KeyFormatError(MigcheckError, ValueError):
    """A key given as text could not be turned into bytes; the message names the key."""


class UnhashedKeyError(MigcheckError, ValueError):
    """The partitioner places this key without hashing it, so no partition can be predicted."""


class ReportFormatError(MigcheckError, ValueError):
    """A saved report is not a complete migcheck report (``migcheck render``)."""


def all_error_classes() -> list[type[MigcheckError]]:
    """Every MigcheckError class, for recognising one in a Spark worker's traceback text."""
    found: list[type[MigcheckError]] = []
    pending: list[type[MigcheckError]] = [MigcheckError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found
