"""``migcheck warm``'s summary: what it built, where, and what each state means."""

from __future__ import annotations

from migcheck.model.warm import ArchiveState, Warmth
from migcheck.untrusted import visible

#: What each state of the class archive means for the checks that follow.
ARCHIVE_WORDS = {
    ArchiveState.SAVED: "saved: every later embedded run maps it and starts sooner",
    ArchiveState.PRESENT: "already saved: nothing to do",
    ArchiveState.NO_JAVA: "not saved: no java binary found (set JAVA_HOME, or put java on PATH)",
    ArchiveState.UNWRITABLE: "not saved: the cache cannot be written (set MIGCHECK_CACHE_DIR)",
    ArchiveState.NOT_WHOLE: "not saved: the JVM's dump was not whole; checks start without it",
    ArchiveState.NO_JVM: "not saved: this pyspark is outside migcheck's tested range",
}


def render_warm_text(warmth: Warmth) -> str:
    archive = warmth.archive
    size = f", {archive.size_bytes / 1e6:.1f} MB" if archive.size_bytes else ""
    took = f", {archive.seconds:.1f} s" if archive.seconds else ""
    lines = [
        "migcheck warm",
        f"hash kernels:   {warmth.hashes} hashes and the record decoder compiled "
        f"({warmth.kernels_seconds:.1f} s)",
        f"class archive:  {ARCHIVE_WORDS[archive.state]}{size}{took}",
    ]
    if archive.path:
        lines.append(f"                {visible(archive.path)}")  # a path of the user's
    return "\n".join(lines) + "\n"
