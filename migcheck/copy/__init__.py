"""``migcheck copy``: every committed record of a topic into a wider one, exactly once.

Each record goes to the partition the producers' partitioner gives its key
under the destination's count (the same kernels as ``analyze``, and the same
choice: the first partitioner that placed every key read, never a sample, so
each key sits in one source partition).  Null keys, which no partitioner
hashes, go round-robin.  Value, key, timestamp and headers are copied as they
are.  Each source partition is copied in offset order, one chunk per round, so
the records of a key keep their order.  The checkpoint pins the partitioner and the
destination's count: a catch-up places keys as the first run did.

Exactly once, also across a killed run or a lost executor: the copy runs in
rounds (:mod:`migcheck.copy.rounds`).  Each round, the driver picks every
unfinished partition's next chunk (an offset range) and records in the
checkpoint, before launching it, the chunks, their round-robin positions for
null keys and every destination partition's end offset; then one Spark task per
chunk (:mod:`migcheck.copy.task`) copies it in one Kafka transaction under a
``transactional.id`` that is the same for every attempt and every run.  The
driver is the only writer of this state: a task gets its chunk from the driver,
so a retry on another worker, or a later run resuming a killed driver's round,
settles the very same chunk.  Each attempt first initialises the transactional
id, which makes Kafka finish or abort whatever a dead attempt left open, so the
destination is final; it then reads the chunk again from the source and places
it again: it committed if all its records are in the destination, in order,
after the recorded end offsets (skipped), else it did not (copied).  The end
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
