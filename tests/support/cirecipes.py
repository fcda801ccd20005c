"""The CI recipes of docs/ci/ as tests run them: their shell steps, run as the CI would,
against stand-ins for the tools and the code-hosting API.

A recipe is a file a user copies, so the tests run the file itself, not a copy of its
logic: :func:`shell_steps` reads the YAML (pyyaml) and returns each shell step, and
:func:`run` runs them as GitHub Actions (one ``bash -eo pipefail`` per step, stopping at
the first failure) or GitLab CI (a job's items in one ``bash -eo pipefail``) would.
Secrets and the runner's variables are the caller's to give (:data:`GITHUB_RUNNER_ENV`,
:data:`GITLAB_RUNNER_ENV`); a step whose ``${{ }}`` value is not given is refused, not
run with an empty value.

Stand-ins, each an executable on a ``bin`` directory put first on ``PATH``:

- :func:`install_fake_api`: ``curl`` that answers GitHub's issue-comment API and GitLab's
  merge-request-note API from a JSON state file and records each call (method, URL,
  JSON body, header names; never a header's value) as a line of JSON;
- :func:`install_stub`: any command (``migcheck``, ``terraform``) as a bash body;
- :func:`install_migcheck_stub`: ``migcheck`` that records its arguments and writes a
  fixed Markdown report to ``--output``, exiting with a given code.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "docs" / "ci"
GITHUB = CI / "github-actions.yml"
GITLAB = CI / "gitlab-ci.yml"
MARKER = "<!-- migcheck-gate -->"

#: What the GitHub runner sets that the recipe's steps read.
GITHUB_RUNNER_ENV = ("RUNNER_TEMP", "GITHUB_REPOSITORY", "GITHUB_API_URL")
#: What GitLab sets (predefined variables) or the project's CI/CD settings hold (secrets)
#: that the recipe's jobs read: a test gives every one its script names.
GITLAB_RUNNER_ENV = (
    "CI_API_V4_URL",
    "CI_PROJECT_ID",
    "CI_MERGE_REQUEST_IID",
    "CI_MERGE_REQUEST_DIFF_BASE_SHA",
    "KAFKA_BOOTSTRAP",
    "KAFKA_CLIENT_PROPERTIES",
    "MIGCHECK_GITLAB_TOKEN",
)
#: GitLab's top-level keywords: not jobs.
_GITLAB_KEYWORDS = frozenset(
    {
        "default",
        "include",
        "stages",
        "variables",
        "workflow",
        "image",
        "services",
        "cache",
        "before_script",
        "after_script",
    }
)
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")


@dataclass(frozen=True)
class ShellStep:
    """One shell step of a recipe, as written."""

    recipe: str  # "github-actions" or "gitlab-ci"
    job: str
    #: GitHub: the step's ``name``; GitLab: ``before_script[i]`` or ``script[i]``
    name: str
    script: str  # plain bash
    #: the workflow's, job's and step's ``env`` (GitHub) or the variables (GitLab), merged
    #: in that order, as written: a value may be a ``${{ }}`` expression
    env: Mapping[str, str] = field(default_factory=dict)
    condition: str | None = None  # GitHub's ``if:``

    def expressions(self) -> tuple[str, ...]:
        """The variables whose value is a ``${{ }}`` expression: the caller gives them."""
        return tuple(k for k, v in self.env.items() if _EXPRESSION.search(v))

    def literal_env(self) -> dict[str, str]:
        """The variables the file sets to plain text."""
        return {k: v for k, v in self.env.items() if not _EXPRESSION.search(v)}


def _text_map(raw: Any) -> dict[str, str]:
    """A YAML ``env``/``variables`` mapping as strings (a GitLab variable may be a mapping
    with ``value``)."""
    out: dict[str, str] = {}
    for key, value in (raw or {}).items():
        if isinstance(value, dict):
            value = value.get("value", "")
        out[str(key)] = "" if value is None else str(value)
    return out


def _load(path: Path) -> dict[Any, Any]:
    with path.open(encoding="utf-8") as f:
        data = yaml.safe_load(f)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a YAML mapping")
    return data


def github_steps(path: Path = GITHUB) -> list[ShellStep]:
    """Every ``run:`` step of every job of a GitHub Actions workflow, in order (steps that
    only ``uses:`` an action are left out)."""
    data = _load(path)
    top = _text_map(data.get("env"))
    steps: list[ShellStep] = []
    for job_id, job in (data.get("jobs") or {}).items():
        job_env = {**top, **_text_map(job.get("env"))}
        for i, step in enumerate(job.get("steps") or []):
            if "run" not in step:
                continue
            steps.append(
                ShellStep(
                    recipe="github-actions",
                    job=str(job_id),
                    name=str(step.get("name") or f"step {i}"),
                    script=str(step["run"]),
                    env={**job_env, **_text_map(step.get("env"))},
                    condition=step.get("if"),
                )
            )
    return steps


def _items(raw: Any) -> list[str]:
    if raw is None:
        return []
    return [str(raw)] if isinstance(raw, str) else [str(item) for item in raw]


def gitlab_steps(path: Path = GITLAB) -> list[ShellStep]:
    """Every ``before_script`` and ``script`` item of every job of a GitLab CI file, jobs in
    the order of their stages (file order within a stage), hidden jobs (``.name``) left
    out."""
    data = _load(path)
    stages = [str(s) for s in data.get("stages") or ["build", "test", "deploy"]]
    top = _text_map(data.get("variables"))
    default = data.get("default") or {}
    jobs = [
        (str(name), job)
        for name, job in data.items()
        if isinstance(job, dict) and name not in _GITLAB_KEYWORDS and not str(name).startswith(".")
    ]
    jobs.sort(key=lambda nj: stages.index(str(nj[1].get("stage", "test"))))
    steps: list[ShellStep] = []
    for name, job in jobs:
        env = {**top, **_text_map(job.get("variables"))}
        before = job.get("before_script", default.get("before_script", data.get("before_script")))
        for part, raw in (("before_script", before), ("script", job.get("script"))):
            for i, item in enumerate(_items(raw)):
                steps.append(ShellStep("gitlab-ci", name, f"{part}[{i}]", item, env))
    return steps


def shell_steps(path: Path) -> list[ShellStep]:
    """The shell steps of either recipe, told by its file name."""
    return gitlab_steps(path) if "gitlab" in path.name else github_steps(path)


def select(
    steps: Sequence[ShellStep], *, job: str | None = None, skip: Sequence[str] = ()
) -> list[ShellStep]:
    """``steps`` of ``job`` (all jobs when None), without those named in ``skip`` (an
    install step a test replaces with a stand-in already on ``PATH``)."""
    return [s for s in steps if (job is None or s.job == job) and s.name not in skip]


@dataclass(frozen=True)
class StepRun:
    """One run of bash: a GitHub step, or a GitLab job's items."""

    steps: tuple[ShellStep, ...]
    returncode: int
    stdout: str
    stderr: str


