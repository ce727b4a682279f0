"""A page rendered by a real headless Chromium (Debian's, installed by scripts/install-tests.sh):
its screenshot, and the colours of its pixels read back."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(page: Path, out: Path, size: tuple[int, int] = (1000, 500)) -> Path:
    done = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={out}", f"--window-size={size[0]},{size[1]}", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.is_file(), done.stderr[-2000:]
    return out


def pixel_colours(png: Path) -> Counter[tuple[int, int, int]]:
    """How many pixels of each RGB colour an 8-bit RGB(A), non-interlaced PNG has."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour_type = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour_type in (2, 6), (depth, colour_type)
    channels = 4 if colour_type == 6 else 3
    raw, stride = zlib.decompress(b"".join(chunks)), width * channels
    previous, counts = bytearray(stride), Counter()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up),
                           (abs(guess - corner), 2, corner))  # fmt: skip
                line[i] = (line[i] + near[2]) & 255
        counts.update(tuple(line[i : i + 3]) for i in range(0, stride, channels))
        previous = line
    return counts
