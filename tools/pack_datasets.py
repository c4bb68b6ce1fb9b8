#!/usr/bin/env python3
"""Packs the Planetoid datasets into the runtime's bundle format (.gnnd).

Reads DATASETS/<name>/{edge_index,x,y,train_mask,val_mask,test_mask}.npy
(the layout of ../shared/datasets, see its README.md) and writes
runtime/data/<name>.gnnd, the compact lossless bundle that gnnc::rt::
loadDataset reads. The format is specified in docs/runtime.md ("Dataset
bundles"); this script is its reference writer and checks every assumption
the format makes (0/1 features, labels below 256, indices below 2^32) rather
than silently changing the data. Each bundle is decoded again and compared
with the .npy arrays before it is written.

    python3 tools/pack_datasets.py                 # cora and citeseer
    python3 tools/pack_datasets.py --check         # exit 1 if a bundle is stale
    python3 tools/pack_datasets.py --src DIR --out DIR pubmed

Needs only NumPy.
"""
import argparse
import pathlib
import struct
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_SRC = ROOT.parent / "shared" / "datasets"
DEFAULT_OUT = ROOT / "runtime" / "data"
DEFAULT_NAMES = ["cora", "citeseer"]

MAGIC = b"GNNCDATA"
VERSION = 1
# magic, version, flags, N, F, E, C, NNZ, payload size
HEADER = struct.Struct("<8sIIIIIIQQ")
assert HEADER.size == 48
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASKS = ["train_mask", "val_mask", "test_mask"]


class PackError(Exception):
    pass


