"""The opt-in tofu lane (``tox -e tofu``): collected only when ``MIGCHECK_TOFU`` is set, so
the default suite neither builds OpenTofu nor reports a skip for it.  Its fixtures: the
harness's broker, the tofu binary with the locally built Kafka provider, and the Java side
of the broker (produce, tools) for the real apps."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafkatest import KAFKA_LOCAL, REPO, Kafka, compile_fixture, state_dir
from tofurun import PROVIDER, PROVIDER_VERSION, run_tofu

collect_ignore_glob = [] if os.environ.get("MIGCHECK_TOFU") else ["test_*.py"]


@pytest.fixture(scope="session")
def bootstrap() -> Iterator[str]:
    """The harness's broker: ``MIGCHECK_TEST_BOOTSTRAP``, else scripts/kafka-local (stopped
    again only when this run started it)."""
    if existing := os.environ.get("MIGCHECK_TEST_BOOTSTRAP"):
        yield existing
        return
    running = subprocess.run([str(KAFKA_LOCAL), "status"], capture_output=True).returncode == 0
    out = run_tofu([str(KAFKA_LOCAL), "start"], REPO, dict(os.environ), timeout=300)
    try:
        yield out.strip().splitlines()[-1]
    finally:
        if not running:
            subprocess.run([str(KAFKA_LOCAL), "stop"], capture_output=True, check=False)


@pytest.fixture(scope="session")
def tofu_env(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """The tofu binary and an environment whose CLI config installs the provider from a
    local filesystem mirror holding the local build: ``tofu init`` then asks no registry
    (none is reachable here), and the lock file records the build's own hash."""
    out = run_tofu([str(REPO / "scripts" / "tofu-build")], REPO, dict(os.environ), timeout=3600)
    tofu, provider_dir = out.strip().splitlines()[-2:]
    mirror = tmp_path_factory.mktemp("mirror")
    target = mirror / PROVIDER / PROVIDER_VERSION / "linux_amd64"
    target.mkdir(parents=True)
    shutil.copy(
        Path(provider_dir) / "terraform-provider-kafka",
        target / f"terraform-provider-kafka_v{PROVIDER_VERSION}",
    )
    config = tmp_path_factory.mktemp("tofurc") / "tofurc"
    config.write_text(
        "provider_installation {\n"
        f'  filesystem_mirror {{\n    path = "{mirror}"\n    include = ["{PROVIDER}"]\n  }}\n'
        f'  direct {{\n    exclude = ["{PROVIDER}"]\n  }}\n'
        "}\n"
    )
    env = dict(os.environ, TF_CLI_CONFIG_FILE=str(config), TF_IN_AUTOMATION="1")
    env["CHECKPOINT_DISABLE"] = "1"
    return tofu, env


@pytest.fixture(scope="session")
def kafka(bootstrap: str) -> Iterator[Kafka]:
    """The broker's Java side (produce, Kafka's tools) for the real apps."""
    k = Kafka(bootstrap, compile_fixture(state_dir()), None)
    try:
        yield k
    finally:
        k.close()
