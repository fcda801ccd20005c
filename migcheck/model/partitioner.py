"""The producers' partitioner as every command is told it (``--partitioner``): a client's
partitioner by name, or ``auto``, detected from the data.

Each name is written here once, below every layer that chooses, detects or pins one:
:data:`migcheck.hashing.partitioners.PARTITIONERS` describes each member but ``AUTO`` (its
hash, its placement rule, the keys it hashes), in this order, and the CLI offers these
members' values (each turned back into its member before a command sees it).  A choice
is compared with a member (``== PartitionerChoice.AUTO``), never with a word.
"""

from enum import StrEnum


class PartitionerChoice(StrEnum):
    """``--partitioner``'s values: ``AUTO``, then the registry's partitioners in its order
    (the order ``auto`` tries them in; a unit test holds the two together)."""

    AUTO = "auto"  # the first auto-detected partitioner that placed every key
    MURMUR2 = "murmur2"
    MURMUR2_RANDOM = "murmur2_random"
    CONSISTENT = "consistent"
    CONSISTENT_RANDOM = "consistent_random"
    FNV1A = "fnv1a"
    FNV1A_RANDOM = "fnv1a_random"
    KAFKAJS_LEGACY = "kafkajs-legacy"
    SARAMA_REFERENCE = "sarama-reference"
    SARAMA_CRC32 = "sarama-crc32"
    FRANZ_SARAMA_FNV1A = "franz-sarama-fnv1a"
    KAFKA_RUST = "kafka-rust"
