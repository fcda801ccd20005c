"""Facts about Kafka topics that several layers reason with, each written once.

Kafka Streams names its internal topics ``<application.id>-<name><suffix>``: a
store's changelog ``<application.id>-<store>-changelog``, a repartition topic
``<application.id>-<name>-repartition``.  Discovery tells an application's
internal topics apart by these suffixes, the app model names each store's
changelog with one, and the ``app`` report gives each topic its role by them;
those sit in different layers, so the suffixes live here, below all of them.
Other frameworks name theirs otherwise (:mod:`migcheck.readers.naming`).

Kafka can add partitions to a topic but never remove them.  Whether a proposed
count grows, keeps or shrinks the current one is answered once, as data
(:func:`compare_count`); each command decides what each answer means to it.  The count
checks every command runs (:func:`check_partition_count`, :func:`check_changes`) sit
here too, free of NumPy: a command that hashes no key never imports it.
"""

import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum

from migcheck.errors import NothingChanges, UsageError

#: Kafka's upper bound on a topic's partition count (a positive Java int).
MAX_PARTITIONS = 2**31 - 1

#: The suffix of a Kafka Streams store's changelog topic.
CHANGELOG_SUFFIX = "-changelog"

#: The suffix of a Kafka Streams repartition topic (a foreign-key join's subscription
#: topics are named otherwise: see :func:`is_repartition_name`).
REPARTITION_SUFFIX = "-repartition"

#: Internal topics that carry records between sub-topologies: ``-repartition`` topics and
#: the foreign-key join's subscription topics (``...-SUBSCRIPTION-REGISTRATION-0000000006-topic``).
_REPARTITION = re.compile(
    rf"({re.escape(REPARTITION_SUFFIX)}|-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\d+-topic)$"
)


def is_repartition_name(topic: str) -> bool:
    """Whether a topic's name is that of a repartition (or foreign-key join) topic."""
    return bool(_REPARTITION.search(topic))


def is_internal(app_id: str, topic: str) -> bool:
    """Kafka Streams' internal-topic naming, under this application's prefix."""
    return topic.startswith(f"{app_id}-") and (
        topic.endswith(CHANGELOG_SUFFIX) or is_repartition_name(topic)
    )


class CountChange(StrEnum):
    """What a proposed partition count does to a topic's current one."""

    GROW = "grow"  # more partitions: what Kafka allows
    SAME = "same"  # the count it has: nothing to alter
    SHRINK = "shrink"  # fewer: Kafka cannot remove partitions


def compare_count(current: int, proposed: int) -> CountChange:
    """Compare ``proposed`` with ``current``; the answer is data, so that each caller
    says what it makes of an equal or smaller count instead of every caller
    comparing the numbers its own way."""
    if proposed > current:
        return CountChange.GROW
    if proposed == current:
        return CountChange.SAME
    return CountChange.SHRINK


def check_partition_count(num_partitions: int) -> int:
    """Reject counts Kafka would reject: a topic has 1 to 2**31-1 partitions (any
    integral number: NumPy's integers register as :class:`numbers.Integral`)."""
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, numbers.Integral):
        raise TypeError(f"partition count must be an int, not {type(num_partitions).__name__}")
    if not 1 <= num_partitions <= MAX_PARTITIONS:
        raise ValueError(f"partition count must be 1 to {MAX_PARTITIONS}, got {num_partitions}")
    return int(num_partitions)


def check_can_grow(current: int, targets: Iterable[int], option: str = "--to") -> None:
    """Kafka can only add partitions: refuse a target below the current count.

    An equal count passes, as it always has, for every caller (``analyze``, ``app``,
    ``plan --to``, the Streams runbook, ``partition --to``).  The plain-consumer runbook,
    which refuses an equal count too (it would alter nothing), asks
    :func:`~migcheck.model.topics.compare_count` itself.
    """
    for target in targets:
        if compare_count(current, target) is CountChange.SHRINK:
            raise UsageError(
                f"{option} {target} is below the current {current} partitions: "
                "Kafka can only add partitions"
            )


def check_changes(
    currents: Mapping[str, int], targets: Sequence[int], option: str = "--to"
) -> None:
    """:func:`check_can_grow` for each topic's current count, then
    :class:`~migcheck.errors.NothingChanges` when no target changes any topic's count:
    the command says so in one line (exit 0) rather than report an unchanged topic."""
    for topic, current in currents.items():
        check_can_grow(current, targets, f"{option} (topic {topic!r})")
    if currents and all(
        compare_count(current, t) is CountChange.SAME
        for current in currents.values()
        for t in targets
    ):
        (count,) = set(targets)  # every target is every topic's count: one number
        verb = "has" if len(currents) == 1 else "have"
        raise NothingChanges(
            f"nothing changes: {', '.join(currents)} {verb} {count} partitions already "
            f"({option} {count})"
        )
