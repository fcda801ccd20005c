"""Names from the cluster or the data are data in every output, never code or markup.

Every writer of :mod:`writers` gets hostile names (shell, Markdown and HTML
metacharacters, control and invisible characters, the issue's own group id), and each
output is checked by what reads it in real life, never by migcheck's own code:
- Markdown: GitHub's own renderer (cmark-gfm, every GFM extension, raw HTML let through)
  must build exactly the elements it builds for a harmless name of the same shape, and
  show the name as text;
- HTML: Python's HTML parser, likewise;
- ``sh``: ``bash -n``, shellcheck, and the dry run in an empty directory, which must stay
  empty (the payloads ``touch`` files there);
- text: no control or invisible character reaches the terminal.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from writers import WRITERS, Written

from migcheck.cli.main import COMMANDS
from migcheck.untrusted import (
    html_text,
    markdown,
    md_code,
    needs_escape,
    path_component,
    sh_word,
    visible,
)

SHELLCHECK = Path(sys.executable).parent / "shellcheck"

#: The group id of the issue that found the hole: a newline ends the script's comment.
ISSUE_ID = (
    "bars-inj\ntouch pwned-nl\n$(touch pwned-sub)`touch pwned-bt`'\";touch pwned-semi;# "
    "<img src=x onerror=alert(1)>"
)
#: The same without its newlines: a name a runbook accepts, so its script is written.
ISSUE_ID_ONE_LINE = ISSUE_ID.replace("\n", " ")

_FRAGMENTS = [
    "\n", "\r", "\t", "\x1b[31m", "\x00", "\x7f", "\x9b", "\u202e", "\u200b", "\u2028",
    "$(touch pwned-sub)", "`touch pwned-bt`", ";touch pwned-semi;", "\ntouch pwned-nl\n",
    "&& touch pwned-and", "| touch pwned-pipe", "'", '"', "\\", "\\n", "${HOME}", "$HOME",
    "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "</code>", "-->", "<!--",
    "[x](https://evil.example)", "![i](https://evil.example/p.png)", "[x]: https://e.example",
    "www.evil.example", "https://evil.example", "ops@evil.example", "@admin", "mailto:a@b.c",
    "# h", "- item", "+ x", "1. item", "2) x", "    code", "```", "~~~", "| a | b |", "---",
    "===", "*e*", "_e_", "**b**", "~~s~~", "&lt;", "&#60;", "&amp;", "<http://e.example>",
    "--help", "-x", "..", ".", "/", "a/b", " ", "%2F", "!!", "*", "~", "[ ]", ">", "> q",
]  # fmt: skip
_HOSTILE = st.sampled_from(_FRAGMENTS)
NAMES = st.lists(st.one_of(_HOSTILE, st.text(max_size=6)), min_size=1, max_size=6).map("".join)
#: Names with nothing hidden in them: the runbooks pass these on (and write their scripts).
PRINTABLE = NAMES.map(lambda s: "".join(c for c in s if not needs_escape(c)) or "x")


class _Elements(HTMLParser):
    """The elements (with their attribute names) and the text of an HTML document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[str, ...]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, tuple(sorted(a for a, _ in attrs))))

    def handle_endtag(self, tag: str) -> None:
        self.tags.append(("/" + tag, ()))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Elements:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser


def _gfm(md: str) -> str:
    """Markdown as GitHub renders it, but with raw HTML let through: stricter than GitHub."""
    return cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)


def _harmless(name: str) -> str:
    """A name of the same shape with nothing to interpret: letters, and its ``@`` kept
    (Markdown shows each ``@`` of a name as code, so no mention or mail link forms)."""
    return "".join("@" if c == "@" else "a" for c in visible(name))


def _shown(text: str) -> str:
    return " ".join(text.split())


def _text_ok(written: Written, name: str) -> None:
    for out in written.text:
        hidden = [c for c in out if c != "\n" and needs_escape(c)]
        assert not hidden, f"text output shows hidden characters {hidden!r}"


def _markdown_ok(written: Written, twin: Written, name: str) -> None:
    assert len(written.markdown) == len(twin.markdown)
    for md, plain in zip(written.markdown, twin.markdown, strict=True):
        seen, expected = _parse(_gfm(md)), _parse(_gfm(plain))
        assert seen.tags == expected.tags, "the name formed Markdown elements or links"
        assert _shown(visible(name)) in _shown("".join(seen.text)), "the name is not shown"


def _html_ok(written: Written, twin: Written, name: str) -> None:
    for page, plain in zip(written.html, twin.html, strict=True):
        seen, expected = _parse(page), _parse(plain)
        assert seen.tags == expected.tags, "the name formed HTML elements or attributes"
        assert _shown(visible(name)) in _shown("".join(seen.text))


