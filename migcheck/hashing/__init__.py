"""Where a producer puts a key: the hash kernels, the partitioner registry and key codecs.

Pure computation, no I/O.  :mod:`~migcheck.hashing.kernels` holds the one
implementation of each hash; :mod:`~migcheck.hashing.partitioners` the
clients' rules and the scalar and vectorized API every other path calls;
:mod:`~migcheck.hashing.keys` turns typed key text into the bytes Kafka's
serializers write; :mod:`~migcheck.hashing.sampling` ranks keys for a stable sample.
"""
