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
(:func:`compare_count`); each command decides what each answer means to it.
"""

import re
from enum import StrEnum

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
