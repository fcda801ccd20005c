"""Facts about Kafka topics that several layers reason with, each written once.

Kafka Streams names its internal topics ``<application.id>-<name><suffix>``: a
store's changelog ``<application.id>-<store>-changelog``, a repartition topic
``<application.id>-<name>-repartition``.  Discovery tells an application's
internal topics apart by these suffixes, the app model names each store's
changelog with one, and the ``app`` report gives each topic its role by them;
those sit in different layers, so the suffixes live here, below all of them.
Only Kafka Streams' conventions are known (ksqlDB and Quix name theirs
otherwise).

Kafka can add partitions to a topic but never remove them.  Whether a proposed
count grows, keeps or shrinks the current one is answered once, as data
(:func:`compare_count`); each command decides what each answer means to it.
"""

from enum import StrEnum

#: The suffix of a Kafka Streams store's changelog topic.
CHANGELOG_SUFFIX = "-changelog"

#: The suffix of a Kafka Streams repartition topic (a foreign-key join's subscription
#: topics are named otherwise: see :func:`migcheck.streams.rules.is_repartition_name`).
REPARTITION_SUFFIX = "-repartition"


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
