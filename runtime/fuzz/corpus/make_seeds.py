#!/usr/bin/env python3
"""Writes the seed corpora of the runtime's fuzz harnesses (runtime/fuzz),
without NumPy:

  npy/          .npy files: every dtype, C and Fortran order, 0-d to 3-d,
                empty arrays, format versions 2.0 and 3.0, NaN and infinity
  gnnd/         one mode byte (3: repair the payload size and the checksum)
                and a .gnnd bundle (docs/runtime.md)
  dataset-dir/  one flag byte and the six files of a dataset folder,
                separated by "@@npy@@" (DatasetDirFuzzer.cpp)
  loaders/      one flag byte and a SNAP edge list, a Matrix Market file or
                the eight CSV files of an OGB dataset separated by "@@csv@@"
                (LoadersFuzzer.cpp)

  python3 runtime/fuzz/corpus/make_seeds.py     # rewrites the four folders
"""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CODES = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "|b1": "?"}


def npy(descr, shape, values, fortran=False, version=1):
    """A .npy file; `values` are in the file's own order."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran else "False", dims)
    length_size = 2 if version == 1 else 4
    text += " " * ((64 - (8 + length_size + len(text) + 1) % 64) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(text))
    data = b"".join(struct.pack("<" + CODES[descr], v) for v in values)
    return (b"\x93NUMPY" + bytes([version, 0]) + length + text.encode() +
            data)


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | 0x80 if value else byte)
        if not value:
            return bytes(out)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def bundle(features, num_features, src, dst, labels, classes, masks):
    """A .gnnd bundle; `features` lists each node's nonzero columns."""
    n = len(labels)
    payload = bytearray()
    nnz = 0
    for cols in features:
        payload += varint(len(cols))
        prev = -1
        for c in cols:
            payload += varint(c - prev - 1)
            prev = c
        nnz += len(cols)
    fmt = "<H" if n <= 65536 else "<I"
    for v in list(src) + list(dst):
        payload += struct.pack(fmt, v)
    payload += bytes(labels)
    for mask in masks:
        bits = bytearray((n + 7) // 8)
        for v, m in enumerate(mask):
            if m:
                bits[v // 8] |= 1 << (v % 8)
        payload += bits
    header = b"GNNCDATA" + struct.pack("<IIIIIIQQ", 1, 0, n, num_features,
                                       len(src), classes, nnz, len(payload))
    body = header + bytes(payload)
    return body + struct.pack("<Q", fnv1a64(body))


def write(folder, name, data):
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    with open(os.path.join(HERE, folder, name), "wb") as f:
        f.write(data)


def main():
    nan, inf = float("nan"), float("inf")
    write("npy", "f4_2x3.npy", npy("<f4", [2, 3], [1, -2.5, 0, 3, 1e-30, -0.0]))
    write("npy", "f4_2x3_fortran.npy",
          npy("<f4", [2, 3], [1, 3, -2.5, 1e-30, 0, -0.0], fortran=True))
    write("npy", "f8_3x2_fortran.npy",
          npy("<f8", [3, 2], [0.1, 2, 3, 1e300, -5, 6], fortran=True))
    write("npy", "f8_nonfinite.npy", npy("<f8", [4], [nan, inf, -inf, 1e39]))
    write("npy", "f4_scalar.npy", npy("<f4", [], [7.5]))
    write("npy", "i4_5.npy", npy("<i4", [5], [0, -1, 2147483647, 3, -7]))
    write("npy", "i8_2x3x2_fortran.npy",
          npy("<i8", [2, 3, 2], list(range(12)), fortran=True))
    write("npy", "i8_2x0.npy", npy("<i8", [2, 0], []))
    write("npy", "b1_2x2x2.npy",
          npy("|b1", [2, 2, 2], [1, 0, 0, 1, 1, 1, 0, 0]))
    write("npy", "f4_v2.npy", npy("<f4", [2], [1, 2], version=2))
    write("npy", "i4_v3_fortran.npy",
          npy("<i4", [2, 2], [1, 3, 2, 4], fortran=True, version=3))

    # Ten nodes, six 0/1 features, three classes, five edges.
    features = [[j for j in range(6) if (v * 7 + j * 3) % 4 == 0 and v != 4]
                for v in range(10)]
    src, dst = [0, 1, 9, 3, 3], [1, 0, 2, 3, 8]
    labels = [0, 1, 2, 0, 1, 2, 0, 1, 2, 2]
    masks = [[v < 3 for v in range(10)], [3 <= v < 5 for v in range(10)],
             [v >= 5 for v in range(10)]]
    write("gnnd", "small.bin",
          b"\x03" + bundle(features, 6, src, dst, labels, 3, masks))
    write("gnnd", "empty.bin", b"\x03" + bundle([], 0, [], [], [], 1, [[], [], []]))
    write("gnnd", "one_node.bin",
          b"\x03" + bundle([[0, 4]], 5, [0], [0], [0], 1, [[1], [0], [0]]))

    x = [1.0 if cols and j in cols else 0.0
         for cols in features for j in range(6)]
    sep = b"@@npy@@"
    files = [npy("<f4", [10, 6], x),
             npy("<i8", [2, 5], src + dst),
             npy("<i8", [10], labels)] + [
                 npy("|b1", [10], [bool(m) for m in mask]) for mask in masks]
    write("dataset-dir", "small", b"\x00" + sep.join(files))
    xf = list(x)
    xf[7] = nan
    # float64 features in Fortran order, with a NaN, and NaN allowed.
    x64 = [xf[v * 6 + j] for j in range(6) for v in range(10)]
    files[0] = npy("<f8", [10, 6], x64, fortran=True)
    write("dataset-dir", "nan_f64_fortran", b"\x01" + sep.join(files))

    # The text loaders: flag bits 0-1 pick the format, bit 2 compresses,
    # bit 4 and bit 5 set options, bit 6 damages the cache.
    snap = b"# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n1 2\n\n4\t0\r\n"
    write("loaders", "snap", b"\x00" + snap)
    write("loaders", "snap_gzip_damage", b"\x44" + snap)
    write("loaders", "snap_relabel_reverse",
          b"\x30" + b"1000000007 5\n5 42\n42 1000000007\n5 5\n")
    mm = (b"%%MatrixMarket matrix coordinate real symmetric\n% comment\n"
          b"3 3 4\n1 1 0.5\n2 1 -2e0\n3 2 1.25e-1\n3 3 nan\n")
    write("loaders", "mm_real_symmetric", b"\x11" + mm)
    write("loaders", "mm_pattern_general",
          b"\x41" + b"%%MatrixMarket matrix coordinate pattern general\n"
          b"2 3 3\n1 3\n2 1\n2 2\n")
    write("loaders", "mm_integer",
          b"\x05" + b"%%MatrixMarket matrix coordinate integer general\n"
          b"2 2 2\n1 2 7\n2 1 -3\n")
    ogb = b"@@csv@@".join([b"4\n", b"3\n", b"0,1\n1,2\n3,0\n",
                           b"2\n0\n1\n2\n",
                           b"0.5,-1\n1e-3,2\n3,4.25\n-0.0,7\n",
                           b"0\n1\n", b"2\n", b"3\n"])
    write("loaders", "ogb", b"\x02" + ogb)
    write("loaders", "ogb_gzip_inverse_damage", b"\x56" + ogb)
    write("loaders", "ogb_unlabeled",
          b"\x22" + b"@@csv@@".join([b"3\n", b"1\n", b"0,2\n",
                                      b"1\n\nnan\n", b"1,nan\n2,3\n4,5\n",
                                      b"0\n", b"", b""]))


if __name__ == "__main__":
    main()
