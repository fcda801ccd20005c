"""``migcheck copy``: every committed record of a topic into a wider one, exactly once.

Each record goes to the partition the producers' partitioner gives its key
under the destination's count (the same kernels as ``analyze``, and the same
choice: the first partitioner that placed every key read, never a sample, so
each key sits in one source partition).  Null keys, which no partitioner
hashes, go round-robin.  Value, key, timestamp and headers are copied as they
are.  One Spark task copies each source partition in offset order, so the
records of a key keep their order.  The checkpoint pins the partitioner and the
destination's count: a catch-up places keys as the first run did.

Exactly once, also across a killed run: each task writes its partition in
chunks, one Kafka transaction per chunk, under a ``transactional.id`` that is
the same on every run.  Before a chunk, the task records in its progress file
(beside ``--checkpoint``) the chunk's source offsets and the destination's end
offsets; after the commit it records the chunk as done.  A re-run first
initialises the same transactional id, which makes Kafka finish or abort
whatever the dead run left open, so the destination is final.  A chunk still
marked pending is then read again from the source and placed again: it
committed if all its records are in the destination, in order, after the
recorded end offsets (skipped), else it did not (copied again).  The end
offsets alone prove nothing once producers write to the destination, and one
record proves nothing either: another task could have written an equal one.
So no two tasks share a key (a key sits in one source partition) and, when the
destination is at least as wide, no two tasks send null keys to the same
partition (:func:`unhashed_share`): what a task finds in its partitions after
those offsets, equal to its chunk, is its chunk.  Left open: producers writing
exact twins of source records (same key, value, headers and timestamp) into
the destination, a narrower destination whose chunk holds only null-key
records all equalled by other tasks', and a forced ``--partitioner`` that
leaves a key in several source partitions (then its order is not kept either).

The verification compares identities (key, timestamp, a digest of value and
headers) of the copied source range with the destination's: each must appear
exactly as often on both sides, on the partition its key belongs to.  Records
producers wrote straight into the destination have identities of their own
and are not counted.
"""
