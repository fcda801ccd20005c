"""migrate's control socket (issue 72, item 1): a real Unix socket in a temp dir, a walk
waiting on a prompt in a thread, stdin an open pipe.  Every wait is on an event or a
socket read with a timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from controlsocket import send

from migcheck.cli.migrate import flagged, operated, operator_of, released
from migcheck.errors import UsageError
from migcheck.model.copy import CopyLag
from migcheck.online.control import Desk, serving
from migcheck.online.sequence import Phase, State, Way
from migcheck.online.world import Operator

TIMEOUT_S = 10.0
PAUSE = "pause every producer of t; answer y once they are paused"


class Run:
    """A served desk, the operator built on it, what it said, and a walk's prompt run in a
    thread (``asking``): ``posted`` is set once the prompt waits."""

    def __init__(self, path: Path, stdin_fd: int, flag: Path | None = None) -> None:
        self.path, self.stdin_fd = path, stdin_fd
        self.said: list[str] = []
        self.desk = Desk(
            flagged(str(flag) if flag else None), released(str(flag) if flag else None)
        )
        self.posted = threading.Event()
        self.answer: list[str] = []

    @contextlib.contextmanager
    def serving(self) -> Iterator[Operator]:
        with serving(str(self.path), self.desk, self.stdin_fd, self.said.append):
            wake = self.desk.wake
            self.desk.wake = lambda: (wake(), self.posted.set())[0]
            stdin = os.fdopen(os.dup(self.stdin_fd), closefd=True)
            with stdin:
                yield operator_of(False, stdin, None, self.desk)

    @contextlib.contextmanager
    def asking(self, operator: Operator, line: str) -> Iterator[threading.Thread]:
        walk = threading.Thread(target=lambda: self.answer.append(operator.choose(line)))
        walk.start()
        assert self.posted.wait(TIMEOUT_S)
        try:
            yield walk
        finally:
            walk.join(TIMEOUT_S)
            assert not walk.is_alive()


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """stdin: an open pipe nobody writes to (yet)."""
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_status_shows_the_pending_prompt_and_the_socket_answers_it_while_stdin_is_silent(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    run = Run(tmp_path / "ctl", pipe[0])
    with run.serving() as operator:
        operator.entered(State(Phase.BARRIER), lambda: CopyLag(120, 0.5))
        with run.asking(operator, PAUSE):
            assert send(run.path, "status") == [
                "phase: 5 barrier (forward)",
                f"prompt: {PAUSE}",
                "lag: 120 records, 0.5 s",
                "postponed: no",
            ]
            assert send(run.path, "answer y") == ["answered: y"]
        assert run.answer == ["y"]
        assert send(run.path, "status")[1] == "prompt: none"
    assert run.said == ["control: status", "control: answer y", "control: status"]


def test_stdin_answering_first_takes_the_prompt_and_a_late_socket_answer_is_refused(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    run = Run(tmp_path / "ctl", pipe[0])
    with run.serving() as operator:
        operator.entered(State(Phase.ROLLBACK_WINDOW), lambda: None)
        with run.asking(operator, "Answer y to complete, or rollback"):
            os.write(pipe[1], b"rollback\n")
        assert run.answer == ["rollback"]
        assert send(run.path, "answer y") == ["refused: no prompt is pending"]
        assert send(run.path, "status")[:3] == [
            "phase: 10 rollback window (forward)",
            "prompt: none",
            "lag: unknown",
        ]
    # stdin's answer is said too: a detached run's log shows every answer it took
    assert run.said == ["control: stdin answered: rollback", "control: answer y", "control: status"]


def test_an_answer_with_nothing_pending_is_refused_and_the_run_unaffected(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    run = Run(tmp_path / "ctl", pipe[0])
    with run.serving() as operator:
        assert send(run.path, "answer rollback") == ["refused: no prompt is pending"]
        os.write(pipe[1], b"y\n")  # the next prompt still takes stdin's own answer
        assert operator.ask(PAUSE) is True
    assert run.said == ["control: answer rollback", "control: stdin answered: y"]


def test_with_stdin_closed_the_run_goes_on_answered_through_the_socket(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    run = Run(tmp_path / "ctl", pipe[0])
    os.close(pipe[1])  # stdin at its end: alone, it would answer "" and stop the run
    with run.serving() as operator, run.asking(operator, PAUSE) as walk:
        assert send(run.path, "status")[1] == f"prompt: {PAUSE}"
        assert walk.is_alive()  # still waiting: EOF answered nothing
        assert send(run.path, "answer y") == ["answered: y"]
    assert run.answer == ["y"]
    assert f"control: stdin closed; answers come through {run.path}" in run.said


def test_postpone_and_unpostpone_hold_the_cut_over_as_the_flag_file_does(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    flag = tmp_path / "flag"
    run = Run(tmp_path / "ctl", pipe[0], flag)
    with run.serving() as operator:
        assert not operator.postponed()
        assert send(run.path, "postpone") == ["postponed: yes (postpone)"]
        assert operator.postponed()
        flag.touch()
        assert send(run.path, "status")[3] == "postponed: yes (postpone, the flag file exists)"
        # unpostpone releases the cut-over whatever holds it: the flag file is removed, as
        # gh-ost's unpostpone removes its own
        assert send(run.path, "unpostpone") == ["postponed: no"]
        assert not flag.exists() and not operator.postponed()
        assert send(run.path, "status")[3] == "postponed: no"
    assert run.said == [
        "control: postpone",
        "control: status",
        "control: unpostpone",
        "control: status",
    ]


def test_anything_else_gets_one_line_naming_the_commands_and_is_logged_escaped(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    run = Run(tmp_path / "ctl", pipe[0])
    with run.serving():
        assert send(run.path, "throttle \x1b[2J") == [
            "unknown command: throttle \\x1b[2J; commands: status, answer WORD (as on "
            "stdin: y, rollback...), postpone, unpostpone"
        ]
        assert send(run.path, "status now") == [
            "unknown command: status now; commands: status, answer WORD (as on stdin: y, "
            "rollback...), postpone, unpostpone"
        ]
    assert run.said == ["control: throttle \\x1b[2J", "control: status now"]


def test_the_socket_is_owner_only_and_gone_with_its_thread_when_the_block_ends(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    run = Run(tmp_path / "ctl", pipe[0])
    with pytest.raises(KeyboardInterrupt), run.serving():
        mode = os.stat(run.path).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        assert "migrate-control" in [t.name for t in threading.enumerate()]
        raise KeyboardInterrupt  # Ctrl-C
    assert not run.path.exists()
    assert "migrate-control" not in [t.name for t in threading.enumerate()]
    assert os.listdir(tmp_path) == []  # nothing left beside it either


def test_a_stale_socket_is_replaced_and_anything_else_at_the_path_refused(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    stale = tmp_path / "ctl"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(stale))  # a run that died: its file, nobody listening
    run = Run(stale, pipe[0])
    with run.serving():
        assert send(stale, "status")[0] == "phase: 1 start (forward)"
        with pytest.raises(UsageError, match="a running migrate listens there"):
            serving(str(stale), Desk(), None, print).__enter__()
    (tmp_path / "file").touch()
    with pytest.raises(UsageError, match="it exists and is no socket"):
        serving(str(tmp_path / "file"), Desk(), None, print).__enter__()
    with pytest.raises(UsageError, match="no directory"):
        serving(str(tmp_path / "nowhere" / "ctl"), Desk(), None, print).__enter__()


def test_the_command_ignores_sighup_while_it_runs_and_says_where_its_socket_is(
    tmp_path: Path, pipe: tuple[int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    before = signal.getsignal(signal.SIGHUP)
    path = tmp_path / "ctl"
    with os.fdopen(os.dup(pipe[0])) as stdin, operated(False, stdin, None, str(path)) as op:
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert send(path, "status")[0] == "phase: 1 start (forward)"
        op.entered(State(Phase.READY, Way.BACK), lambda: None)
        assert send(path, "status")[0] == "phase: 4 ready (back)"
    assert signal.getsignal(signal.SIGHUP) == before
    assert not path.exists()
    assert capsys.readouterr().out.splitlines()[:3] == [
        f"control: listening on {path} (commands: status, answer WORD (as on stdin: y, "
        "rollback...), postpone, unpostpone)",
        "control: status",
        "control: status",
    ]


def test_under_yes_the_steps_up_to_the_switch_answer_themselves_and_decide_waits_for_either(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    run = Run(tmp_path / "ctl", pipe[0])
    with run.serving(), os.fdopen(os.dup(pipe[0])) as stdin:
        operator = operator_of(True, stdin, None, run.desk)
        assert operator.ask(PAUSE) is True  # answered at once: nothing posted
        assert not run.posted.is_set()
        decide = threading.Thread(target=lambda: run.answer.append(operator.decide("complete?")))
        decide.start()
        assert run.posted.wait(TIMEOUT_S)
        assert send(run.path, "answer rollback") == ["answered: rollback"]
        decide.join(TIMEOUT_S)
    assert run.answer == ["rollback"]
