"""Detached control of ``migrate`` (issue 72): gh-ost's interactive socket.

The rollback window may last days, and a run whose every answer comes on stdin ends
with its terminal.  With ``--control-socket PATH`` the run also listens on a Unix
socket, owner-only, for one-line commands from any shell of its user (``nc -U PATH``):
``status`` (where the walk is), ``answer WORD`` (the pending ``MANUAL:`` prompt's
answer, as stdin would give it), ``postpone`` and ``unpostpone`` (the cut-over held at
ready, as ``--postpone-cut-over-flag-file`` holds it).  Each command taken is said on
the run's own output, so its log shows what was done, and when.

Either channel answers: the walk posts its prompt on the :class:`Desk`, and the first
answer from stdin or the socket takes it.  One thread (:func:`serving`) watches the
socket and, only while a prompt waits, stdin (so nothing is read ahead of a prompt,
as with stdin alone); stdin's end no longer stops the run, the socket answers.  The
thread stops, and the socket file goes, when the block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path

from migcheck.errors import UsageError
from migcheck.model.copy import CopyLag
from migcheck.online.sequence import Phase, State
from migcheck.untrusted import visible


class Command(StrEnum):
    """What the socket takes, each the first word of a line."""

    STATUS = "status"
    ANSWER = "answer"
    POSTPONE = "postpone"
    UNPOSTPONE = "unpostpone"


#: The reply to anything else: the commands, named once.
USAGE = "commands: status, answer WORD (as on stdin: y, rollback...), postpone, unpostpone"

#: The longest line taken: a command is a word or two; a client sending more is cut off.
MAX_LINE = 1024

#: How long a reply may wait on a client that does not read it: the run's thread must
#: not hang on one.
SEND_TIMEOUT_S = 1.0


class Desk:
    """What the walk and the two channels share, under one lock: the state the walk is in
    and its copy's lag, the prompt it waits on and the answer that took it, and whether
    the socket holds the cut-over back (or ``flag``, the flag file, does)."""

    def __init__(
        self, flag: Callable[[], bool] = lambda: False, release: Callable[[], None] = lambda: None
    ) -> None:
        self._cond = threading.Condition()
        self._state = State(Phase.START)
        self._lag: Callable[[], CopyLag | None] = lambda: None
        self._prompt: str | None = None
        self._answer: str | None = None
        self._held = False
        self._closed = False
        self._flag = flag
        #: removes the flag file: ``unpostpone`` releases the cut-over whatever holds it,
        #: as gh-ost's does
        self._release = release
        #: called as a prompt is posted: the serving thread then watches stdin too
        self.wake: Callable[[], None] = lambda: None

    def entered(self, state: State, lag: Callable[[], CopyLag | None]) -> None:
        """The walk entered ``state``; ``lag`` is its copy's (status asks it)."""
        with self._cond:
            self._state, self._lag = state, lag

    def prompt(self, line: str) -> str:
        """Post ``line`` and wait for the first answer from either channel (stripped, as
        stdin's); "" (a stop) once the control is closed under it."""
        with self._cond:
            self._prompt, self._answer = line, None
        self.wake()
        with self._cond:
            while self._answer is None and not self._closed:
                self._cond.wait()
            answer, self._prompt, self._answer = self._answer or "", None, None
        return answer

    def waiting(self) -> bool:
        """Whether a prompt waits for its answer."""
        with self._cond:
            return self._prompt is not None and self._answer is None

    def offer(self, answer: str) -> bool:
        """Answer the pending prompt with ``answer``; False when none waits."""
        with self._cond:
            if self._prompt is None or self._answer is not None:
                return False
            self._answer = answer.strip()
            self._cond.notify_all()
            return True

    def hold(self, held: bool) -> None:
        with self._cond:
            self._held = held
        if not held:
            self._release()

    def postponed(self) -> bool:
        """Whether the cut-over waits at ready: the socket's postpone, or the flag file."""
        with self._cond:
            held = self._held
        return held or self._flag()

    def close(self) -> None:
        """No answer will come: a waiting prompt gets "" (fail closed: the run stops)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def status(self) -> list[str]:
        """``status``'s reply: the phase (its number and way), the pending prompt, the
        copy's lag if known, and whether the cut-over is postponed."""
        with self._cond:
            # a prompt already answered is not pending, even before the walk takes the
            # answer: a client polling status must not act on it twice
            answered = self._answer is not None
            state, lag_of, prompt = self._state, self._lag, None if answered else self._prompt
        try:
            lag = lag_of()
        except Exception:  # the copy's error is the walk's to raise; status only says so
            lag = None
        return [
            f"phase: {state.phase.number} {state.phase.value} ({state.way.value})",
            f"prompt: {visible(prompt) if prompt is not None else 'none'}",
            f"lag: {_lag(lag)}",
            self.postponed_line(),
        ]

    def postponed_line(self) -> str:
        """Whether the cut-over is postponed, and by what: one line of ``status``, and the
        reply to ``postpone`` and ``unpostpone``."""
        with self._cond:
            held = self._held
        why = [w for w, on in (("postpone", held), ("the flag file exists", self._flag())) if on]
        return f"postponed: yes ({', '.join(why)})" if why else "postponed: no"


