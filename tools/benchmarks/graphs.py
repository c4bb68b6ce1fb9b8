"""Benchmark graphs, written once as .npy files and reused.

Every graph lives in its own folder under the data directory
(build/bench-data by default):

    <dir>/edge_index.npy   int64 [2, E]: row 0 the source, row 1 the
                           destination of each edge (PyG's layout, and what
                           gnnc::rt::loadGraphDir reads)
    <dir>/meta.json        N, E, the generator and its parameters

The same files feed gnnc-bench and the PyG / DGL workers, so every
implementation runs on exactly the same edges.

  * cora, citeseer: the Planetoid graphs from the bundles in runtime/data
    (tools/pack_datasets.py's reader); their folders also hold x.npy, y.npy
    and the split masks, for the training-epoch benchmark.
  * rmat-S: R-MAT with the Graph500 parameters (a = 0.57, b = c = 0.19,
    d = 0.05), 2^S vertices, edge factor 16, generated as the Graph500
    reference code does (one quadrant choice per bit and edge, then a
    random relabelling of the vertices and a random order of the edges).
    Self-loops and repeated edges are kept, as the generator makes them.
  * er-S: Erdos-Renyi G(n, m) with the vertex and edge counts of rmat-S
    (sources and destinations uniform and independent).

Needs NumPy only.
"""
import json
import os
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
GRAPH500 = {"a": 0.57, "b": 0.19, "c": 0.19}
EDGE_FACTOR = 16
SEED = 20240601  # every generated graph derives its seed from this one


def _seed(name):
    return (SEED * 1000003 + sum(ord(ch) * 131 ** i for i, ch in enumerate(name))) % (2 ** 63)


def rmat_edges(scale, edge_factor=EDGE_FACTOR, a=0.57, b=0.19, c=0.19, seed=0):
    """Graph500 Kronecker / R-MAT generator (the reference's kronecker_generator.m)."""
    n = 1 << scale
    m = edge_factor * n
    rng = np.random.default_rng(seed)
    ab = a + b
    c_norm = c / (1.0 - ab)
    a_norm = a / ab
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for bit in range(scale):
        ii = rng.random(m, dtype=np.float32) > ab
        thresh = np.where(ii, np.float32(c_norm), np.float32(a_norm))
        jj = rng.random(m, dtype=np.float32) > thresh
        src |= ii.astype(np.int64) << bit
        dst |= jj.astype(np.int64) << bit
        del ii, jj, thresh
    perm = rng.permutation(n).astype(np.int64)
    src = perm[src]
    dst = perm[dst]
    order = rng.permutation(m)
    return n, np.stack([src[order], dst[order]])


def er_edges(scale, edge_factor=EDGE_FACTOR, seed=0):
    n = 1 << scale
    m = edge_factor * n
    rng = np.random.default_rng(seed)
    return n, np.stack([rng.integers(0, n, m, dtype=np.int64),
                        rng.integers(0, n, m, dtype=np.int64)])


def _planetoid(name):
    sys.path.insert(0, str(ROOT / "tools"))
    import pack_datasets  # noqa: E402  (the bundle format's reference reader)
    blob = (ROOT / "runtime" / "data" / f"{name}.gnnd").read_bytes()
    return pack_datasets.decode(blob)


def _write(folder, meta, arrays):
    folder.mkdir(parents=True, exist_ok=True)
    for key, value in arrays.items():
        tmp = folder / f".{key}.tmp.npy"
        np.save(tmp, value)
        os.replace(tmp, folder / f"{key}.npy")
    # meta.json last: its presence means the folder is complete.
    tmp = folder / ".meta.json.tmp"
    tmp.write_text(json.dumps(meta, indent=1) + "\n")
    os.replace(tmp, folder / "meta.json")


def ensure(name, data_dir):
    """The folder of graph `name` (generated on first use) and its meta."""
    folder = pathlib.Path(data_dir) / name
    meta_path = folder / "meta.json"
    if meta_path.exists():
        return folder, json.loads(meta_path.read_text())
    if name in ("cora", "citeseer"):
        d = _planetoid(name)
        ei = d["edge_index"]
        n = int(d["x"].shape[0])
        meta = {"name": name, "kind": "planetoid", "N": n, "E": int(ei.shape[1]),
                "features": int(d["x"].shape[1]), "classes": int(d["y"].max()) + 1,
                "source": f"runtime/data/{name}.gnnd"}
        _write(folder, meta, {"edge_index": ei, "x": d["x"], "y": d["y"],
                              "train_mask": d["train_mask"],
                              "val_mask": d["val_mask"],
                              "test_mask": d["test_mask"]})
    elif name.startswith("rmat-"):
        scale = int(name.split("-")[1])
        seed = _seed(name)
        n, ei = rmat_edges(scale, seed=seed, **GRAPH500)
        meta = {"name": name, "kind": "rmat", "scale": scale, "N": n,
                "E": int(ei.shape[1]), "edge_factor": EDGE_FACTOR,
                "params": GRAPH500, "seed": seed,
                "self_loops": int((ei[0] == ei[1]).sum())}
        _write(folder, meta, {"edge_index": ei})
    elif name.startswith("er-"):
        scale = int(name.split("-")[1])
        seed = _seed(name)
        n, ei = er_edges(scale, seed=seed)
        meta = {"name": name, "kind": "erdos-renyi", "scale": scale, "N": n,
                "E": int(ei.shape[1]), "edge_factor": EDGE_FACTOR, "seed": seed,
                "self_loops": int((ei[0] == ei[1]).sum())}
        _write(folder, meta, {"edge_index": ei})
    else:
        raise ValueError(f"unknown graph {name!r}")
    # Degree statistics, for the report.
    meta = json.loads(meta_path.read_text())
    if "max_in_degree" not in meta:
        ei = np.load(folder / "edge_index.npy", mmap_mode="r")
        indeg = np.bincount(ei[1], minlength=meta["N"])
        outdeg = np.bincount(ei[0], minlength=meta["N"])
        meta["max_in_degree"] = int(indeg.max())
        meta["max_out_degree"] = int(outdeg.max())
        meta["isolated_in"] = int((indeg == 0).sum())
        _write(folder, meta, {})
    return folder, meta


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "bench-data")
    for g in sys.argv[2:] or ["cora", "rmat-10"]:
        f, m = ensure(g, out)
        print(f, m)
