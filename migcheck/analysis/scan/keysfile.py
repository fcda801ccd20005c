"""An offline key export as the read: Parquet, CSV or JSON lines of keys and partitions.

The export's records become a table of :data:`~migcheck.kafka.fetch.RECORD_SCHEMA`
rows, which Spark groups into histories (:class:`~migcheck.analysis.scan.frame.HistoryFigures`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from migcheck.analysis.figures import Spec
from migcheck.analysis.scan.frame import HistoryFigures
from migcheck.analysis.scan.strategy import Loaded
from migcheck.errors import KeyFormatError, ReadError
from migcheck.hashing.keys import decode_text
from migcheck.kafka.config import first_line
from migcheck.kafka.fetch import RECORD_SCHEMA

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class KeysFile:
    """The export's table, grouped by Spark: it holds a row per record, not per key."""

    table: pa.Table
    spec: Spec

    def load(self, spark: SparkSession) -> Loaded:
        return HistoryFigures(spark.createDataFrame(self.table), self.spec), None


def read_keys_file(path: str, key_encoding: str, topic: str | None = None) -> pa.Table:
    """Load a key export (Parquet, CSV or JSON lines) as a table of :data:`RECORD_SCHEMA`.

    Columns: ``key`` (hex or text, see ``key_encoding``; empty cell = null key),
    ``partition`` (where the record is), and optionally ``value_size``,
    ``offset`` and ``topic``.  Without a ``topic`` column the file's stem names it.
    """
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    p = Path(path)
    if not p.is_file():
        raise ReadError(f"--keys-file {path}: no such file")
    suffix = p.suffix.lower()
    try:
        if suffix == ".parquet":
            table = pq.read_table(p)
        elif suffix == ".csv":
            table = pacsv.read_csv(
                p,
                convert_options=pacsv.ConvertOptions(
                    column_types={"key": pa.string()}, strings_can_be_null=True
                ),
            )
        elif suffix in (".json", ".jsonl", ".ndjson"):
            table = pajson.read_json(p)
        else:
            raise ReadError(f"--keys-file {path}: use .parquet, .csv or .jsonl")
    except (pa.ArrowInvalid, OSError) as e:
        raise ReadError(f"--keys-file {path}: {first_line(e)}") from None
    for required in ("key", "partition"):
        if required not in table.column_names:
            raise ReadError(f"--keys-file {path}: no {required!r} column")
    keys = _decode_keys(table.column("key").to_pylist(), key_encoding, path)
    try:
        return _records_table(table, keys, topic or p.stem)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
        raise ReadError(f"--keys-file {path}: {first_line(e)}") from None


def _records_table(table: pa.Table, keys: list[bytes | None], topic: str) -> pa.Table:
    """The export's columns as :data:`RECORD_SCHEMA` (Arrow refuses a bad cell, e.g. a
    partition that is not an integer)."""
    n = table.num_rows
    value_size = (
        table.column("value_size").to_pylist() if "value_size" in table.column_names else [0] * n
    )
    offsets = table.column("offset").to_pylist() if "offset" in table.column_names else range(n)
    topics = (
        [str(t) for t in table.column("topic").to_pylist()]
        if "topic" in table.column_names
        else [topic] * n
    )
    return pa.table(
        {
            "topic": topics,
            "partition": pa.array(table.column("partition").to_pylist(), pa.int32()),
            "offset": pa.array(list(offsets), pa.int64()),
            "key": pa.array(keys, pa.binary()),
            "key_size": pa.array([None if k is None else len(k) for k in keys], pa.int32()),
            "value_size": pa.array(value_size, pa.int32()),
            "timestamp": pa.array([None] * n, pa.int64()),
        },
        schema=RECORD_SCHEMA,
    )


def _decode_keys(values: list[object], encoding: str, path: str) -> list[bytes | None]:
    out: list[bytes | None] = []
    for i, v in enumerate(values):
        if v is None:
            out.append(None)
        elif isinstance(v, bytes):
            out.append(v)
        else:
            try:
                out.append(decode_text(str(v), encoding))
            except KeyFormatError as e:
                raise ReadError(f"--keys-file {path}, row {i + 1}: {e}") from None
    return out
