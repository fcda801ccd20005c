"""The session-scoped real Spark session (embedded local mode) for tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from migcheck.spark import get_session


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = get_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()