def fnv1a64(data):
    """FNV-1a 64 of `data` (the plain byte loop: a few hundred KB, fast enough)."""
    h = FNV_OFFSET
    for b in data:
        h ^= b
        h = (h * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def varint(value, out):
    """Appends unsigned LEB128 `value` to bytearray `out`."""
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return


def read_varint(data, pos):
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def load(src, name):
    d = src / name
    arrays = {}
    for key in ["edge_index", "x", "y"] + MASKS:
        path = d / (key + ".npy")
        if not path.is_file():
            raise PackError(f"{path}: missing")
        arrays[key] = np.load(path, allow_pickle=False)
    return arrays


def check(name, a):
    x, y, ei = a["x"], a["y"], a["edge_index"]
    if x.dtype != np.float32 or x.ndim != 2:
        raise PackError(f"{name}/x.npy: expected float32 [N, F], got {x.dtype} {x.shape}")
    n, f = x.shape
    bad = ~((x == 0) | (x == 1))
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise PackError(f"{name}/x.npy: x[{r}, {c}] = {x[r, c]!r}; the bundle "
                        "format stores 0/1 features only")
    if np.signbit(x[x == 0]).any():
        raise PackError(f"{name}/x.npy: holds -0.0, which the bundle cannot keep")
    if y.dtype != np.int64 or y.shape != (n,):
        raise PackError(f"{name}/y.npy: expected int64 [{n}], got {y.dtype} {y.shape}")
    if n and (y.min() < 0 or y.max() > 255):
        raise PackError(f"{name}/y.npy: labels must lie in [0, 256), got "
                        f"[{y.min()}, {y.max()}]")
    if ei.dtype != np.int64 or ei.ndim != 2 or ei.shape[0] != 2:
        raise PackError(f"{name}/edge_index.npy: expected int64 [2, E], got "
                        f"{ei.dtype} {ei.shape}")
    if ei.size and (ei.min() < 0 or ei.max() >= n):
        raise PackError(f"{name}/edge_index.npy: indices must lie in [0, {n})")
    for m in MASKS:
        if a[m].dtype != np.bool_ or a[m].shape != (n,):
            raise PackError(f"{name}/{m}.npy: expected bool [{n}], got "
                            f"{a[m].dtype} {a[m].shape}")
    for value, what in [(n, "N"), (f, "F"), (ei.shape[1], "E")]:
        if value >= 2**32:
            raise PackError(f"{name}: {what} = {value} does not fit in 32 bits")


def encode(a):
    x, y, ei = a["x"], a["y"], a["edge_index"]
    n, f = x.shape
    e = ei.shape[1]
    c = int(y.max()) + 1 if n else 1
    payload = bytearray()
    # Features: per row, the count of nonzero columns, then the first column
    # and the gaps (col - previous col - 1), all as LEB128.
    nnz = 0
    for row in x:
        cols = np.flatnonzero(row)
        nnz += len(cols)
        varint(len(cols), payload)
        prev = -1
        for col in cols.tolist():
            varint(col - prev - 1, payload)
            prev = col
    # Edges: all sources, then all destinations, 2-byte indices when every
    # index fits (N <= 65536), else 4-byte.
    width = "<u2" if n <= 65536 else "<u4"
    payload += ei[0].astype(width).tobytes()
    payload += ei[1].astype(width).tobytes()
    # Labels, one byte each.
    payload += y.astype(np.uint8).tobytes()
    # Masks as bit sets, node v in byte v // 8, bit v % 8 (LSB first).
    for m in MASKS:
        payload += np.packbits(a[m], bitorder="little").tobytes()
    header = HEADER.pack(MAGIC, VERSION, 0, n, f, e, c, nnz, len(payload))
    body = header + bytes(payload)
    return body + struct.pack("<Q", fnv1a64(body))


def decode(blob):
    """An independent reading of `blob`, for the round-trip check."""
    magic, version, flags, n, f, e, c, nnz, size = HEADER.unpack_from(blob)
    assert magic == MAGIC and version == VERSION and flags == 0
    assert len(blob) == HEADER.size + size + 8
    (stored,) = struct.unpack_from("<Q", blob, HEADER.size + size)
    assert stored == fnv1a64(blob[:HEADER.size + size])
    pos = HEADER.size
    x = np.zeros((n, f), np.float32)
    total = 0
    for r in range(n):
        k, pos = read_varint(blob, pos)
        col = -1
        for _ in range(k):
            gap, pos = read_varint(blob, pos)
            col += gap + 1
            x[r, col] = 1
        total += k
    assert total == nnz
    width = np.dtype("<u2" if n <= 65536 else "<u4")
    src = np.frombuffer(blob, width, e, pos).astype(np.int64)
    pos += e * width.itemsize
    dst = np.frombuffer(blob, width, e, pos).astype(np.int64)
    pos += e * width.itemsize
    y = np.frombuffer(blob, np.uint8, n, pos).astype(np.int64)
    pos += n
    assert (y < c).all()
    out = {"x": x, "y": y, "edge_index": np.stack([src, dst])}
    nbytes = (n + 7) // 8
    for m in MASKS:
        bits = np.frombuffer(blob, np.uint8, nbytes, pos)
        out[m] = np.unpackbits(bits, bitorder="little")[:n].astype(np.bool_)
        pos += nbytes
    assert pos == HEADER.size + size
    return out


def pack(src, name):
    a = load(src, name)
    check(name, a)
    blob = encode(a)
    back = decode(blob)
    for key, value in a.items():
        if value.dtype != back[key].dtype or not np.array_equal(value, back[key]):
            raise PackError(f"{name}: {key} does not survive the round trip")
    return blob


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=DEFAULT_NAMES,
                        help="datasets to pack (default: cora citeseer)")
    parser.add_argument("--src", type=pathlib.Path, default=DEFAULT_SRC,
                        help=f"folder of .npy datasets (default: {DEFAULT_SRC})")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT,
                        help=f"output folder (default: {DEFAULT_OUT})")
    parser.add_argument("--check", action="store_true",
                        help="only check that the bundles in --out are up to date")
    args = parser.parse_args(argv)
    stale = False
    for name in args.names:
        try:
            blob = pack(args.src, name)
        except PackError as err:
            print(f"pack_datasets.py: error: {err}", file=sys.stderr)
            return 1
        path = args.out / (name + ".gnnd")
        if args.check:
            if not path.is_file() or path.read_bytes() != blob:
                print(f"{path}: out of date (run tools/pack_datasets.py)",
                      file=sys.stderr)
                stale = True
            continue
        args.out.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(blob)
        tmp.replace(path)
        print(f"{path}: {len(blob)} bytes")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
