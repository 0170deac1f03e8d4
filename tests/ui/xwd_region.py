#!/usr/bin/env python3
"""Compares a rectangle of two X window dumps (xwd -root): prints how many of its pixels differ.

Usage: xwd_region.py BEFORE.xwd AFTER.xwd X Y WIDTH HEIGHT
"""
import struct
import sys

import numpy


def read_xwd(path):
    data = open(path, "rb").read()
    if len(data) < 100:
        sys.exit(f"{path}: not an X window dump ({len(data)} bytes)")
    fields = struct.unpack(">25I", data[:100])
    header_size, width, height = fields[0], fields[4], fields[5]
    bits_per_pixel, bytes_per_line, ncolors = fields[11], fields[12], fields[19]
    if bits_per_pixel not in (24, 32):
        sys.exit(f"{path}: {bits_per_pixel} bits per pixel; a 24-bit colour screen is expected")
    start = header_size + 12 * ncolors
    if len(data) < start + height * bytes_per_line:
        sys.exit(f"{path}: truncated ({len(data)} bytes for a {width}x{height} screen)")
    rows = numpy.frombuffer(data, dtype=numpy.uint8, count=height * bytes_per_line, offset=start).reshape(height, bytes_per_line)
    step = bits_per_pixel // 8
    # One value per pixel from its bytes (whatever their order, equal pixels give equal values).
    pixels = rows[:, : width * step].reshape(height, width, step).astype(numpy.uint32)
    value = numpy.zeros((height, width), dtype=numpy.uint32)
    for b in range(3 if step == 4 else step):
        value = (value << 8) | pixels[:, :, b]
    return value


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__.strip())
    before, after = read_xwd(sys.argv[1]), read_xwd(sys.argv[2])
    if before.shape != after.shape:
        sys.exit(f"the dumps differ in size: {before.shape[1]}x{before.shape[0]} and {after.shape[1]}x{after.shape[0]}")
    x, y, w, h = (int(v) for v in sys.argv[3:7])
    # A rectangle off the screen would compare nothing and report no change: refuse it.
    if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > before.shape[1] or y + h > before.shape[0]:
        sys.exit(f"the region {w}x{h}+{x}+{y} is not inside the {before.shape[1]}x{before.shape[0]} screen")
    region = (slice(y, y + h), slice(x, x + w))
    print(int(numpy.count_nonzero(before[region] != after[region])))


if __name__ == "__main__":
    main()