def _sh_ok(written: Written, sandbox: Path) -> None:
    for i, script in enumerate(written.sh):
        path = sandbox.parent / f"runbook-{i}.sh"
        path.write_text(script, encoding="utf-8")
        syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert syntax.returncode == 0, syntax.stderr
        dry = subprocess.run(
            ["bash", str(path)], cwd=sandbox, capture_output=True, text=True, timeout=60,
            env={"PATH": "/usr/bin:/bin", "HOME": str(sandbox)},
        )  # fmt: skip
        assert dry.returncode == 0, dry.stderr
        assert not list(sandbox.iterdir()), "the dry run ran something of the name"
        assert not [c for c in dry.stdout if c != "\n" and needs_escape(c)]
    if written.sh:
        paths = [str(p) for p in sorted(sandbox.parent.glob("runbook-*.sh"))]
        check = subprocess.run([str(SHELLCHECK), *paths], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout


def _refusal_ok(written: Written) -> None:
    assert written.refused is not None
    assert written.refused.startswith("refused: ") and "\n" not in written.refused
    assert not needs_escape(written.refused)


def test_every_command_writes_through_the_registry() -> None:
    assert set(WRITERS) == set(COMMANDS), "a command that writes names must join WRITERS"


#: The runbooks' writer: its eleven scripts are each shellchecked, some 6 s an example
#: (the rest of the trial is milliseconds), so it draws fewer examples than the others.
RUNBOOKS = "runbook"


def _hostile_names(examples: int) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The trial's names: ``examples`` drawn, and the issue's two ids always."""

    def trial(test: Callable[..., None]) -> Callable[..., None]:
        drawn = given(name=st.one_of(NAMES, PRINTABLE))(
            example(name=ISSUE_ID_ONE_LINE)(example(name=ISSUE_ID)(test))
        )
        return settings(
            max_examples=examples,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )(drawn)

    return trial


@pytest.mark.parametrize("command", sorted(set(WRITERS) - {RUNBOOKS}))
@pytest.mark.trials  # a property over every command's writers: CI's integration phase
@_hostile_names(15)
def test_a_hostile_name_is_data_in_every_output(
    command: str, name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _hostile_name_is_data(command, name, tmp_path_factory)


@pytest.mark.trials
@_hostile_names(5)
def test_a_hostile_name_is_data_in_every_runbook(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    _hostile_name_is_data(RUNBOOKS, name, tmp_path_factory)


def _hostile_name_is_data(
    command: str, name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``command``'s outputs with ``name`` in every field the cluster could fill: each
    shows it as data, and a runbook refuses it in one line or runs none of it."""
    written, twin = WRITERS[command](name), WRITERS[command](_harmless(name))
    if written.refused:
        _refusal_ok(written)
        assert "\0" in name or needs_escape(name) or name in ("", ".", "..") or "/" in name
        return
    _text_ok(written, name)
    _markdown_ok(written, twin, name)
    _html_ok(written, twin, name)
    for out in written.json:
        json.loads(out)
    sandbox = tmp_path_factory.mktemp("sh") / "cwd"
    sandbox.mkdir()
    _sh_ok(written, sandbox)


def test_the_issues_id_is_refused_by_the_runbooks_in_one_line_naming_it() -> None:
    written = WRITERS["runbook"](ISSUE_ID)
    _refusal_ok(written)
    assert written.refused is not None
    assert "'bars-inj\\ntouch pwned-nl\\n$(touch pwned-sub)" in written.refused
    assert "control or invisible characters" in written.refused


def test_its_one_line_form_writes_runbooks_whose_header_stays_a_comment(tmp_path: Path) -> None:
    written = WRITERS["runbook"](ISSUE_ID_ONE_LINE)
    assert written.refused is None and len(written.sh) == 11  # the groups' two, nine apps'
    sandbox = tmp_path / "cwd"
    sandbox.mkdir()
    _sh_ok(written, sandbox)
    header = written.sh[0].split("set -euo pipefail")[0]
    assert all(line.startswith("#") for line in header.splitlines())


# --- each escaping function against an independent reader -------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(NAMES.filter(lambda s: "\0" not in s), min_size=1, max_size=8))
def test_bash_reads_each_shell_word_back_as_the_name(names: list[str]) -> None:
    script = "printf '%s\\0' " + " ".join(sh_word(n) for n in names) + "\n"
    assert all("\n" not in sh_word(n) for n in names)  # one line, even for a newline
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    expected = b"".join(n.encode("utf-8", "surrogatepass") + b"\0" for n in names)
    assert out == expected


def test_a_nul_is_refused_by_the_shell_word() -> None:
    with pytest.raises(ValueError, match="NUL"):
        sh_word("a\0b")


@settings(max_examples=200, deadline=None)
@given(NAMES)
def test_markdown_text_and_code_spans_show_the_name_and_build_nothing(name: str) -> None:
    plain = _harmless(name)
    for md, twin in ((markdown(name), markdown(plain)), (md_code(name), md_code(plain))):
        for where in ("{}", "- {}", "> {}", "# {}", "a {} b"):
            html = _gfm(where.format(md) + "\n")
            assert _parse(html).tags == _parse(_gfm(where.format(twin) + "\n")).tags, html
    cell = _gfm(f"| h |\n| --- |\n| {md_code(name, in_table=True)} |\n")
    assert re.search(r"<td><code>.*</code></td>|<td>\(empty\)</td>", cell, re.S), cell


@settings(max_examples=200, deadline=None)
@given(NAMES)
def test_html_text_is_text_in_an_element_and_an_attribute(name: str) -> None:
    page = _parse(f'<p title="{html_text(name)}">{html_text(name)}</p>')
    assert page.tags == [("p", ("title",)), ("/p", ())]
    assert "".join(page.text) == visible(name)


@settings(max_examples=200, deadline=None)
@given(NAMES, NAMES)
def test_work_directory_names_are_one_safe_component_and_never_shared(a: str, b: str) -> None:
    for name in (a, b):
        component = path_component(name)
        assert re.fullmatch(r"[A-Za-z0-9._%~-]+", component) and component not in (".", "..")
    if a != b and len(a) < 60 and len(b) < 60:
        assert path_component(a) != path_component(b)


def test_the_issues_two_ids_get_two_work_directories() -> None:
    assert path_component("a/b") != path_component("a_b")
