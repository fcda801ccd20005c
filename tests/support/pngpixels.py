"""A PNG's pixels with the standard library alone (zlib): the screenshot tests' reader.

Chromium writes 8-bit RGB or RGBA, non-interlaced; that is all this reads (anything
else is an error, not a guess).  No Pillow: the test environment does not carry it,
and unfiltering scanlines is the whole of what a colour check needs.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {2: 3, 6: 4}  # colour type -> bytes per pixel (RGB, RGBA)


class Png:
    """The decoded pixels of one PNG file: ``png.rgb(x, y)``."""

    def __init__(self, path: Path) -> None:
        data = path.read_bytes()
        if not data.startswith(_SIGNATURE):
            raise ValueError(f"{path}: not a PNG")
        header, idat = _chunks(data)
        self.width, self.height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
        if depth != 8 or colour not in _CHANNELS or interlace:
            raise ValueError(f"{path}: depth {depth}, colour type {colour}, interlace {interlace}")
        self._bpp = _CHANNELS[colour]
        self._rows = _unfilter(zlib.decompress(idat), self.width * self._bpp, self._bpp)

    def rgb(self, x: int, y: int) -> tuple[int, int, int]:
        """The pixel at column ``x``, row ``y`` (alpha, if any, dropped)."""
        i = x * self._bpp
        r, g, b = self._rows[y][i : i + 3]
        return r, g, b


def _chunks(data: bytes) -> tuple[bytes, bytes]:
    """The IHDR payload and every IDAT payload joined."""
    pos, header, idat = len(_SIGNATURE), b"", bytearray()
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return header, bytes(idat)


def _unfilter(raw: bytes, stride: int, bpp: int) -> list[bytes]:
    """Each scanline with its filter (None, Sub, Up, Average, Paeth) undone."""
    rows: list[bytes] = []
    prev = bytearray(stride)
    for start in range(0, len(raw), stride + 1):
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + _predict(kind, a, b, c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return rows


def _predict(kind: int, a: int, b: int, c: int) -> int:
    if kind == 0:
        return 0
    if kind == 1:
        return a
    if kind == 2:
        return b
    if kind == 3:
        return (a + b) // 2
    if kind == 4:
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else b if pb <= pc else c
    raise ValueError(f"PNG filter type {kind}")
