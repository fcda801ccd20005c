"""The one atomic writer (migcheck/files.py): a regular file is replaced whole; a target
that is no regular file (a FIFO here, as /dev/null is a device) is written in place and
stays what it was, never replaced by a plain file."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from migcheck.files import write_atomically


def test_a_fifo_stays_a_fifo_and_its_reader_gets_the_text(tmp_path: Path) -> None:
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomically(fifo, "report\n")
    reader.join(timeout=30)
    assert got == [b"report\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary file left


def test_a_regular_file_is_replaced_whole_and_no_temporary_file_stays(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    target.write_text("old\n")
    write_atomically(target, "new\n")
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt"]
