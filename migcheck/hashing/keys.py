"""Turning keys typed by a person into the exact bytes a Kafka serializer wrote, and back.

The partitioner hashes serialized bytes, so ``42`` as a Java ``Long`` key
(``LongSerializer``: 8 bytes big-endian) lands somewhere else than ``"42"`` as a
``String`` key.  The typed encoders below follow Kafka's own serializers in
``org.apache.kafka.common.serialization``.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
import uuid
from collections.abc import Callable

from migcheck.errors import KeyFormatError

#: How a key argument's text becomes bytes when the key is raw bytes.
KEY_ENCODINGS = ("utf8", "hex", "base64")

#: Kafka serializer formats a key argument can be parsed as.
KEY_TYPES = ("bytes", "string", "long", "int", "short", "double", "float", "uuid")


def decode_text(text: str, encoding: str) -> bytes:
    """Decode a raw key given as text: UTF-8 as is, hex, or base64."""
    try:
        if encoding == "utf8":
            return text.encode("utf-8", "surrogateescape")
        if encoding == "hex":
            return bytes.fromhex(text)
        if encoding == "base64":
            return base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error) as e:
        raise KeyFormatError(f"key {text!r} is not valid {encoding}: {e}") from None
    raise KeyFormatError(f"unknown key encoding {encoding!r}")


def _integer(text: str, fmt: str, java_type: str) -> bytes:
    try:
        value = int(text, 0)
        return struct.pack(fmt, value)
    except (ValueError, struct.error):
        raise KeyFormatError(f"key {text!r} is not a Java {java_type}") from None


def _floating(text: str, fmt: str, java_type: str) -> bytes:
    try:
        value = float(text)
    except ValueError:
        raise KeyFormatError(f"key {text!r} is not a Java {java_type}") from None
    if math.isnan(value):
        # Java's doubleToLongBits / floatToRawIntBits write the canonical quiet NaN.
        return b"\x7f\xf8\x00\x00\x00\x00\x00\x00" if fmt == ">d" else b"\x7f\xc0\x00\x00"
    try:
        return struct.pack(fmt, value)
    except OverflowError:
        raise KeyFormatError(f"key {text!r} is out of range for a Java {java_type}") from None


def _uuid(text: str) -> bytes:
    try:
        # UUIDSerializer writes UUID.toString(): lower-case, dashed, UTF-8.
        return str(uuid.UUID(text)).encode("ascii")
    except ValueError:
        raise KeyFormatError(f"key {text!r} is not a UUID") from None


_TYPED: dict[str, Callable[[str], bytes]] = {
    "string": lambda t: t.encode("utf-8", "surrogateescape"),  # StringSerializer, UTF-8
    "long": lambda t: _integer(t, ">q", "long"),  # LongSerializer: 8 bytes big-endian
    "int": lambda t: _integer(t, ">i", "int"),  # IntegerSerializer: 4 bytes big-endian
    "short": lambda t: _integer(t, ">h", "short"),  # ShortSerializer: 2 bytes big-endian
    "double": lambda t: _floating(t, ">d", "double"),  # DoubleSerializer: IEEE 754, 8 bytes
    "float": lambda t: _floating(t, ">f", "float"),  # FloatSerializer: IEEE 754, 4 bytes
    "uuid": _uuid,
}


def encode_key(text: str, key_type: str = "bytes", encoding: str = "utf8") -> bytes:
    """The bytes Kafka's serializer for ``key_type`` writes for ``text``.

    ``key_type="bytes"`` takes the text as raw bytes in ``encoding``; any other
    type parses the text as that Java type.
    """
    if key_type == "bytes":
        return decode_text(text, encoding)
    try:
        return _TYPED[key_type](text)
    except KeyError:
        raise KeyFormatError(f"unknown key type {key_type!r}") from None


def printable(key: bytes | None, limit: int = 64) -> str:
    """A key as a person can read it: UTF-8 text when it is clean text, else ``0x``-hex.

    Long keys are cut at ``limit`` characters with an ellipsis, because a report
    line is no place for a 1 MiB key.
    """
    if key is None:
        return "<null>"
    try:
        text = key.decode("utf-8")
        shown = text if text.isprintable() else "0x" + key.hex()
    except UnicodeDecodeError:
        shown = "0x" + key.hex()
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
