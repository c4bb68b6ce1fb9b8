#!/usr/bin/env python3
"""Writes and prints small .npy files for the gnnc-interp lit tests, without
NumPy.

  npy.py write OUT DESCR SHAPE [--fortran] [VALUE...]
      SHAPE is comma-separated ("2,3", "5", "" for a scalar); the values are
      the data in the file's own order (column by column with --fortran);
      floats may be nan, inf, -inf.
  npy.py print FILE
      prints the shape, then every element in C order (repr of each value).
"""

import ast
import struct
import sys

FORMATS = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "|b1": "?"}


def header(descr, shape, fortran):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran else "False", dims)
    text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


def write(argv):
    out, descr, shape_text = argv[0], argv[1], argv[2]
    rest = argv[3:]
    fortran = bool(rest) and rest[0] == "--fortran"
    if fortran:
        rest = rest[1:]
    shape = [int(d) for d in shape_text.split(",") if d]
    code = FORMATS[descr]
    parse = float if code in "fd" else int
    data = b"".join(struct.pack("<" + code, parse(v)) for v in rest)
    with open(out, "wb") as f:
        f.write(header(descr, shape, fortran) + data)


def show(path):
    raw = open(path, "rb").read()
    length = struct.unpack("<H", raw[8:10])[0]
    meta = ast.literal_eval(raw[10:10 + length].decode())
    shape = list(meta["shape"])
    code = FORMATS[meta["descr"]]
    size = struct.calcsize(code)
    data = raw[10 + length:]
    values = [struct.unpack("<" + code, data[i:i + size])[0]
              for i in range(0, len(data), size)]
    if meta["fortran_order"] and len(shape) > 1:
        count = len(values)
        ordered = []
        for flat in range(count):
            index, rem = [], flat
            for d in reversed(shape):
                index.append(rem % d)
                rem //= d
            index.reverse()
            pos, stride = 0, 1
            for i, d in zip(index, shape):
                pos += i * stride
                stride *= d
            ordered.append(values[pos])
        values = ordered
    print("shape", shape)
    print(" ".join(repr(v) for v in values))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2:])
    else:
        show(sys.argv[2])
