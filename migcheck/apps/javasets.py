"""The order in which a ``java.util.HashSet`` of strings yields them, for checks Kafka runs
over one.

The streams protocol's broker compares every existing internal topic with the count it
expects in one pass over ``StreamsTopology.requiredTopics()``, a set collected with
``Collectors.toSet()`` (group-coordinator's ``streams.topics.InternalTopicManager
.missingInternalTopics``, Kafka 4.1.1 to 4.3.1), and throws at the first that differs.
So when a change leaves two internal topics at the wrong count, which one the app's error
names is not a matter of repartition before changelog: it is where each name falls in that
set, which follows from ``String.hashCode`` and the table's size alone, as here.

Pure.  What it leaves out: a bucket that grows to eight names turns into a tree (or makes
the table grow first) in Java, which takes eight names of one bucket among a handful.
"""

from __future__ import annotations

from collections.abc import Iterable

_INT = 0xFFFFFFFF
_DEFAULT_CAPACITY = 16  # HashMap.DEFAULT_INITIAL_CAPACITY
_LOAD_FACTOR = 0.75  # HashMap.DEFAULT_LOAD_FACTOR


def string_hash(s: str) -> int:
    """Java's ``String.hashCode()`` as an unsigned 32-bit int: ``s[0]*31^(n-1) + ...`` over
    the string's UTF-16 code units."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & _INT
    return h


def _bucket(s: str, capacity: int) -> int:
    """``HashMap.hash``: the hash's high half folded into its low half, then masked."""
    h = string_hash(s)
    return (h ^ (h >> 16)) & (capacity - 1)


def capacity_after(n: int) -> int:
    """The table size of a ``new HashSet<>()`` after ``n`` adds: 16, doubled whenever the
    size passes three quarters of it."""
    capacity = _DEFAULT_CAPACITY
    while n > capacity * _LOAD_FACTOR:
        capacity *= 2
    return capacity


def hashset_order(added: Iterable[str]) -> list[str]:
    """The strings in the order a ``HashSet`` filled by ``added`` (as ``Collectors.toSet()``
    fills one) iterates them: by bucket, and within a bucket in the order they came (a
    resize keeps that order)."""
    unique = list(dict.fromkeys(added))
    capacity = capacity_after(len(unique))
    return sorted(unique, key=lambda s: _bucket(s, capacity))
