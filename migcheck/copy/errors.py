"""The copy's own errors: each a one-line :class:`~migcheck.errors.MigcheckError` (exit 2;
a placement that cannot be told, 3).

Kept apart so a caller (or a test) can tell a refused checkpoint from a chunk
that cannot be recovered, while the CLI prints both as one line.
"""

from __future__ import annotations

from migcheck.errors import UnpredictableError, UsageError


class CheckpointError(UsageError):
    """``--checkpoint`` cannot be used for this copy: another pair, another partitioner,
    another destination count, or not a checkpoint at all."""


class RecoveryError(UsageError):
    """A dead run's pending chunk cannot be settled: its source records are gone, or it
    was placed otherwise than this migcheck places it."""


class PlacementError(UnpredictableError):
    """No partitioner placed every key of the source, so keys cannot keep their order
    (exit 3, as analyze's "cannot predict").  ``why``: what the records showed, without
    the copy's way out, so that a runbook refusing a move at generation says it in the
    copy's words."""

    def __init__(self, why: str, way_out: str) -> None:
        super().__init__(f"{why}; {way_out}")
        self.why = why


class UnwritableError(UsageError):
    """A chunk holds records no producer migcheck uses can write as they are: a timestamp
    of 0 or less (librdkafka writes "now") beside a header with a null value or a record
    with neither key nor value (kafka-python refuses both)."""


class CountChangedError(UsageError):
    """A topic's partition count changed while ``copy --follow`` ran: the source's keys
    now sit in two partitions (their order cannot be kept), or the destination's would be
    placed two ways."""
