"""``--change TOPIC=N``: a plain proposal, with no tool between the user and the cluster.

The topic is everything before the last ``=`` (Kafka's topic names hold no ``=``), N a
partition count.  There is no before: the gate reads the live count.
"""

from __future__ import annotations

import re

from migcheck.errors import UsageError
from migcheck.gate.inputs.common import shown
from migcheck.model.gate import Proposal, Source, SourceKind
from migcheck.model.topics import MAX_PARTITIONS
from migcheck.untrusted import visible

FORM = "--change"
_DIGITS = re.compile(r"[0-9]+")


def read_change(text: str) -> Proposal:
    """The proposal of one ``--change TOPIC=N``, or a one-line UsageError."""
    topic, sep, count = text.rpartition("=")
    if not sep or not topic:
        raise _bad(text, "expected TOPIC=N")
    # at most 10 digits before int(): Python refuses to convert very long digit strings
    if not _DIGITS.fullmatch(count) or len(count) > 10 or not 1 <= int(count) <= MAX_PARTITIONS:
        raise _bad(text, f"{shown(count)} is not a partition count (1 to {MAX_PARTITIONS})")
    return Proposal(topic, None, int(count), Source(SourceKind.CHANGE, None, FORM))


def _bad(text: str, what: str) -> UsageError:
    return UsageError(f"{FORM} {visible(text)!r}: {what}")
