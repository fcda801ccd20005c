"""``migcheck warm``: build, in the foreground, what a first check would otherwise build
in front of its user: Spark's class archive and the compiled hash kernels.

Why a command: the archive is written by a JVM as it exits, 5 to 20 s after its last job,
which no check should add to its own time, and no check may leave a process behind to
do it (docs/ARCHITECTURE.md, "A short JVM starts from an archive").  Without a warm-up
every command is still correct; the first ones are slower.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from migcheck.analysis.spark import save_class_archive
from migcheck.commands.outcome import Outcome
from migcheck.errors import EXIT_OK
from migcheck.hashing.partitioners import compile_kernels
from migcheck.kafka.recordbatch import warm as compile_record_decoder
from migcheck.model.warm import Warmth


def run_warm(say: Callable[[str], None]) -> Outcome[Warmth]:
    """The kernels first (they need no JVM), then the class archive; ``say`` hears each
    step as it starts."""
    say("compiling the hash kernels and the record decoder")
    started = time.monotonic()
    hashes = compile_kernels()
    compile_record_decoder()
    kernels_s = time.monotonic() - started
    archive = save_class_archive(say)
    return Outcome(Warmth(archive, hashes, kernels_s), EXIT_OK)
