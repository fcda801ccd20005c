"""One vocabulary for counts, help texts a person reads, Markdown without stray escapes
(issue 43).

``--partitions`` is the current count and ``--to`` the proposed one in every command; the
old spellings (``analyze --from N``, ``plan --set TOPIC=N``) still work for one release and
say, in one stderr line, which spelling replaces them.  Every ``--help`` is plain text: no
reST markup from the docstrings it is made of.
"""

from __future__ import annotations

import re
from pathlib import Path

import cmarkgfm
import pytest
from click.testing import CliRunner
from cmarkgfm.cmark import Options
from oracles import run_cli

from migcheck.cli.main import cli

DESCRIBE = Path(__file__).resolve().parents[2] / "fixtures" / "java" / "streams" / "describe"

#: What reST leaves in a text when nothing renders it: double backticks and roles.
RST = re.compile(r"``|:(?:func|class|mod|attr|meth|data|exc|ref):`")

COMMANDS = ("partition", "analyze", "readers", "app", "plan", "runbook", "copy", "gate", "render")


def _deprecation_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "deprecated" in line]


def _untimed(report: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", report)


def _offline_plan(*change: str):
    count = str(DESCRIBE / "rekey-count.txt")
    return run_cli(
        "plan", "--topology", count, "--partitions", "orders=6", *change, "--format", "json"
    )


def test_plan_set_still_works_and_names_to_on_stderr() -> None:
    new = _offline_plan("--to", "orders=12")
    old = _offline_plan("--set", "orders=12")
    assert new.returncode == old.returncode == 1, old.stderr  # the change would crash the app
    assert _untimed(old.stdout) == _untimed(new.stdout)  # the same report but for its time
    assert _deprecation_lines(new.stderr) == []
    assert _deprecation_lines(old.stderr) == [
        "migcheck: --set is deprecated and goes in the next release; use --to TOPIC=N"
    ]


def test_plan_refuses_both_spellings_at_once() -> None:
    p = _offline_plan("--to", "orders=12", "--set", "orders=12")
    assert p.returncode == 2 and "give only --to" in p.stderr, p.stderr


def test_analyze_from_still_gives_the_current_count(tmp_path: Path) -> None:
    keys = tmp_path / "keys.csv"
    keys.write_text("key\na\n")
    # 9 current, 6 proposed: refused before any read, naming the count --from gave
    for flag in ("--partitions", "--from"):
        p = run_cli("analyze", "--keys-file", str(keys), flag, "9", "--to", "6")
        assert p.returncode == 2, p.stderr
        assert "below the current 9 partitions" in p.stderr, p.stderr
    assert _deprecation_lines(p.stderr) == [
        "migcheck: --from is deprecated and goes in the next release; use --partitions N"
    ]
    missing = run_cli("analyze", "--keys-file", str(keys), "--to", "6")
    assert missing.returncode == 2 and "--keys-file needs --partitions N" in missing.stderr


def _help(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--help"], prog_name="migcheck")
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_no_help_text_shows_rest_markup(command: str) -> None:
    text = _help(command)
    assert not RST.search(text), RST.search(text)
    assert "--set" not in text and "--from " not in text  # the old spellings stay hidden


def test_the_group_help_lists_every_command_without_markup() -> None:
    text = _help()
    assert not RST.search(text)
    assert all(re.search(rf"^  {name}\b", text, re.MULTILINE) for name in COMMANDS), text


def test_the_count_options_are_partitions_and_to() -> None:
    assert "--to TOPIC=N" in _help("plan") and "--partitions TOPIC=N" in _help("plan")
    analyze = _help("analyze")
    assert "--partitions N" in analyze and "--to N[,M...]" in analyze


def test_copy_does_not_call_its_cluster_read_only() -> None:
    text = _help("copy")
    assert "read-only" not in text
    assert "writes" in " ".join(text.split())  # it says that it writes into --into


def _gfm(md: str) -> str:
    """GitHub's own renderer (cmark-gfm), as tests/unit/test_untrusted.py uses it."""
    return cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)


@pytest.mark.parametrize(
    "args",
    [
        ("--instances", "2", "--threads", "4", "--to", "orders=12"),  # a CRASH proposal
        ("--instances", "12", "--threads", "1"),  # enough threads: points to app and runbook
    ],
)
def test_the_plans_markdown_shows_no_backslash_or_backtick_on_github(args: tuple[str, ...]) -> None:
    count = str(DESCRIBE / "rekey-count.txt")
    p = run_cli(
        "plan", "--topology", count, "--partitions", "orders=6", *args, "--format", "markdown"
    )
    assert p.returncode in (0, 1), p.stderr
    html = _gfm(p.stdout)
    # what a reader sees: the page's text, none of it a stray escape or backtick
    assert "\\`" not in p.stdout and "`" not in html and "\\" not in html, html
    assert "migcheck app" in html and "migcheck runbook" in html
