"""``migcheck warm``'s result: what a first check would otherwise build in front of its user."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ArchiveState(StrEnum):
    """What became of Spark's class archive."""

    SAVED = "saved"  # this run dumped it and put it in place
    PRESENT = "present"  # an earlier warm-up saved it: touched as used, nothing dumped
    NO_JAVA = "no-java"  # no java binary found: Spark cannot start here
    UNWRITABLE = "unwritable"  # the cache cannot be written: checks start without one
    NOT_WHOLE = "not-whole"  # the JVM's dump was not whole: checks start without one
    NO_JVM = "no-jvm"  # pyspark outside its tested range: its JVM cannot be ended and waited for


@dataclass(frozen=True)
class ClassArchive:
    """Spark's class archive (:mod:`migcheck.analysis.jvmarchive`)."""

    path: str | None
    state: ArchiveState
    size_bytes: int
    seconds: float


@dataclass(frozen=True)
class Warmth:
    """What ``migcheck warm`` built: the class archive, and the hash kernels and record
    decoder compiled into the kernel cache."""

    archive: ClassArchive
    hashes: int  # hashes whose loops are compiled
    kernels_seconds: float
