"""OpenTofu as the tofu lane runs it (tests/tofu): the Kafka provider's address and
version, each module's terraform block, and a tofu (or tool) command that fails the test
with its output."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

PROVIDER = "registry.opentofu.org/mongey/kafka"
PROVIDER_VERSION = os.environ.get("MIGCHECK_KAFKA_PROVIDER_VERSION", "v0.13.1").lstrip("v")
#: Every module's terraform block: the provider, at the version the mirror holds.
REQUIRED = (
    "terraform {\n  required_providers {\n"
    f'    kafka = {{ source = "Mongey/kafka", version = "{PROVIDER_VERSION}" }}\n'
    "  }\n}\n"
)


def run_tofu(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout
