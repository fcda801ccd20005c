"""The CI recipes of docs/ci/ run their shell steps with the real migcheck against the
harness's broker: the Terraform plan a stand-in ``terraform`` prints names a real topic,
and the comment goes to a stand-in of the code host's API (no network here).  What the
comment says comes from the gate itself; the recipes' own logic is unit-tested in
tests/unit/test_ci_recipes.py."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from cirecipes import MARKER, github_steps, gitlab_steps, install_fake_api, install_stub, run
from cirecipes import select as select_steps
from kafkatest import REPO, Kafka
from streamsapp import KEYS

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


def _workspace(kafka: Kafka, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A repository checkout whose plan grows a real topic read by nobody, 3 -> 6."""
    topic = kafka.create_topic("gate-ci", 3)
    kafka.produce(topic, [(k.encode(), b"v", None) for k in KEYS[:100]])
    plan = json.loads((REPO / "fixtures" / "gate" / "terraform" / "update.json").read_text())
    text = json.dumps(plan).replace('"orders"', json.dumps(topic))
    work, bin_dir = tmp_path / "work", tmp_path / "bin"
    work.mkdir()
    (tmp_path / "plan.json").write_text(text)
    shown = shlex.quote(str(tmp_path / "plan.json"))
    install_stub(bin_dir, "terraform", f'case " $* " in *" show "*) cat {shown} ;; esac')
    path = [str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]
    env = {
        "PATH": os.pathsep.join(path),
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "KAFKA_BOOTSTRAP": kafka.bootstrap,
        "KAFKA_CLIENT_PROPERTIES": "client.id=migcheck-gate-ci",
    }  # fmt: skip
    return work, bin_dir, env


def _comment(api_comments: list[dict]) -> str:
    (comment,) = api_comments
    return comment["body"]


def test_the_github_recipe_posts_the_real_gate_comment(kafka: Kafka, tmp_path: Path) -> None:
    work, bin_dir, env = _workspace(kafka, tmp_path)
    api = install_fake_api(bin_dir, tmp_path)
    runner = tmp_path / "runner"
    runner.mkdir()
    env |= {"RUNNER_TEMP": str(runner), "GITHUB_REPOSITORY": "acme/topics",
            "GITHUB_API_URL": "https://api.github.test", "GITHUB_TOKEN": "t0ken",
            "PR_NUMBER": "7", "BASE_SHA": "0" * 40}  # fmt: skip
    runs = run(select_steps(github_steps(), skip=["Install migcheck"]), env, work, timeout=300)
    assert [r.returncode for r in runs] == [0] * len(runs), runs[-1].stderr
    body = _comment(api.comments())
    assert body.startswith(f"{MARKER}\n") and "MOVES" in body and "kafka\\_topic.orders" in body


def test_the_gitlab_recipe_posts_the_real_gate_note(kafka: Kafka, tmp_path: Path) -> None:
    work, bin_dir, env = _workspace(kafka, tmp_path)
    api = install_fake_api(bin_dir, tmp_path)
    props = tmp_path / "client.properties"  # a GitLab variable of type File: its path
    props.write_text(env["KAFKA_CLIENT_PROPERTIES"] + "\n")
    env |= {"KAFKA_CLIENT_PROPERTIES": str(props),
            "CI_API_V4_URL": "https://gitlab.test/api/v4", "CI_PROJECT_ID": "9",
            "CI_MERGE_REQUEST_IID": "3", "CI_MERGE_REQUEST_DIFF_BASE_SHA": "0" * 40,
            "MIGCHECK_GITLAB_TOKEN": "t0ken"}  # fmt: skip
    steps = [s for s in gitlab_steps() if not s.name.startswith("before_script")]
    runs = run(steps, env, work, timeout=300)
    assert [r.returncode for r in runs] == [0] * len(runs), runs[-1].stderr
    body = _comment(api.comments())
    assert body.startswith(f"{MARKER}\n") and "MOVES" in body
