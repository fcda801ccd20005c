"""What every input form shares: reading a file, and saying in one line where it is wrong.

A malformed input is the user's to fix, so each problem is a
:class:`~migcheck.errors.UsageError` (exit 2 at the CLI) whose message is one line:
the file, the place in it (a JSON path such as
``resource_changes[3].change.after.partitions``, or ``document 2, spec.partitions``),
and what is wrong.  Every name and value in it goes through
:func:`~migcheck.untrusted.visible`: a file may hold any characters, and none of them
may break the line or drive the terminal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from migcheck.errors import UsageError
from migcheck.model.topics import MAX_PARTITIONS
from migcheck.untrusted import visible


def problem(file: str, place: str, what: str) -> UsageError:
    """The one-line error for ``what`` is wrong at ``place`` in ``file`` (``what`` made
    one line too: it may quote a parser's message, which can span several)."""
    where = f"{visible(file)}: {place}" if place else visible(file)
    return UsageError(f"{where}: {visible(what)}")  # what may quote a parser's message


def read_text(path: str, form: str) -> str:
    """The text of ``path`` (UTF-8, a byte-order mark allowed), or a one-line error that
    names the file and says which option wanted it (``form``)."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read()
    except FileNotFoundError:
        raise problem(path, "", f"no such file ({form})") from None
    except IsADirectoryError:
        raise problem(path, "", f"is a directory, not a file ({form})") from None
    except UnicodeDecodeError as e:
        raise problem(path, f"byte {e.start}", "not UTF-8 text") from None
    except OSError as e:
        raise problem(path, "", f"cannot be read ({visible(e.strerror or e)})") from None


def shown(value: Any) -> str:
    """``value`` as an error message shows it: JSON-like, one line, at most 60 characters."""
    text = "null" if value is None else repr(value) if isinstance(value, str) else str(value)
    if isinstance(value, bool):
        text = str(value).lower()
    text = visible(text)
    return text if len(text) <= 60 else text[:57] + "..."


def count_at(value: Any, file: str, place: str) -> int:
    """``value`` as a partition count (an integer from 1 to 2**31-1), or a one-line error.

    A bool, a float (even ``3.0``) or a string (even ``"3"``) is refused: every tool
    read here writes a count as a plain integer, so anything else means the file is not
    what it claims to be.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise problem(file, place, f"{shown(value)} is not a partition count (an integer)")
    if not 1 <= value <= MAX_PARTITIONS:
        raise problem(file, place, f"{value} is not a partition count (1 to {MAX_PARTITIONS})")
    return value


def mapping_at(value: Any, file: str, place: str) -> Mapping[str, Any]:
    """``value`` when it is an object (a JSON object, a YAML mapping), or a one-line error."""
    if not isinstance(value, Mapping):
        raise problem(file, place, f"{shown(value)} is not an object")
    return value


def list_at(value: Any, file: str, place: str) -> list[Any]:
    """``value`` when it is an array (a JSON array, a YAML sequence), or a one-line error."""
    if not isinstance(value, list):
        raise problem(file, place, f"{shown(value)} is not an array")
    return value


def text_at(value: Any, file: str, place: str) -> str:
    """``value`` when it is a non-empty string (a topic's or a resource's name)."""
    if not isinstance(value, str) or not value:
        raise problem(file, place, f"{shown(value)} is not a name (a non-empty string)")
    return value


def load_json(path: str, form: str) -> Any:
    """The JSON document in ``path``, or a one-line error naming the line and column.

    A document nested too deep for Python's parser is refused in the same one line,
    rather than a ``RecursionError``.
    """
    text = read_text(path, form)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise problem(path, f"line {e.lineno}, column {e.colno}", f"not JSON ({e.msg})") from None
    except RecursionError:
        raise problem(path, "", "not JSON this tool can read (nested too deep)") from None