def _lag(lag: CopyLag | None) -> str:
    if lag is None:
        return "unknown"
    seconds = "unknown" if lag.seconds is None else f"{lag.seconds:.1f}"
    return f"{lag.records} records, {seconds} s"


def take(desk: Desk, line: str) -> list[str]:
    """One command line's reply (its effect on ``desk`` made): what the socket's client
    reads back.  An answer with no prompt pending is refused, the run unaffected."""
    word, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    if word == Command.STATUS and not rest:
        return desk.status()
    if word == Command.ANSWER and rest:
        if desk.offer(rest):
            return [f"answered: {visible(rest)}"]
        return ["refused: no prompt is pending"]
    if word in (Command.POSTPONE, Command.UNPOSTPONE) and not rest:
        desk.hold(word == Command.POSTPONE)
        return [desk.postponed_line()]
    return [f"unknown command: {visible(line.strip())}; {USAGE}"]


class StdinLines:
    """stdin's lines, read from its file descriptor only when asked (a prompt waits), each
    taken whole: a chunk may hold several, and the rest wait for the next prompts as
    they would in stdin's own buffer.  At its end (or an error reading it: a terminal
    gone, nohup's unreadable stdin) it is closed, its last partial line still a line."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.closed = fd is None
        self._buf = b""

    def read(self) -> None:
        """Read what is there (the descriptor is ready: this does not block)."""
        assert self.fd is not None
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:
            chunk = b""
        self._buf += chunk
        self.closed = not chunk

    def line(self) -> str | None:
        """The next whole line, if one was read."""
        if b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
        elif self.closed and self._buf:
            line, self._buf = self._buf, b""
        else:
            return None
        return line.decode(errors="replace")


@contextlib.contextmanager
def serving(path: str, desk: Desk, stdin: int | None, say: Callable[[str], None]) -> Iterator[None]:
    """Listen on ``path`` (owner-only) while the block runs, one thread taking each
    client's command and, while ``desk`` has a prompt, stdin's line; the thread joined
    and the socket file removed when the block ends, however it ends."""
    listener = listen(path)
    loop = _Loop(listener, desk, StdinLines(stdin), say, path)
    thread = threading.Thread(target=loop.run, name="migrate-control")
    thread.start()
    try:
        yield
    finally:
        loop.stop()
        thread.join()
        loop.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def listen(path: str) -> socket.socket:
    """A socket listening at ``path``, mode 0600 from its first moment: bound in a private
    directory (0700), made owner-only there, then linked into place, so that no one
    else can ever connect.  A stale socket of a dead run is replaced; anything else
    there is refused in one line."""
    target = Path(path)
    if not target.parent.is_dir():
        raise UsageError(f"--control-socket {path}: no directory {target.parent}; create it")
    _clear_stale(target)
    private = tempfile.mkdtemp(prefix=".mc-", dir=target.parent)
    bound = os.path.join(private, "s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(bound)
        os.chmod(bound, 0o600)
        listener.listen()
        os.link(bound, path)
    except OSError as e:
        listener.close()
        raise UsageError(f"--control-socket {path}: cannot listen there ({e.strerror or e})") from e
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(bound)
        os.rmdir(private)
    return listener


def _clear_stale(target: Path) -> None:
    """Remove a socket no run listens on (a run that died leaves it); refuse a live one,
    or a file that is no socket."""
    try:
        mode = target.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise UsageError(f"--control-socket {target}: it exists and is no socket; name another")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(SEND_TIMEOUT_S)
        try:
            probe.connect(str(target))
        except ConnectionRefusedError:
            target.unlink()
            return
        except OSError as e:
            raise UsageError(
                f"--control-socket {target}: cannot tell if a run listens ({e})"
            ) from e
    raise UsageError(f"--control-socket {target}: a running migrate listens there")


class _Loop:
    """The serving thread's loop: the listening socket, each client until its command
    is answered, a wake-up pipe (a prompt posted, or the stop), and stdin while a
    prompt waits."""

    def __init__(
        self,
        listener: socket.socket,
        desk: Desk,
        stdin: StdinLines,
        say: Callable[[str], None],
        path: str,
    ) -> None:
        self._listener, self._desk, self._stdin, self._say = listener, desk, stdin, say
        self._path = path
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._stopping = False
        self._clients: dict[socket.socket, bytes] = {}
        self._sel = selectors.PollSelector()  # poll takes a regular file on stdin; epoll not
        self._sel.register(listener, selectors.EVENT_READ)
        self._sel.register(self._wake_r, selectors.EVENT_READ)
        desk.wake = self.wake

    def wake(self) -> None:
        with contextlib.suppress(BlockingIOError):  # full: a wake-up is pending anyway
            os.write(self._wake_w, b"!")

    def stop(self) -> None:
        self._stopping = True
        self.wake()

    def run(self) -> None:
        try:
            while not self._stopping:
                if self._answered_from_stdin():
                    continue
                self._watch_stdin(self._desk.waiting() and not self._stdin.closed)
                for key, _ in self._sel.select():
                    self._ready(key.fileobj)
        finally:
            self._desk.close()  # a prompt waits on no one now: it stops the run

    def close(self) -> None:
        """Once the thread is joined: every client, the selector, the pipe and the socket."""
        for client in self._clients:
            client.close()
        self._sel.close()
        self._listener.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def _answered_from_stdin(self) -> bool:
        """A whole line of stdin's answers the waiting prompt, and is said as the socket's
        commands are: a detached run's stdin may be a file or a pipe, and its log must show
        every answer it took, from wherever it came."""
        if not self._desk.waiting() or (line := self._stdin.line()) is None:
            return False
        taken = self._desk.offer(line)
        if taken:
            self._say(f"control: stdin answered: {visible(line.strip())}")
        return taken

    def _watch_stdin(self, on: bool) -> None:
        fd = self._stdin.fd
        if fd is None:
            return
        watched = fd in self._sel.get_map()
        if on and not watched:
            self._sel.register(fd, selectors.EVENT_READ)
        elif watched and not on:
            self._sel.unregister(fd)

    def _ready(self, ready: object) -> None:
        if ready == self._wake_r:
            os.read(self._wake_r, 4096)
        elif ready is self._listener:
            client, _ = self._listener.accept()
            client.setblocking(False)
            self._clients[client] = b""
            self._sel.register(client, selectors.EVENT_READ)
        elif ready == self._stdin.fd:
            self._read_stdin()
        elif isinstance(ready, socket.socket):
            self._read_client(ready)

    def _read_stdin(self) -> None:
        if not self._desk.waiting():  # the socket answered first, in this same round
            return
        self._stdin.read()
        if self._stdin.closed:
            self._watch_stdin(False)
            self._say(f"control: stdin closed; answers come through {self._path}")

    def _read_client(self, client: socket.socket) -> None:
        """A client's bytes, until its line is whole (or it closed): then each command
        in it taken and answered, and the client closed (one batch per connection, as
        gh-ost's socket does)."""
        try:
            chunk = client.recv(4096)
        except OSError:
            chunk = b""
        got = self._clients[client] + chunk
        if chunk and b"\n" not in got and len(got) <= MAX_LINE:
            self._clients[client] = got
            return
        if len(got) > MAX_LINE:
            self._say(f"control: a line of {len(got)} bytes or more, refused")
            replies = [f"refused: a command is one line of at most {MAX_LINE} bytes"]
        else:
            commands = [c for c in got.decode(errors="replace").splitlines() if c.strip()]
            replies = [r for c in commands for r in self._take(c)]
        self._answer(client, replies)

    def _take(self, command: str) -> list[str]:
        self._say(f"control: {visible(command.strip())}")
        return take(self._desk, command)

    def _answer(self, client: socket.socket, replies: list[str]) -> None:
        self._sel.unregister(client)
        del self._clients[client]
        with client, contextlib.suppress(OSError):  # a client gone takes no reply
            client.settimeout(SEND_TIMEOUT_S)
            client.sendall("".join(f"{r}\n" for r in replies).encode())
