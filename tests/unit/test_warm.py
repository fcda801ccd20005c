"""A warmed worker must have loaded the very loop its read task then runs.

``recordbatch.warm`` calls the compiled record loop with the argument types ``decode``
passes; if they ever differ, numba compiles a second specialization during the first
read and the warm-up bought nothing.  The batch comes from kafka-python's own record
builder, not from migcheck.
"""

from __future__ import annotations

from kafka.record.memory_records import MemoryRecordsBuilder

from migcheck.kafka import recordbatch


def _batch() -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    builder.append(timestamp=1000, key=b"k1", value=b"value", headers=[])
    builder.append(timestamp=1001, key=None, value=None, headers=[])
    builder.close()
    return bytes(builder.buffer())


def test_decode_runs_the_specialization_warm_loaded() -> None:
    recordbatch.warm()
    loaded = list(recordbatch._compiled().signatures)
    decoded = recordbatch.decode(_batch(), 0, 10, [], "t-0")
    assert list(recordbatch._compiled().signatures) == loaded and len(loaded) == 1
    c = decoded.columns
    assert c.offsets.tolist() == [0, 1]
    assert c.key_null.tolist() == [False, True]
    assert bytes(c.key_data) == b"k1"
    assert c.value_sizes.tolist() == [5, -1]
