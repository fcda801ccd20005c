"""Names from the cluster or the data are untrusted: each output escapes them here.

A consumer group id, client id, member id, host name, application id of a stateless
app, record key, or a topic named in a key file can be any string, chosen by whoever
may commit offsets or produce.  migcheck writes such names into scripts an operator
runs, Markdown a PR shows, HTML a browser opens and text a terminal interprets.  The
one rule: a name reaches an output only through that output's function below, so it
always arrives as data, never as code or markup.

- terminal text and stderr lines: :func:`visible` (control characters shown as ``\\n``,
  ``\\x1b``..., so a name can neither start a line nor drive the terminal);
- Markdown: :func:`markdown` (markup characters backslash-escaped, so no emphasis,
  link, autolink, HTML or block marker can form), :func:`md_code` (a code span),
  :func:`md_fence` (a fence no line of the content can close);
- HTML: :func:`html_text` (escaped, quotes too, so it is safe in an attribute);
- ``sh``: :func:`sh_word` (one shell word), :func:`sh_comment` (after ``#``);
- JSON needs nothing: its encoder escapes every control character.

Where a name would become an argument of Kafka's tools or a path, the runbook refuses
what cannot be passed safely (:func:`arg_problem`, :func:`path_problem`); reports list
every name, escaped, and refuse none.
"""

from __future__ import annotations

import hashlib
import html
import re
import shlex
import unicodedata

#: Unicode categories never shown as themselves: controls (C0, DEL, C1), formats
#: (bidirectional overrides, zero-width characters), line and paragraph separators, and
#: lone surrogates.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _hidden(c: str) -> bool:
    return unicodedata.category(c) in _HIDDEN_CATEGORIES or c in "\ufffe\uffff"


def _escape(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def needs_escape(text: str) -> bool:
    """Whether ``text`` holds a character no output may show as itself."""
    return any(_hidden(c) for c in text)


def visible(text: object) -> str:
    """``text`` on one line with every hidden character escaped (``\\n``, ``\\x1b``,
    ``\\u202e``): what a terminal, a log line or a comment may show.

    A backslash is doubled only in a text that has escapes, so ordinary names (a
    Windows path, a regex) read as they are, and an escaped name still reads back
    unambiguously.
    """
    s = str(text)
    if not needs_escape(s):
        return s
    return "".join("\\\\" if c == "\\" else _escape(c) if _hidden(c) else c for c in s)


#: Characters that form Markdown wherever they stand: backslash-escaped always, but for
#: HTML's, which become entities (a bare ``->`` stays readable in the source).
_MD_ALWAYS = frozenset("\\`*_[]|~#")
_MD_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
#: What forms markup only at the start of a line: a list item (``-``, ``+``, ``1.``,
#: ``1)`` before a space), a thematic break or a heading's underline (a line of ``-``
#: or ``=``).  Its last character is escaped.
_MD_LEADING = re.compile(r"^(?:[-+]|\d{1,9}[.)])(?=[ \t]|$)|^[-=](?=[-= \t]*$)")
#: GFM's autolinks (``www.x``, ``https://x``, ``mailto:a@b``): the ``.`` or ``:`` that makes
#: them is escaped.
_MD_AUTOLINK = re.compile(r"(?i)(?:www|https?|ftp|mailto|xmpp)(?=[.:])")


def markdown(text: object, line_start: bool = True) -> str:
    """``text`` as literal Markdown text on one line, safe in a paragraph, a list item,
    a heading, a blockquote and a table cell.

    Markup characters are backslash-escaped (CommonMark lets any ASCII punctuation be)
    or, ``<>&``, entities; leading spaces are ``&#32;`` (four would start a code
    block), and ``@`` is a code span of its own: GFM links ``a@b.c`` whatever its
    escapes, and GitHub turns ``@name`` into a mention, but neither happens in code.
    ``line_start`` False (a table cell) leaves the leading ``-`` or ``1.``: no block
    forms inside a cell.
    """
    s = visible(text)
    s = _MD_AUTOLINK.sub(lambda m: m.group(0) + "\x00", s)  # \x00: visible() left none
    if line_start:
        s = _MD_LEADING.sub(lambda m: m.group(0)[:-1] + "\x00" + m.group(0)[-1], s)
    stripped = s.lstrip(" ")
    lead = "&#32;" * (len(s) - len(stripped))
    body = "".join(_md_char(c) for c in stripped)
    return lead + body.replace("\x00", "\\")


def _md_char(c: str) -> str:
    if c == "@":
        return "`@`"
    return "\\" + c if c in _MD_ALWAYS else _MD_ENTITIES.get(c, c)


def md_code(text: object, in_table: bool = False) -> str:
    """``text`` as one code span: nothing inside forms markup, a link or a mention.

    The fence is longer than any run of backticks inside; a space pads content that
    starts or ends with a backtick.  In a GFM table cell a ``|`` must still be escaped,
    even in code, or it ends the cell.
    """
    s = visible(text)
    if not s:
        return "(empty)"
    fence = "`" * (_longest_backticks([s]) + 1)
    pad = " " if s[0] in "` " or s[-1] in "` " else ""
    if in_table:
        s = s.replace("|", "\\|")
    return f"{fence}{pad}{s}{pad}{fence}"


def md_fence(lines: list[str], info: str = "") -> list[str]:
    """A fenced code block around ``lines`` (already one line each, made ``visible``):
    its fence is longer than any run of backticks inside, so no line can close it."""
    fence = "`" * max(3, _longest_backticks(lines) + 1)
    return [fence + info, *lines, fence]


def _longest_backticks(lines: list[str]) -> int:
    return max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)