class MissingEnv(Exception):
    """A variable the recipe reads from the CI (an expression, a secret) was not given."""


def _environment(steps: Sequence[ShellStep], env: Mapping[str, str]) -> dict[str, str]:
    missing = sorted({k for s in steps for k in s.expressions() if k not in env})
    if steps and steps[0].recipe == "gitlab-ci":
        text = "\n".join(s.script for s in steps)
        missing += [k for k in GITLAB_RUNNER_ENV if re.search(rf"\${k}\b", text) and k not in env]
    if missing:
        raise MissingEnv(f"give these variables: {', '.join(missing)}")
    merged = dict(os.environ)
    for s in steps:
        merged.update(s.literal_env())
    merged.update(env)
    return merged


def _bash(steps: Sequence[ShellStep], env: Mapping[str, str], cwd: Path, timeout: float) -> StepRun:
    script = "\n".join(s.script for s in steps)
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=_environment(steps, env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return StepRun(tuple(steps), done.returncode, done.stdout, done.stderr)


def run(
    steps: Sequence[ShellStep], env: Mapping[str, str], cwd: Path, timeout: float = 600
) -> list[StepRun]:
    """Run ``steps`` as their CI would, in ``cwd`` with ``env`` over the process's own.

    GitHub Actions: each step in its own ``bash --noprofile --norc -eo pipefail`` (the
    runner's bash), stopping after the first that fails (the recipe has no
    ``if: always()`` step).  GitLab CI: each job's items in one shell, so a variable set
    by one item is seen by the next and ``exit`` ends the job.  Step conditions are not
    evaluated: select the steps to run.  Raises :class:`MissingEnv` before running
    anything when a variable the CI would give is missing from ``env``.
    """
    for group in _groups(steps):
        _environment(group, env)  # every variable given, before anything runs
    runs: list[StepRun] = []
    for group in _groups(steps):
        runs.append(_bash(group, env, cwd, timeout))
        if runs[-1].returncode != 0:
            break
    return runs


def _groups(steps: Sequence[ShellStep]) -> list[list[ShellStep]]:
    """GitHub: a step each; GitLab: a job's consecutive items together."""
    groups: list[list[ShellStep]] = []
    for s in steps:
        if groups and s.recipe == "gitlab-ci" and groups[-1][-1].job == s.job:
            groups[-1].append(s)
        else:
            groups.append([s])
    return groups


def install_stub(bin_dir: Path, name: str, body: str) -> Path:
    """An executable ``bin_dir/name`` running ``body`` in bash."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(f"#!/usr/bin/env bash\nset -euo pipefail\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def install_migcheck_stub(bin_dir: Path, markdown: str, exit_code: int, argv_log: Path) -> Path:
    """``migcheck`` that appends its arguments (one JSON list a line) to ``argv_log``,
    writes ``markdown`` to the file after ``--output``, and exits ``exit_code``."""
    report = bin_dir / "stub-report.md"
    bin_dir.mkdir(parents=True, exist_ok=True)
    report.write_text(markdown, encoding="utf-8")
    return install_stub(
        bin_dir,
        "migcheck",
        f"""record='import json, sys; print(json.dumps(sys.argv[1:]))'
{_q(Path(sys.executable))} -c "$record" "$@" >>{_q(argv_log)}
out=
while [ $# -gt 0 ]; do
  if [ "$1" = --output ]; then out=$2; fi
  shift
done
if [ -n "$out" ]; then cp {_q(report)} "$out"; fi
exit {int(exit_code)}""",
    )


def _q(path: Path) -> str:
    return "'" + str(path).replace("'", "'\\''") + "'"


@dataclass
class FakeApi:
    """The stand-in API's files: ``state`` (JSON: ``comments``, ``user``, ``next_id``) and
    ``log`` (one JSON object a call)."""

    state: Path
    log: Path

    def comments(self) -> list[dict[str, Any]]:
        return list(json.loads(self.state.read_text(encoding="utf-8"))["comments"])

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


def install_fake_api(
    bin_dir: Path,
    workdir: Path,
    comments: Sequence[Mapping[str, Any]] = (),
    user: Mapping[str, Any] | None = None,
) -> FakeApi:
    """A ``curl`` on ``bin_dir`` that answers the recipes' calls from a state in
    ``workdir``, seeded with ``comments``: each an ``id``, a ``body``, its ``thread`` (the
    pull or merge request's number in the URL, as text), and its author as GitHub says it
    (``user: {login}``) or GitLab does (``author: {id}``).  ``user`` is what GitLab's
    ``/user`` answers (the token's own user) and the author of every comment it creates,
    under both names."""
    me = dict(user or {"id": 7, "username": "project_1_bot", "login": "github-actions[bot]"})
    state = workdir / "fake-api-state.json"
    log = workdir / "fake-api-log.jsonl"
    first = 1 + max((int(c["id"]) for c in comments), default=100)
    state.write_text(
        json.dumps({"comments": [dict(c) for c in comments], "user": me, "next_id": first}),
        encoding="utf-8",
    )
    script = _FAKE_CURL.replace("@STATE@", repr(str(state))).replace("@LOG@", repr(str(log)))
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / "curl"
    path.write_text(f"#!{sys.executable}\n{script}", encoding="utf-8")
    path.chmod(0o755)
    return FakeApi(state, log)


#: The stand-in ``curl``: the flags the recipes use (-f -s -S, -X, -H @file, -H text,
#: --data-binary @file), the URL, and GitHub's and GitLab's routes for comments and notes.
_FAKE_CURL = r"""
import json, re, sys
from urllib.parse import parse_qs, urlsplit

STATE, LOG = @STATE@, @LOG@
args = sys.argv[1:]
method, headers, data, url, fail = "GET", [], None, None, False
i = 0
while i < len(args):
    a = args[i]
    if a in ("-X", "--request"):
        method = args[i + 1]; i += 1
    elif a in ("-H", "--header"):
        h = args[i + 1]; i += 1
        if h.startswith("@"):
            headers += [line.split(":", 1)[0] for line in open(h[1:]).read().splitlines() if line]
        else:
            headers.append(h.split(":", 1)[0])
    elif a in ("--data-binary", "-d", "--data"):
        d = args[i + 1]; i += 1
        data = open(d[1:], encoding="utf-8").read() if d.startswith("@") else d
        if method == "GET":
            method = "POST"
    elif a.startswith("-") and not a.startswith("--") and set(a[1:]) <= set("fsSL"):
        fail = fail or "f" in a
    elif a.startswith("http"):
        url = a
    else:
        sys.exit(f"fake curl: unexpected argument {a!r}")
    i += 1
body = json.loads(data) if data else None
with open(LOG, "a", encoding="utf-8") as f:
    f.write(json.dumps({"method": method, "url": url, "body": body, "headers": headers}) + "\n")
state = json.load(open(STATE, encoding="utf-8"))
parts = urlsplit(url)
path, query = parts.path, parse_qs(parts.query)
me = state["user"]

def save():
    json.dump(state, open(STATE, "w", encoding="utf-8"))

def new(thread):
    c = {"id": state["next_id"], "body": body["body"], "thread": thread,
         "user": {"login": me.get("login")},
         "author": {"id": me.get("id"), "username": me.get("username")}}
    state["next_id"] += 1
    state["comments"].append(c)
    save()
    return c

def page(thread):
    mine = [c for c in state["comments"] if c.get("thread") == thread]
    per, n = int(query.get("per_page", ["30"])[0]), int(query.get("page", ["1"])[0])
    return mine[(n - 1) * per : n * per]

def edit(cid):
    for c in state["comments"]:
        if str(c["id"]) == cid:
            c["body"] = body["body"]
            save()
            return c
    return None

out, status = None, 200
m_gh_list = re.search(r"/repos/[^/]+/[^/]+/issues/(\d+)/comments$", path)
m_gh_edit = re.search(r"/repos/[^/]+/[^/]+/issues/comments/(\d+)$", path)
m_gl_list = re.search(r"/projects/[^/]+/merge_requests/(\d+)/notes$", path)
m_gl_edit = re.search(r"/projects/[^/]+/merge_requests/(\d+)/notes/(\d+)$", path)
if path.endswith("/user") and method == "GET":
    out = me
elif (m := m_gh_list or m_gl_list) and method == "GET":
    out = page(m.group(1))
elif (m := m_gh_list or m_gl_list) and method == "POST":
    out, status = new(m.group(1)), 201
elif m_gh_edit and method == "PATCH":
    out = edit(m_gh_edit.group(1))
elif m_gl_edit and method == "PUT":
    out = edit(m_gl_edit.group(2))
if out is None:
    status, out = 404, {"message": "Not Found"}
print(json.dumps(out))
if status >= 400 and fail:
    sys.stderr.write(f"curl: (22) The requested URL returned error: {status}\n")
    sys.exit(22)
"""