def html_text(text: object) -> str:
    """``text`` for an HTML element or a quoted attribute value: hidden characters shown,
    ``<>&"'`` escaped."""
    return html.escape(visible(text), quote=True)


def sh_word(text: str) -> str:
    """One bash word that stands for ``text`` exactly, on one line.

    A single-quoted word where that is enough; a text with hidden characters, ``$``, a
    backtick or a backslash becomes a ``$'...'`` word (hidden characters escaped, which bash reads
    back as the same characters; shellcheck knows that nothing in it expands).  A NUL
    cannot be held by any shell word: refused (the runbook refuses such a name first).
    """
    if "\0" in text:
        raise ValueError("a NUL character cannot be passed to a shell command")
    if not needs_escape(text) and not _SH_EXPANDS.search(text):
        return shlex.quote(text)
    return "$'" + "".join(_sh_char(c) for c in text) + "'"


def _sh_char(c: str) -> str:
    """One character inside ``$'...'``: a hidden one as its UTF-8 bytes (``\\xHH`` is a
    byte in bash, whatever the locale)."""
    if c in "\\'":
        return "\\" + c
    if c in _NAMED:
        return _NAMED[c]
    if _hidden(c):
        return "".join(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
    return c


#: What a reader (and shellcheck) might take for an expansion or an escape inside single
#: quotes.
_SH_EXPANDS = re.compile(r"[$`\\]")


def sh_comment(text: object) -> str:
    """``text`` for a ``#`` comment: one line, so nothing after it leaves the comment."""
    return visible(text)


# --- names the runbook passes on -----------------------------------------------------


def arg_problem(name: str) -> str | None:
    """Why ``name`` cannot be passed to Kafka's command-line tools, or None.

    A hidden character is refused: the tools print the name raw in the line-based
    tables the runbook's checks read, and in the operator's terminal.
    """
    if not name:
        return "it is empty"
    if "\0" in name:
        return "it holds a NUL character, which no command line can carry"
    if needs_escape(name):
        return (
            "it holds control or invisible characters, which Kafka's tools print raw in "
            "the tables the runbook reads and in the operator's terminal"
        )
    return None


def path_problem(name: str) -> str | None:
    """Why ``name`` cannot be one component of a path (``state.dir/<application.id>``),
    or None: it must not be ``.`` or ``..``, nor hold ``/``."""
    problem = arg_problem(name)
    if problem:
        return problem
    if name in (".", ".."):
        return f"{name!r} is not a directory of its own"
    if "/" in name:
        return "it holds '/', so it is not one directory"
    return None


#: Characters a work directory's name keeps as they are; every other byte is %-encoded.
_PATH_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_PATH_MAX = 200


def path_component(name: str) -> str:
    """``name`` as a file name: safe characters kept, every other byte ``%XX``.

    One-to-one (``%`` itself is encoded), so two names never share a work directory
    (``a/b`` is ``a%2Fb``, ``a_b`` stays).  A name too long for a file name keeps its
    start and a digest of the whole.
    """
    raw = name.encode("utf-8", "surrogatepass")
    encoded = "".join(chr(b) if chr(b) in _PATH_SAFE else f"%{b:02X}" for b in raw)
    if encoded in ("", ".", ".."):
        encoded = "%" + encoded.replace(".", "%2E")
    if len(encoded) > _PATH_MAX:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        encoded = f"{encoded[:150]}~{digest}"
    return encoded


class Name(str):
    """A report cell that holds one name and nothing else (a key, a group id): Markdown
    shows it as a code span (:func:`md_code`), where nothing links or mentions."""

    __slots__ = ()


def quoted(name: object) -> str:
    """A name inside a message: in quotes and ``visible``."""
    return f"'{visible(name)}'"
