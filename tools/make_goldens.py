#!/usr/bin/env python3
"""Writes tests/goldens/: PyTorch Geometric reference outputs for the layers
of dsl-examples/{gcn,gat,sage_mean,sage_max,gin,appnp}.gnn.

One command, as root, from anywhere (Debian bookworm, fresh machine fine):

    python3 tools/make_goldens.py

It installs what it needs (idempotent: nothing is touched when it is already
there), then re-runs itself under Debian's /usr/bin/python3 and rewrites
tests/goldens/. The environment is
  * apt-get install --no-install-recommends python3-torch python3-numpy
    python3-scipy python3-jinja2 python3-tqdm python3-pyparsing
    python3-requests python3-psutil python3-pip
    (python3-torch 1.13.1+dfsg-4 is a CPU build; torch.__version__ = 1.13.0a0)
  * /usr/bin/python3 -m pip install --break-system-packages --no-deps
    -r tools/requirements-goldens.txt   (torch_geometric==2.3.1, pure Python)
The versions actually used are written into every case.json.

Options: --no-install (use what is there), --check (regenerate into a
temporary folder and compare with the committed goldens, exit 1 on a
difference beyond 1e-12 relative), --out DIR, --cora DIR.

Everything is float64 (torch.set_default_dtype(torch.float64)), parameters
come from numpy generators seeded by the case name, torch runs on one thread,
dropout is off (eval mode, p = 0). Each PyG result is also recomputed by an
independent numpy implementation of the dsl-examples semantics; the script
fails if the two differ by more than 1e-10 relative. Each case also gets a
fixed random cotangent c (expected/cotangent.npy) and torch autograd
gradients of sum(c * out) w.r.t. the layer's inputs (small graph only) and
parameters (expected/grad_*.npy, expected/grad_params/, mapped back to our
parameter layout); case.json "gradients" lists them. The data layout is
described in tests/goldens/README.md.
"""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
REQS = ROOT / "tools" / "requirements-goldens.txt"
DEB_PY = "/usr/bin/python3"
PYG_VERSION = "2.3.1"
APT_PACKAGES = [
    "python3-torch", "python3-numpy", "python3-scipy", "python3-jinja2",
    "python3-tqdm", "python3-pyparsing", "python3-requests", "python3-psutil",
    "python3-pip",
]
DEFAULT_CORA = ROOT.parent / "shared" / "datasets" / "cora"
CORA_REL = "../shared/datasets/cora"  # relative to the repository root

# --------------------------------------------------------------------------
# Stage 1: environment (standard library only, any python3)
# --------------------------------------------------------------------------


def _env_ok():
    if not os.path.exists(DEB_PY):
        return False
    probe = ("import torch, numpy, torch_geometric; "
             f"assert torch_geometric.__version__ == '{PYG_VERSION}'")
    return subprocess.run([DEB_PY, "-c", probe], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def _installed(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    return r.returncode == 0 and r.stdout.strip() == "install ok installed"


def install():
    if _env_ok():
        print("make_goldens: environment already present")
        return
    if os.geteuid() != 0:
        sys.exit("make_goldens: missing packages; run as root (apt-get, pip)")
    missing = [p for p in APT_PACKAGES if not _installed(p)]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if missing:
        print("make_goldens: apt-get install", " ".join(missing))
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-q",
                        "--no-install-recommends", *missing],
                       check=True, env=env)
    print("make_goldens: pip install -r", REQS.relative_to(ROOT))
    subprocess.run([DEB_PY, "-m", "pip", "install", "-q",
                    "--break-system-packages", "--no-deps", "-r", str(REQS)],
                   check=True)
    if not _env_ok():
        sys.exit("make_goldens: torch / torch_geometric still not importable")


# --------------------------------------------------------------------------
# Stage 2: generation (runs under /usr/bin/python3)
# --------------------------------------------------------------------------

SMALL_N, SMALL_F = 12, 5
# The second graph of the library's cases (power_graph).
POWER_N, POWER_E = 40, 160
REF_TOL = 1e-10     # PyG vs the numpy model of the dsl semantics
GRAD_NOTE = ("torch autograd (float64) of L = sum(cotangent * out) through "
             "the exact PyG computation that produced expected/out.npy; "
             "grad_<input>.npy = dL/d<input> (forward argument), "
             "grad_params/<name>.npy = dL/d<name> in this case's parameter "
             "layout (PyG gradients mapped back through the same transposes "
             "and indexing as the parameters). Graph-derived edge weights "
             "(GCN/APPNP normalisation) are constants.")
CHECK_TOL = 1e-12   # --check: regenerated vs committed


def generate(out_dir, cora_dir):
    import numpy as np
    import torch
    import torch_geometric
    from torch_geometric.nn.models.schnet import CFConv, ShiftedSoftplus
    from torch_geometric.nn import (APPNP, AGNNConv, CGConv, ClusterGCNConv,
                                    EdgeConv,
                                    FAConv, GATConv, GCN2Conv, GCNConv,
                                    FiLMConv, GeneralConv, GENConv, GINConv,
                                    GINEConv, PDNConv, PNAConv,
                                    GMMConv,
                                    GraphConv, LEConv, LGConv, NNConv,
                                    PointNetConv, ResGatedGraphConv,
                                    SAGEConv, SGConv, SimpleConv, SSGConv,
                                    SuperGATConv, TransformerConv,
                                    WLConvContinuous)
    from torch_geometric.utils import add_self_loops, scatter

    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    torch.manual_seed(0)

    versions = {
        "torch": torch.__version__ + " (Debian python3-torch "
                 + _deb_version("python3-torch") + ", CPU)",
        "torch_geometric": torch_geometric.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
    }
    NS = dict(torch=torch, GCNConv=GCNConv, GATConv=GATConv,
              SAGEConv=SAGEConv, GINConv=GINConv, APPNP=APPNP,
              SimpleConv=SimpleConv, LGConv=LGConv, SGConv=SGConv,
              SSGConv=SSGConv, GraphConv=GraphConv, LEConv=LEConv,
              GCN2Conv=GCN2Conv, ResGatedGraphConv=ResGatedGraphConv,
              AGNNConv=AGNNConv, FAConv=FAConv, TransformerConv=TransformerConv,
              CGConv=CGConv, GINEConv=GINEConv,
              WLConvContinuous=WLConvContinuous, EdgeConv=EdgeConv,
              NNConv=NNConv, GMMConv=GMMConv, PointNetConv=PointNetConv,
              GeneralConv=GeneralConv, SuperGATConv=SuperGATConv,
              FiLMConv=FiLMConv, ClusterGCNConv=ClusterGCNConv,
              CFConv=CFConv, ShiftedSoftplus=ShiftedSoftplus,
              GENConv=GENConv, PDNConv=PDNConv, PNAConv=PNAConv)

    def rng_for(name):
        return np.random.default_rng(zlib.crc32(name.encode()))

    def quant(a, bits=12):
        # Dyadic values (multiples of 2^-bits): exact in float64 and
        # compressible in git; the layers see them as ordinary numbers.
        return np.round(np.asarray(a) * 2.0 ** bits) / 2.0 ** bits

    def glorot(rng, shape, fan_in, fan_out):
        a = np.sqrt(6.0 / (fan_in + fan_out))
        return quant(rng.uniform(-a, a, size=shape))

    def small_vec(rng, shape, scale=0.1):
        return quant(rng.normal(0.0, scale, size=shape))

    def T(a):
        return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))

    def setp(param, arr):
        arr = np.asarray(arr, dtype=np.float64)
        assert tuple(param.shape) == arr.shape, (tuple(param.shape), arr.shape)
        with torch.no_grad():
            param.copy_(T(arr))

    def build(ctor):
        mod = eval(ctor, NS)  # the recorded string is the exact call
        mod.eval()
        return mod

    def npy(t):
        return t.detach().numpy().astype(np.float64)

    def reldiff(a, b):
        a, b = np.asarray(a), np.asarray(b)
        return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))

    # ---------------- graphs ----------------

    def small_graph():
        """12 vertices, directed. 10 has out-edges only, 11 is isolated,
        9 is a sink; self-loops 3->3 and 7->7; 0->1 and 4->2 doubled."""
        rng = np.random.default_rng(7)
        srcs = [s for s in range(11) if s != 9]
        edges = set()
        while len(edges) < 23:
            s = int(rng.choice(srcs))
            d = int(rng.integers(0, 10))
            if s != d:
                edges.add((s, d))
        edges = sorted(edges)
        edges += [(3, 3), (7, 7), (10, 9), (10, 5), (0, 1), (0, 1), (4, 2),
                  (4, 2)]
        edges = [edges[i] for i in rng.permutation(len(edges))]
        ei = np.array(edges, dtype=np.int64).T.copy()
        x = rng.normal(0.0, 1.0, size=(SMALL_N, SMALL_F))
        return ei, x

    def check_small(ei):
        n = SMALL_N
        indeg = np.bincount(ei[1], minlength=n)
        outdeg = np.bincount(ei[0], minlength=n)
        pairs = list(map(tuple, ei.T))
        assert 28 <= ei.shape[1] <= 34
        assert sum(indeg == 0) >= 2 and indeg[10] == 0 and indeg[11] == 0
        assert outdeg[9] == 0 and outdeg[11] == 0 and indeg[9] > 0
        assert any(s == d for s, d in pairs)
        assert len(set(pairs)) < len(pairs)
        return indeg, outdeg

    def with_loops(ei, n):
        loops = np.arange(n, dtype=np.int64)
        out = np.concatenate([ei, np.stack([loops, loops])], axis=1)
        ref, _ = add_self_loops(torch.from_numpy(ei), num_nodes=n)
        assert np.array_equal(out, ref.numpy())
        return out

    def ours_gcn_weight(ei, n):
        """Edge weight that the dsl GCN/APPNP loops apply to u -> v."""
        outdeg = np.bincount(ei[0], minlength=n).astype(np.float64)
        indeg = np.bincount(ei[1], minlength=n).astype(np.float64)
        return (1.0 / np.sqrt(np.maximum(outdeg[ei[0]], 1.0))
                / np.sqrt(np.maximum(indeg[ei[1]], 1.0)))

    # ------------- numpy models of the dsl-examples layers -------------

    def ref_gcn(ei, x, W, b):
        n = x.shape[0]
        src_norm = 1 / np.sqrt(np.maximum(np.bincount(ei[0], minlength=n), 1.0))
        dst_norm = 1 / np.sqrt(np.maximum(np.bincount(ei[1], minlength=n), 1.0))
        h = (x @ W) * src_norm[:, None]
        agg = np.zeros_like(h)
        np.add.at(agg, ei[1], h[ei[0]])
        return agg * dst_norm[:, None] + b

    def ref_gat(ei, x, W, a_src, a_dst, b, slope, concat):
        n = x.shape[0]
        H, C = a_src.shape
        h = (x @ W).reshape(n, H, C)
        es, ed = (h * a_src).sum(-1), (h * a_dst).sum(-1)       # [n, H]
        e = es[ei[0]] + ed[ei[1]]
        e = np.where(e > 0, e, slope * e)
        m = np.full((n, H), -np.inf)
        np.maximum.at(m, ei[1], e)
        ex = np.exp(e - m[ei[1]])
        s = np.zeros((n, H))
        np.add.at(s, ei[1], ex)
        a = ex / s[ei[1]]
        agg = np.zeros((n, H, C))
        np.add.at(agg, ei[1], a[:, :, None] * h[ei[0]])
        out = agg.reshape(n, H * C) if concat else agg.mean(1)
        return out + b

    def ref_sage_mean(ei, x, W_self, W_neigh, b):
        n = x.shape[0]
        h = x @ W_neigh
        s = np.zeros_like(h)
        np.add.at(s, ei[1], h[ei[0]])
        cnt = np.maximum(np.bincount(ei[1], minlength=n), 1)
        return x @ W_self + s / cnt[:, None] + b

    def ref_sage_max(ei, x, W_pool, b_pool, W_self, W_neigh, b):
        n = x.shape[0]
        p = np.maximum(x @ W_pool + b_pool, 0.0)
        m = np.full((n, p.shape[1]), -np.inf)
        np.maximum.at(m, ei[1], p[ei[0]])
        m[np.isneginf(m)] = 0.0            # empty neighbourhood: 0
        return x @ W_self + m @ W_neigh + b

    def ref_gin(ei, x, w, W1, b1, W2, b2, eps):
        agg = np.zeros_like(x)
        np.add.at(agg, ei[1], w[:, None] * x[ei[0]])
        z = (1 + eps) * x + agg
        return np.maximum(z @ W1 + b1, 0.0) @ W2 + b2

    def ref_appnp(ei, h0, k, alpha):
        n = h0.shape[0]
        src_norm = 1 / np.sqrt(np.maximum(np.bincount(ei[0], minlength=n), 1.0))
        dst_norm = 1 / np.sqrt(np.maximum(np.bincount(ei[1], minlength=n), 1.0))
        h = h0
        for _ in range(k):
            hs = h * src_norm[:, None]
            m = np.zeros_like(h)
            np.add.at(m, ei[1], hs[ei[0]])
            h = (1 - alpha) * m * dst_norm[:, None] + alpha * h0
        return h

    # ---------------- output ----------------

    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.iterdir():  # old cases only; README.md stays
        if old.is_dir() and (old / "case.json").exists():
            shutil.rmtree(old)
    summary = []

    def save(path, arr, dtype):
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, np.ascontiguousarray(arr, dtype=dtype),
                allow_pickle=False)

    def write_case(name, *, gnn, definition, hparams, graph, self_loops,
                   ei, n, inputs, params, expected, pyg, pyg_forward, notes,
                   checks, variant=None, extra=None, grads=None):
        d = out_dir / name
        d.mkdir()
        in_field = {}
        for k, v in inputs.items():
            if isinstance(v, str):          # "cora"
                in_field[k] = v
            else:
                save(d / f"{k}.npy", v, np.float64)
                in_field[k] = f"{k}.npy"
        if graph != "cora":
            # The graph as given, before any self-loops (see "self_loops").
            save(d / "edge_index.npy", ei, np.int64)
        for k, v in params.items():
            save(d / "params" / f"{k}.npy", v, np.float64)
        for k, v in expected.items():
            save(d / "expected" / f"{k}.npy", v, np.float64)
        grad_field = None
        if grads is not None:
            grad_field = {"cotangent": None, "inputs": {}, "params": {}}
            if grads["inputs"] or grads["params"]:
                save(d / "expected" / "cotangent.npy", grads["cotangent"],
                     np.float64)
                grad_field["cotangent"] = "expected/cotangent.npy"
            for k, v in grads["inputs"].items():
                save(d / "expected" / f"grad_{k}.npy", v, np.float64)
                grad_field["inputs"][k] = f"expected/grad_{k}.npy"
            for k, v in grads["params"].items():
                save(d / "expected" / "grad_params" / f"{k}.npy", v,
                     np.float64)
                grad_field["params"][k] = f"expected/grad_params/{k}.npy"
            grad_field["omitted"] = grads["omitted"]
            if "tie_rule" in grads:
                grad_field["tie_rule"] = grads["tie_rule"]
            if "exact_zero" in grads:
                grad_field["exact_zero"] = grads["exact_zero"]
                grad_field["exact_zero_note"] = (
                    "these gradients are 0 in exact arithmetic; autograd's "
                    "float64 rounding noise (below 1e-12 of the largest "
                    "gradient of the case) is stored as zeros")
            grad_field["definition"] = GRAD_NOTE
        meta = {
            "gnn": gnn,
            "definition": definition,
            "hparams": hparams,
            "inputs": in_field,
            "graph": graph,
            "self_loops": self_loops,
            "pyg": pyg,
            "pyg_forward": pyg_forward,
            "notes": notes,
            "versions": versions,
        }
        if variant is not None:
            meta["variant"] = variant
        meta["num_nodes"] = int(n)
        meta["num_edges"] = int(ei.shape[1] + (n if self_loops else 0))
        meta["expected"] = {k: list(v.shape) for k, v in expected.items()}
        meta["params"] = {k: list(np.shape(v)) for k, v in params.items()}
        if grad_field is not None:
            meta["gradients"] = grad_field
        if graph == "cora":
            meta["graph_path"] = CORA_REL
            meta["cora_sha256"] = cora_sha
        meta["checks"] = checks
        if extra:
            meta.update(extra)
        (d / "case.json").write_text(json.dumps(meta, indent=2) + "\n")
        summary.append((name, meta))

    LOOP_NOTE = ("self_loops: true means the layer sees the graph with one "
                 "self-loop (i, i) appended for every vertex i = 0..N-1 after "
                 "the listed edges, in vertex order, whether or not i already "
                 "had one (torch_geometric.utils.add_self_loops). Edge inputs "
                 "(none here) would follow that edge order.")

    # ---------------- data ----------------

    ei_s, x_s = small_graph()
    check_small(ei_s)
    n_s = SMALL_N

    def power_graph():
        """POWER_N vertices, POWER_E edges, power-law in-degrees: the
        destination of an edge is vertex r with probability proportional to
        (r + 1)^-1.3 (vertex 0 the hub), its source uniform; the last two
        vertices have no in-edges. Repeated edges and self-loops are kept
        as drawn."""
        rng = np.random.default_rng(1117)
        ranks = np.arange(POWER_N - 2)
        p_ = (ranks + 1.0) ** -1.3
        dst = rng.choice(ranks, size=POWER_E, p=p_ / p_.sum())
        src = rng.integers(0, POWER_N, size=POWER_E)
        ei = np.stack([src, dst]).astype(np.int64)
        x = quant(rng.normal(0.0, 1.0, size=(POWER_N, SMALL_F)))
        indeg = np.bincount(ei[1], minlength=POWER_N)
        assert indeg[0] >= 40 and indeg[-1] == indeg[-2] == 0
        assert np.any(ei[0] == ei[1])
        assert len(set(map(tuple, ei.T))) < POWER_E
        return ei, x

    ei_p, x_p = power_graph()
    n_p = POWER_N

    cora_dir = pathlib.Path(cora_dir)
    ei_c = np.load(cora_dir / "edge_index.npy")
    x_c = np.load(cora_dir / "x.npy").astype(np.float64)
    n_c = x_c.shape[0]
    assert ei_c.dtype == np.int64 and ei_c.shape[0] == 2
    assert not np.any(ei_c[0] == ei_c[1]), "Cora should hold no self-loops"
    cora_sha = {f: hashlib.sha256((cora_dir / f).read_bytes()).hexdigest()
                for f in ("edge_index.npy", "x.npy")}
    # Cora is symmetric: every u -> v has v -> u.
    fwd = set(map(tuple, ei_c.T))
    assert all((d, s) in fwd for s, d in fwd)

    def graph_args(kind, loops):
        ei, x, n = {"own": (ei_s, x_s, n_s), "power": (ei_p, x_p, n_p),
                    "cora": (ei_c, x_c, n_c)}[kind]
        if loops == "replace":  # PyG's remove_self_loops, add_self_loops
            ei = ei[:, ei[0] != ei[1]]
        used = with_loops(ei, n) if loops else ei
        return ei, x, n, used

    def x_input(kind, x):
        return {"x": x if kind == "own" else "cora"}

    def assert_ref(tag, got, ref, checks):
        r = reldiff(got, ref)
        checks[f"{tag}_vs_numpy_dsl_model_rel"] = r
        assert r < REF_TOL, (tag, r)

    def cotangent_for(name, shape):
        # Dyadic (multiples of 2^-8), fixed per case.
        rng = np.random.default_rng(zlib.crc32((name + "/cotangent").encode()))
        return quant(rng.normal(0.0, 1.0, size=shape), 8)

    def autograd(fwd, leaves, c, out):
        """Gradients of <c, fwd()> w.r.t. `leaves`: name -> (tensor that
        fwd reads, map from its gradient to our layout). fwd must reproduce
        `out` exactly (it is the computation that produced it)."""
        out_t = fwd()
        assert np.array_equal(npy(out_t), out), "autograd forward != out"
        names = [k for k in leaves if leaves[k][0].requires_grad]
        if not names:
            return {}
        gs = torch.autograd.grad(out_t, [leaves[k][0] for k in names],
                                 grad_outputs=T(c), allow_unused=True)
        res = {}
        for k, g in zip(names, gs):
            t, post = leaves[k]
            g = torch.zeros_like(t) if g is None else g
            res[k] = np.ascontiguousarray(post(npy(g)), dtype=np.float64)
        return res

    def leaf(arr):
        return T(arr).requires_grad_()

    ident = lambda g: g           # noqa: E731
    transp = lambda g: g.T        # noqa: E731

    def grad_set(name, kind, c, res, input_names, param_names, omitted=None):
        """Splits autograd results into inputs / params; on Cora only the
        parameter gradients are kept."""
        g = {"cotangent": c, "inputs": {}, "params": {},
             "omitted": omitted or []}
        for k in input_names:
            if kind == "cora":
                g["omitted"].append(
                    f"grad_{k}: Cora case, only parameter gradients are "
                    "stored (input gradients are N- or E-sized float64, up to "
                    "31 MB for x)")
            else:
                g["inputs"][k] = res[k]
        for k in param_names:
            g["params"][k] = res[k]
        # A gradient that vanishes in exact arithmetic (TransformerConv's key
        # bias: the softmax over v's in-edges does not see q_v . b_key, the
        # same for all of them) comes out of autograd as rounding noise:
        # stored as zeros and listed, so that tests compare it absolutely.
        arrays = [v for d in (g["inputs"], g["params"]) for v in d.values()]
        scale = max((float(np.max(np.abs(v))) for v in arrays if v.size),
                    default=0.0)
        for d in (g["inputs"], g["params"]):
            for k, v in d.items():
                if v.size and 0 < np.max(np.abs(v)) <= 1e-12 * scale:
                    d[k] = np.zeros_like(v)
                    g.setdefault("exact_zero", []).append(k)
        return g

    def empty_rows(used, n):
        return [int(i) for i in np.nonzero(np.bincount(used[1], minlength=n)
                                           == 0)[0]]

    # ---------------- GCN ----------------

    def gcn_case(name, kind, loops, in_dim, out_dim):
        ei, x, n, used = graph_args(kind, loops)
        rng = rng_for(name)
        W = glorot(rng, (in_dim, out_dim), in_dim, out_dim)
        b = small_vec(rng, (out_dim,))
        ctor = f"GCNConv({in_dim}, {out_dim}, normalize=False)"
        conv = build(ctor)
        setp(conv.lin.weight, W.T)
        setp(conv.bias, b)
        w = ours_gcn_weight(used, n)
        out = npy(conv(T(x), torch.from_numpy(used), edge_weight=T(w)))
        checks = {}
        assert_ref("out", out, ref_gcn(used, x, W, b), checks)
        c = cotangent_for(name, out.shape)
        xl = leaf(x) if kind == "own" else T(x)
        res = autograd(
            lambda: conv(xl, torch.from_numpy(used), edge_weight=T(w)),
            {"x": (xl, ident), "W": (conv.lin.weight, transp),
             "b": (conv.bias, ident)}, c, out)
        grads = grad_set(name, kind, c, res, ["x"], ["W", "b"])
        dctor = f"GCNConv({in_dim}, {out_dim})"
        dconv = build(dctor)
        setp(dconv.lin.weight, W.T)
        setp(dconv.bias, b)
        default = npy(dconv(T(x), torch.from_numpy(ei)))
        expected = {"out": out}
        rd = reldiff(default, out)
        notes = [
            "out: PyG message passing (GCNConv(normalize=False), i.e. "
            "sum_u w_uv (x_u W) + b) with the edge weights of gcn.gnn: "
            "w_uv = rsqrt(max(out_deg(u), 1)) * rsqrt(max(in_deg(v), 1)), "
            "degrees counted on the graph the layer sees (multi-edges and "
            "self-loops count once per edge).",
            "PyG's own gcn_norm uses the in-degree (col) at BOTH ends and "
            "adds the missing self-loops itself (add_remaining_self_loops: "
            "a vertex that already has a self-loop gets no second one).",
        ]
        extra = {"pyg_default": dctor,
                 "pyg_default_forward": "conv(x, edge_index)  # raw graph"}
        if kind == "own":
            expected["out_pyg_default"] = default
            notes.append(
                "out_pyg_default: the same parameters through "
                f"{dctor} (normalize=True, add_self_loops=True) on the raw "
                "directed graph: in-degree normalisation at both ends plus "
                "PyG's own self-loops; it is NOT what gcn.gnn computes "
                f"(max rel diff to out {rd:.3g}).")
            checks["out_pyg_default_vs_out_rel"] = rd
        else:
            notes.append(
                f"On Cora (symmetric, no self-loops) {dctor} on the raw graph "
                "gives the same numbers: in- and out-degree agree and PyG "
                "adds exactly the self-loops appended here "
                f"(max rel diff {rd:.3g}).")
            checks["pyg_default_vs_out_rel"] = rd
            assert rd < REF_TOL
        if loops:
            notes.append(LOOP_NOTE)
        else:
            notes.append("No self-loops are added: the graph's own edges "
                         "only. Vertices without in-edges "
                         f"{empty_rows(used, n)} get b alone.")
            for i in empty_rows(used, n):
                assert np.array_equal(out[i], b)
        write_case(name, gnn="dsl-examples/gcn.gnn", definition="GCNConv",
                   hparams={"in_dim": in_dim, "out_dim": out_dim},
                   graph=kind, self_loops=loops, ei=ei, n=n,
                   inputs=x_input(kind, x), params={"W": W, "b": b},
                   expected=expected, pyg=ctor,
                   pyg_forward="conv(x, edge_index, edge_weight=w_uv)",
                   notes=" ".join(notes), checks=checks, extra=extra,
                   grads=grads)

    # ---------------- GAT ----------------

    def gat_case(name, kind, loops, in_dim, out_dim, heads, concat,
                 att_scale=1.0):
        ei, x, n, used = graph_args(kind, loops)
        rng = rng_for(name)
        slope = 0.2
        W = glorot(rng, (in_dim, heads * out_dim), in_dim, heads * out_dim)
        # Cora's sparse 0/1 rows give small scores; att_scale spreads them
        # (score std ~1) so that the attention is far from uniform.
        a_src = att_scale * glorot(rng, (heads, out_dim), heads, out_dim)
        a_dst = att_scale * glorot(rng, (heads, out_dim), heads, out_dim)
        b = small_vec(rng, (heads * out_dim if concat else out_dim,))
        ctor = (f"GATConv({in_dim}, {out_dim}, heads={heads}, "
                f"concat={concat}, negative_slope={slope}, dropout=0.0, "
                "add_self_loops=False)")
        conv = build(ctor)
        assert conv.lin_src is conv.lin_dst
        setp(conv.lin_src.weight, W.T)
        setp(conv.att_src, a_src[None])
        setp(conv.att_dst, a_dst[None])
        setp(conv.bias, b)
        out = npy(conv(T(x), torch.from_numpy(used)))
        checks = {}
        assert_ref("out", out,
                   ref_gat(used, x, W, a_src, a_dst, b, slope, concat), checks)
        c = cotangent_for(name, out.shape)
        xl = leaf(x) if kind == "own" else T(x)
        res = autograd(
            lambda: conv(xl, torch.from_numpy(used)),
            {"x": (xl, ident), "W": (conv.lin_src.weight, transp),
             "a_src": (conv.att_src, lambda g: g[0]),
             "a_dst": (conv.att_dst, lambda g: g[0]),
             "b": (conv.bias, ident)}, c, out)
        grads = grad_set(name, kind, c, res, ["x"],
                         ["W", "a_src", "a_dst", "b"])
        notes = [
            "Parameter map: W = lin_src.weight.T (lin_dst is the same "
            "module), a_src = att_src[0], a_dst = att_dst[0], b = bias. "
            "PyG's softmax divides by (sum + 1e-16): a relative effect "
            "of ~1e-16, far below the tolerance.",
        ]
        variant = None
        if not concat:
            variant = {"concat": False,
                       "b": f"[out_dim] = [{out_dim}]",
                       "output": "mean over heads of the [N, heads, out_dim] "
                                 "aggregate, then + b: [N, out_dim]"}
            notes.append(
                "concat=False (mean over heads): gat.gnn's GATConv always "
                "concatenates (reshape to [N, heads*out_dim]) and has no such "
                "option, so this case needs a variant layer: same W, a_src, "
                "a_dst; output mean(v.h over the heads axis) + b with b of "
                "shape [out_dim].")
        if loops:
            notes.append(LOOP_NOTE)
            if kind == "cora":
                dctor = ctor.replace("add_self_loops=False",
                                     "add_self_loops=True")
                dconv = build(dctor)
                dconv.load_state_dict(conv.state_dict())
                rd = reldiff(npy(dconv(T(x), torch.from_numpy(ei))), out)
                checks["pyg_add_self_loops_true_on_raw_cora_rel"] = rd
                assert rd < REF_TOL
                notes.append(
                    "PyG's GATConv(add_self_loops=True) on the raw Cora graph "
                    f"gives the same numbers (max rel diff {rd:.3g}); on a "
                    "graph that already has self-loops it would first "
                    "remove them and add one per vertex, which differs from "
                    "the append rule here.")
        else:
            er = empty_rows(used, n)
            notes.append(
                "No self-loops are added (PyG add_self_loops=False): a vertex "
                "attends to itself only through the graph's own self-loops "
                "(3 and 7); vertices without in-edges "
                f"{er} get b alone (softmax over an empty list).")
            for i in er:
                assert np.array_equal(out[i], b)
        write_case(name, gnn="dsl-examples/gat.gnn", definition="GATConv",
                   hparams={"in_dim": in_dim, "out_dim": out_dim,
                            "heads": heads, "slope": slope, "attn_drop": 0.0},
                   graph=kind, self_loops=loops, ei=ei, n=n,
                   inputs=x_input(kind, x),
                   params={"W": W, "a_src": a_src, "a_dst": a_dst, "b": b},
                   expected={"out": out}, pyg=ctor,
                   pyg_forward="conv(x, edge_index)", notes=" ".join(notes),
                   checks=checks, variant=variant, grads=grads)

    # ---------------- SAGE mean ----------------

    def sage_mean_case(name, kind, in_dim, out_dim):
        ei, x, n, used = graph_args(kind, False)
        rng = rng_for(name)
        W_self = glorot(rng, (in_dim, out_dim), in_dim, out_dim)
        W_neigh = glorot(rng, (in_dim, out_dim), in_dim, out_dim)
        b = small_vec(rng, (out_dim,))
        ctor = f"SAGEConv({in_dim}, {out_dim}, aggr='mean')"
        conv = build(ctor)
        setp(conv.lin_l.weight, W_neigh.T)
        setp(conv.lin_l.bias, b)
        setp(conv.lin_r.weight, W_self.T)
        out = npy(conv(T(x), torch.from_numpy(used)))
        checks = {}
        assert_ref("out", out, ref_sage_mean(used, x, W_self, W_neigh, b),
                   checks)
        c = cotangent_for(name, out.shape)
        xl = leaf(x) if kind == "own" else T(x)
        res = autograd(
            lambda: conv(xl, torch.from_numpy(used)),
            {"x": (xl, ident), "W_self": (conv.lin_r.weight, transp),
             "W_neigh": (conv.lin_l.weight, transp),
             "b": (conv.lin_l.bias, ident)}, c, out)
        grads = grad_set(name, kind, c, res, ["x"],
                         ["W_self", "W_neigh", "b"])
        er = empty_rows(used, n)
        for i in er:
            assert np.allclose(out[i], x[i] @ W_self + b, rtol=0, atol=1e-14)
        notes = ("Parameter map: W_neigh = lin_l.weight.T, b = lin_l.bias "
                 "(PyG puts the bias on the neighbour linear), W_self = "
                 "lin_r.weight.T (no bias). PyG applies lin_l after the mean, "
                 "gnn applies W_neigh before it: equal up to rounding. PyG's "
                 "scatter mean divides by max(count, 1), so an empty "
                 "neighbourhood gives 0, as g.avg. No self-loops. "
                 f"Vertices without in-edges: {er if kind == 'own' else 'none'}.")
        write_case(name, gnn="dsl-examples/sage_mean.gnn",
                   definition="SAGEConv",
                   hparams={"in_dim": in_dim, "out_dim": out_dim},
                   graph=kind, self_loops=False, ei=ei, n=n,
                   inputs=x_input(kind, x),
                   params={"W_self": W_self, "W_neigh": W_neigh, "b": b},
                   expected={"out": out}, pyg=ctor,
                   pyg_forward="conv(x, edge_index)", notes=notes,
                   checks=checks, grads=grads)

    # ---------------- SAGE max (pool) ----------------

    def sage_max_case(name, kind, in_dim, out_dim, pool_dim):
        ei, x, n, used = graph_args(kind, False)
        rng = rng_for(name)
        W_pool = glorot(rng, (in_dim, pool_dim), in_dim, pool_dim)
        b_pool = small_vec(rng, (pool_dim,), scale=0.3)
        W_self = glorot(rng, (in_dim, out_dim), in_dim, out_dim)
        W_neigh = glorot(rng, (pool_dim, out_dim), pool_dim, out_dim)
        b = small_vec(rng, (out_dim,))
        eit = torch.from_numpy(used)
        checks = {}
        # Bipartite form: the pooling perceptron outside, PyG's max inside.
        bctor = f"SAGEConv(({pool_dim}, {in_dim}), {out_dim}, aggr='max')"
        bconv = build(bctor)
        setp(bconv.lin_l.weight, W_neigh.T)
        setp(bconv.lin_l.bias, b)
        setp(bconv.lin_r.weight, W_self.T)
        pre = torch.relu(T(x) @ T(W_pool) + T(b_pool))
        out_b = npy(bconv((pre, T(x)), eit))
        bforward = "conv((relu(x @ W_pool + b_pool), x), edge_index)"
        if pool_dim == in_dim:
            ctor = (f"SAGEConv({in_dim}, {out_dim}, aggr='max', "
                    "project=True)")
            conv = build(ctor)
            setp(conv.lin.weight, W_pool.T)
            setp(conv.lin.bias, b_pool)
            setp(conv.lin_l.weight, W_neigh.T)
            setp(conv.lin_l.bias, b)
            setp(conv.lin_r.weight, W_self.T)
            out = npy(conv(T(x), eit))
            forward = "conv(x, edge_index)"
            checks["project_form_vs_bipartite_form_rel"] = reldiff(out, out_b)
            assert checks["project_form_vs_bipartite_form_rel"] < REF_TOL
            pmap = ("Parameter map: W_pool = lin.weight.T, b_pool = lin.bias "
                    "(project=True: x_j -> relu(lin(x_j)), a square "
                    "[in_dim, in_dim] perceptron, so pool_dim = in_dim), "
                    "W_neigh = lin_l.weight.T, b = lin_l.bias, W_self = "
                    "lin_r.weight.T; the root term uses the unprojected x. "
                    f"Cross-check: {bctor} on (relu(x @ W_pool + b_pool), x) "
                    "gives the same numbers.")
        else:
            ctor, out, forward = bctor, out_b, bforward
            pmap = ("PyG's project=True fixes pool_dim = in_dim, so for "
                    f"pool_dim = {pool_dim} != in_dim = {in_dim} the pooling "
                    "perceptron is applied outside and PyG's max aggregation "
                    f"runs bipartite: {bctor} called as {bforward}. Parameter "
                    "map: W_neigh = lin_l.weight.T, b = lin_l.bias, W_self = "
                    "lin_r.weight.T, W_pool / b_pool used as written.")
        assert_ref("out", out,
                   ref_sage_max(used, x, W_pool, b_pool, W_self, W_neigh, b),
                   checks)
        c = cotangent_for(name, out.shape)
        xl = leaf(x) if kind == "own" else T(x)
        common = {"x": (xl, ident), "W_self": (bconv.lin_r.weight, transp),
                  "W_neigh": (bconv.lin_l.weight, transp),
                  "b": (bconv.lin_l.bias, ident)}
        if pool_dim == in_dim:
            common.update({"W_self": (conv.lin_r.weight, transp),
                           "W_neigh": (conv.lin_l.weight, transp),
                           "b": (conv.lin_l.bias, ident),
                           "W_pool": (conv.lin.weight, transp),
                           "b_pool": (conv.lin.bias, ident)})
            res = autograd(lambda: conv(xl, eit), common, c, out)
        else:
            Wp, bp = leaf(W_pool), leaf(b_pool)
            common.update({"W_pool": (Wp, ident), "b_pool": (bp, ident)})
            res = autograd(
                lambda: bconv((torch.relu(xl @ Wp + bp), xl), eit),
                common, c, out)
        grads = grad_set(name, kind, c, res, ["x"],
                         ["W_pool", "b_pool", "W_self", "W_neigh", "b"])
        # Ties of the max between distinct source vertices with a positive
        # maximum: torch's amax backward splits the gradient evenly among
        # them (a subgradient convention; picking one edge is another).
        pn = np.maximum(x @ W_pool + b_pool, 0.0)
        mx = np.full((n, pool_dim), -np.inf)
        np.maximum.at(mx, used[1], pn[used[0]])
        pairs = set()
        for s_, t_ in set(map(tuple, used.T)):   # distinct (src, dst)
            for ch in np.nonzero((pn[s_] == mx[t_]) & (mx[t_] > 0))[0]:
                pairs.add((t_, int(ch), s_))
        per = {}
        for t_, ch, _ in pairs:
            per[(t_, ch)] = per.get((t_, ch), 0) + 1
        ties = sum(1 for v in per.values() if v > 1)
        checks["grad_max_ties_distinct_sources"] = ties
        grads["tie_rule"] = (
            "torch's scatter_reduce 'amax' backward splits the gradient "
            "evenly among the edges that attain a maximum; "
            f"{ties} (vertex, channel) maxima here are attained by more "
            "than one distinct source vertex (positive values), where "
            "another subgradient choice gives other W_pool / x gradients")
        er = empty_rows(used, n)
        for i in er:
            assert np.allclose(out[i], x[i] @ W_self + b, rtol=0, atol=1e-14)
        notes = (pmap + " Max aggregation in PyG 2.3.1 without torch_scatter "
                 "is zeros(...).scatter_reduce_(..., 'amax', "
                 "include_self=False): an empty neighbourhood gives 0, as "
                 "g.max (checked: scatter of [-3, -1] into one group and "
                 "nothing into another gives [-1, 0]). " +
                 (f"Vertices without in-edges {er} get x W_self + b."
                  if er else "Cora has no vertex without in-edges."))
        write_case(name, gnn="dsl-examples/sage_max.gnn",
                   definition="SAGEPoolConv",
                   hparams={"in_dim": in_dim, "out_dim": out_dim,
                            "pool_dim": pool_dim},
                   graph=kind, self_loops=False, ei=ei, n=n,
                   inputs=x_input(kind, x),
                   params={"W_pool": W_pool, "b_pool": b_pool,
                           "W_self": W_self, "W_neigh": W_neigh, "b": b},
                   expected={"out": out}, pyg=ctor, pyg_forward=forward,
                   notes=notes, checks=checks, grads=grads)

    # ---------------- GIN ----------------

    def gin_case(name, kind, in_dim, out_dim, mlp_dim, eps, weighted):
        ei, x, n, used = graph_args(kind, False)
        rng = rng_for(name)
        W1 = glorot(rng, (in_dim, mlp_dim), in_dim, mlp_dim)
        b1 = small_vec(rng, (mlp_dim,), scale=0.3)
        W2 = glorot(rng, (mlp_dim, out_dim), mlp_dim, out_dim)
        b2 = small_vec(rng, (out_dim,))
        E = used.shape[1]
        w = (quant(rng.uniform(-1.0, 2.0, size=E), 8) if weighted
             else np.ones(E))
        ctor = (f"GINConv(torch.nn.Sequential(torch.nn.Linear({in_dim}, "
                f"{mlp_dim}), torch.nn.ReLU(), torch.nn.Linear({mlp_dim}, "
                f"{out_dim})), eps={eps}, train_eps=False)")
        conv = build(ctor)
        setp(conv.nn[0].weight, W1.T)
        setp(conv.nn[0].bias, b1)
        setp(conv.nn[2].weight, W2.T)
        setp(conv.nn[2].bias, b2)
        eit = torch.from_numpy(used)
        simple = build("SimpleConv(aggr='sum')")
        sforward = ("conv.nn((1 + eps) * x + SimpleConv(aggr='sum')(x, "
                    "edge_index, edge_weight=w))")
        out_s = npy(conv.nn((1 + eps) * T(x)
                            + simple(T(x), eit, edge_weight=T(w))))
        checks = {}
        if weighted:
            out, forward = out_s, sforward
            notes = ("PyG's GINConv has no edge weight (its message is x_j; "
                     "the SparseTensor path even drops adjacency values), so "
                     "the weighted sum of gin.gnn is computed with PyG's "
                     "SimpleConv(aggr='sum') (message w_uv * x_j) and the "
                     f"GINConv's own MLP: {sforward}. ")
        else:
            out, forward = npy(conv(T(x), eit)), "conv(x, edge_index)"
            checks["simpleconv_form_vs_ginconv_rel"] = reldiff(out_s, out)
            assert checks["simpleconv_form_vs_ginconv_rel"] < REF_TOL
            notes = ("Unweighted GIN as in the paper: w.npy is all ones "
                     "(gin.gnn's forward takes w: f32[E]); PyG GINConv itself "
                     "takes no weights. ")
        notes += ("Parameter map: W1 = nn[0].weight.T, b1 = nn[0].bias, "
                  "W2 = nn[2].weight.T, b2 = nn[2].bias; eps fixed "
                  "(train_eps=False). w is indexed like the columns of "
                  "edge_index. No self-loops.")
        assert_ref("out", out, ref_gin(used, x, w, W1, b1, W2, b2, eps),
                   checks)
        c = cotangent_for(name, out.shape)
        xl = leaf(x) if kind == "own" else T(x)
        wl = leaf(w) if kind == "own" else T(w)
        pl = {"W1": (conv.nn[0].weight, transp), "b1": (conv.nn[0].bias, ident),
              "W2": (conv.nn[2].weight, transp), "b2": (conv.nn[2].bias, ident)}
        sfwd = lambda: conv.nn((1 + eps) * xl  # noqa: E731
                               + simple(xl, eit, edge_weight=wl))
        if weighted:
            res = autograd(sfwd, {"x": (xl, ident), "w": (wl, ident), **pl},
                           c, out)
        else:
            res = autograd(lambda: conv(xl, eit), {"x": (xl, ident), **pl},
                           c, out)
            if kind == "own":
                # GINConv takes no w: dL/dw from the SimpleConv form at w = 1
                # (the same numbers, checked above); its other gradients
                # must agree with GINConv's.
                sres = autograd(sfwd, {"x": (xl, ident), "w": (wl, ident),
                                       **pl}, c, out_s)
                for k in res:
                    r = reldiff(sres[k], res[k])
                    checks[f"grad_{k}_simpleconv_vs_ginconv_rel"] = r
                    assert r < REF_TOL, (k, r)
                res["w"] = sres["w"]
        grads = grad_set(name, kind, c, res, ["x", "w"],
                         ["W1", "b1", "W2", "b2"])
        if not weighted and kind == "own":
            grads["omitted"].append(
                "grad_w: GINConv has no edge weight; dL/dw is from the "
                "SimpleConv(aggr='sum') form at w = 1 (its out and other "
                "gradients agree with GINConv's, see checks)")
        inputs = x_input(kind, x)
        inputs["w"] = w
        write_case(name, gnn="dsl-examples/gin.gnn", definition="GINConv",
                   hparams={"in_dim": in_dim, "out_dim": out_dim,
                            "mlp_dim": mlp_dim, "eps": eps},
                   graph=kind, self_loops=False, ei=ei, n=n, inputs=inputs,
                   params={"W1": W1, "b1": b1, "W2": W2, "b2": b2},
                   expected={"out": out}, pyg=ctor, pyg_forward=forward,
                   notes=notes, checks=checks, grads=grads)

    # ---------------- APPNP ----------------

    def appnp_case(name, kind, loops, dim, k, alpha):
        ei, _, n, used = graph_args(kind, loops)
        rng = rng_for(name)
        h0 = rng.normal(0.0, 1.0, size=(n, dim))
        ctor = f"APPNP(K={k}, alpha={alpha}, normalize=False)"
        prop = build(ctor)
        w = ours_gcn_weight(used, n)
        out = npy(prop(T(h0), torch.from_numpy(used), edge_weight=T(w)))
        checks = {}
        assert_ref("out", out, ref_appnp(used, h0, k, alpha), checks)
        c = cotangent_for(name, out.shape)
        hl = leaf(h0) if kind == "own" else T(h0)
        res = autograd(lambda: prop(hl, torch.from_numpy(used),
                                    edge_weight=T(w)),
                       {"h0": (hl, ident)}, c, out)
        grads = grad_set(name, kind, c, res, ["h0"], [])
        dctor = f"APPNP(K={k}, alpha={alpha})"
        default = npy(build(dctor)(T(h0), torch.from_numpy(ei)))
        rd = reldiff(default, out)
        expected = {"out": out}
        notes = [
            "The case is the propagation layer APPNPProp alone (no "
            "parameters); its input h0 stands for the MLP's logits and is "
            "random. out: PyG's APPNP propagation with normalize=False and "
            "the edge weights of appnp.gnn, w_uv = rsqrt(max(out_deg(u), 1))"
            " * rsqrt(max(in_deg(v), 1)) on the graph the layer sees.",
        ]
        extra = {"pyg_default": dctor,
                 "pyg_default_forward": "prop(h0, edge_index)  # raw graph"}
        if kind == "own":
            expected["out_pyg_default"] = default
            checks["out_pyg_default_vs_out_rel"] = rd
            notes.append(
                f"out_pyg_default: {dctor} (gcn_norm: in-degree at both ends,"
                " add_remaining_self_loops) on the raw directed graph; NOT "
                f"what appnp.gnn computes (max rel diff to out {rd:.3g}). "
                "No self-loops are added for out: vertices without in-edges "
                f"{empty_rows(used, n)} get exactly alpha * h0.")
            for i in empty_rows(used, n):
                assert np.allclose(out[i], alpha * h0[i], rtol=0, atol=1e-15)
        else:
            checks["pyg_default_vs_out_rel"] = rd
            assert rd < REF_TOL
            notes.append(
                f"On Cora {dctor} on the raw graph gives the same numbers "
                f"(max rel diff {rd:.3g}).")
        if loops:
            notes.append(LOOP_NOTE)
        write_case(name, gnn="dsl-examples/appnp.gnn",
                   definition="APPNPProp",
                   hparams={"dim": dim, "k": k, "alpha": alpha},
                   graph=kind, self_loops=loops, ei=ei, n=n,
                   inputs={"h0": h0}, params={}, expected=expected, pyg=ctor,
                   pyg_forward="prop(h0, edge_index, edge_weight=w_uv)",
                   notes=" ".join(notes), checks=checks, extra=extra,
                   grads=grads)


    # ---------------- the layer library (gnn/) ----------------

    def sym_weight(ei, n):
        """PyG's gcn_norm without self-loops: deg^-1/2 of the in-degree at
        both ends, 0 for a vertex without in-edges (inf -> 0)."""
        indeg = np.bincount(ei[1], minlength=n).astype(np.float64)
        dis = np.where(indeg > 0, 1.0 / np.sqrt(np.maximum(indeg, 1.0)), 0.0)
        return dis[ei[0]] * dis[ei[1]]

    def spread(ei, h, w=None):
        """sum over in-edges u -> v of w_uv h_u, per destination v."""
        out = np.zeros_like(h)
        msg = h[ei[0]] if w is None else w[:, None] * h[ei[0]]
        np.add.at(out, ei[1], msg)
        return out

    def max_of(used, n, msg):
        """Per destination, the elementwise maximum of its in-edges' rows of
        msg [E, C]; 0 without in-edges (PyG's scatter max)."""
        out = np.full((n,) + msg.shape[1:], -np.inf)
        np.maximum.at(out, used[1], msg)
        return np.where(np.isinf(out), 0.0, out)

    def softmax_sum(used, n, sc, val):
        """Per destination and head, the softmax of the scores sc [E, H]
        over its in-edges weighting val [E, H, C]: [n, H, C]."""
        dst = used[1]
        m = np.full((n,) + sc.shape[1:], -np.inf)
        np.maximum.at(m, dst, sc)
        w_ = np.exp(sc - m[dst])
        den = np.zeros_like(m)
        np.add.at(den, dst, w_)
        out = np.zeros((n,) + val.shape[1:])
        np.add.at(out, dst, (w_ / den[dst])[..., None] * val)
        return out

    def library_case(name, *, definition, gnn, hparams, loops, ctor, inputs,
                     params, pyg_params, call, pyg_forward, ref, notes,
                     buffers=None, training=False):
        """One case of a library layer on the small graph. `params`: our
        arrays by name; `pyg_params(conv)`: {our name: (PyG tensor, map from
        our layout to PyG's, map of a PyG gradient back to ours)};
        `call(conv, tensors, eit)`: PyG's forward on the inputs (tensors by
        name); `ref`: the numpy model of the .gnn semantics. Each case runs
        twice: on the small graph, and as <name with _power for _small> on
        the power-law graph, with inputs of the same kind drawn for it.
        `buffers`: {our name: (initial array, PyG buffer of conv)}, state
        that is not trained (batch norm's running statistics); `training`:
        PyG's module in training mode (its default is eval)."""
        state = dict(buffers=buffers or {}, training=training)
        library_graph_case(name, "own", definition=definition, gnn=gnn,
                           hparams=hparams, loops=loops, ctor=ctor,
                           inputs=inputs, params=params,
                           pyg_params=pyg_params, call=call,
                           pyg_forward=pyg_forward, ref=ref, notes=notes,
                           **state)
        _, _, n_own, used_own = graph_args("own", loops)
        _, _, n_pow, used_pow = graph_args("power", loops)
        rng = rng_for(name + "/power")
        power_inputs = {}
        for k, v in inputs.items():
            rows = {n_own: n_pow, used_own.shape[1]: used_pow.shape[1]}
            assert v.shape[0] in rows, (k, v.shape)
            power_inputs[k] = quant(rng.normal(
                0.0, 1.0, size=(rows[v.shape[0]],) + v.shape[1:]))
        assert "_small" in name, name
        library_graph_case(name.replace("_small", "_power"), "power",
                           definition=definition, gnn=gnn, hparams=hparams,
                           loops=loops, ctor=ctor, inputs=power_inputs,
                           params=params, pyg_params=pyg_params, call=call,
                           pyg_forward=pyg_forward, ref=ref, notes=notes,
                           same_layer_as=name, **state)

    def library_graph_case(name, kind, *, definition, gnn, hparams, loops,
                           ctor, inputs, params, pyg_params, call,
                           pyg_forward, ref, notes, same_layer_as=None,
                           buffers=None, training=False):
        ei, x, n, used = graph_args(kind, loops)
        conv = build(ctor)
        pmap = pyg_params(conv)
        for k, (t, to_pyg, _) in pmap.items():
            setp(t, to_pyg(params[k]))
        buffers = buffers or {}
        for k, (init, get) in buffers.items():
            with torch.no_grad():
                get(conv).copy_(T(init))
        conv.train(training)
        eit = torch.from_numpy(used)
        out = npy(call(conv, {k: T(v) for k, v in inputs.items()}, eit))
        # A training forward updates the buffers: what the first one left.
        updated = {k: npy(get(conv)) for k, (_, get) in buffers.items()}
        initial = {k: init for k, (init, _) in buffers.items()}
        checks = {}
        if buffers:
            want, want_buffers = ref(used, n, **inputs, **params, **initial,
                                     training=training)
            for k, v in want_buffers.items():
                assert_ref("buffer_" + k, updated[k], v, checks)
        else:
            want = ref(used, n, **inputs, **params)
        assert_ref("out", out, want, checks)
        c = cotangent_for(name, out.shape)
        leaves = {k: leaf(v) for k, v in inputs.items()}
        res = autograd(lambda: call(conv, leaves, eit),
                       {**{k: (t, ident) for k, t in leaves.items()},
                        **{k: (t, back) for k, (t, _, back) in pmap.items()}},
                       c, out)
        grads = grad_set(name, "own", c, res, list(inputs), list(pmap))
        if loops:
            notes += " " + LOOP_NOTE
        if loops == "replace":
            notes += (" The graph's own self-loops are removed first, as "
                      "PyG's remove_self_loops does: edge_index.npy holds "
                      "the graph without them.")
        er = empty_rows(used, n)
        if er:
            notes += f" Vertices without in-edges: {er}."
        if same_layer_as:
            notes += (" The power-law graph (power_graph in "
                      "tools/make_goldens.py); the layer, hyper-parameters "
                      "and parameters of " + same_layer_as + ".")
        extra = {"same_layer_as": same_layer_as} if same_layer_as else {}
        expected = {"out": out}
        if buffers:
            # Buffers start from params/<name>.npy; expected/buffers/ holds
            # them after the forward (updated in training, as they were in
            # eval).
            extra["training"] = training
            extra["buffers"] = {k: f"expected/buffers/{k}.npy"
                                for k in buffers}
            expected.update({f"buffers/{k}": v for k, v in updated.items()})
        write_case(name, gnn=gnn, definition=definition, hparams=hparams,
                   graph=kind, self_loops=bool(loops), ei=ei, n=n,
                   inputs=inputs, params={**params, **initial},
                   expected=expected, pyg=ctor, pyg_forward=pyg_forward,
                   notes=notes, checks=checks, grads=grads,
                   extra=extra or None)

    def same(t):
        """A PyG tensor that is our parameter as it is."""
        return (t, ident, ident)

    def lin(conv_lin, w="W", b="b"):
        """A PyG Linear as our parameters w = weight.T and b = bias (b=None:
        the weight alone)."""
        m = {w: (conv_lin.weight, lambda a: a.T, transp)}
        if b:
            m[b] = same(conv_lin.bias)
        return m

    def ours_first(m, **names):
        return {names.get(k, k): v for k, v in m.items()}

    F, O = SMALL_F, 4
    rngl = rng_for("library")

    W = glorot(rngl, (F, F), F, F)
    library_case(
        "lgconv_small", definition="LGConv", gnn="gnn/lgconv.gnn",
        hparams={"dim": F}, loops=False, ctor="LGConv()",
        inputs={"x": x_s}, params={}, pyg_params=lambda conv: {},
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)",
        ref=lambda used, n, x: spread(used, x, sym_weight(used, n)),
        notes="LGConv(normalize=True): gcn_norm without self-loops, "
              "in-degree at both ends; a vertex without in-edges sends and "
              "gets 0 (PyG's inf -> 0, where(deg > 0, rsqrt(deg), 0) here).")

    for k_, loops in ((2, False), (3, True)):
        W, b = glorot(rngl, (F, O), F, O), small_vec(rngl, (O,))

        def sg_ref(used, n, x, W, b, k_=k_):
            h = x
            for _ in range(k_):
                h = spread(used, h, sym_weight(used, n))
            return h @ W + b
        library_case(
            f"sgconv_small_k{k_}" + ("_selfloops" if loops else ""),
            definition="SGConv", gnn="gnn/sgconv.gnn",
            hparams={"in_dim": F, "out_dim": O, "k": k_}, loops=loops,
            ctor=f"SGConv({F}, {O}, K={k_}, add_self_loops=False)",
            inputs={"x": x_s}, params={"W": W, "b": b},
            pyg_params=lambda conv: lin(conv.lin),
            call=lambda conv, t, e: conv(t["x"], e),
            pyg_forward="conv(x, edge_index)", ref=sg_ref,
            notes="Parameter map: W = lin.weight.T, b = lin.bias. PyG "
                  "propagates first and maps after; sgconv.gnn maps first "
                  "(the same function).")

    W, b = glorot(rngl, (F, O), F, O), small_vec(rngl, (O,))

    def ssg_ref(used, n, x, W, b, alpha=0.2, k_=3):
        h, acc = x, alpha * x
        for _ in range(k_):
            h = spread(used, h, sym_weight(used, n))
            acc = acc + (1 - alpha) / k_ * h
        return acc @ W + b
    library_case(
        "ssgconv_small_selfloops", definition="SSGConv", gnn="gnn/ssgconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "alpha": 0.2, "k": 3}, loops=True,
        ctor=f"SSGConv({F}, {O}, alpha=0.2, K=3, add_self_loops=False)",
        inputs={"x": x_s}, params={"W": W, "b": b},
        pyg_params=lambda conv: lin(conv.lin),
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)", ref=ssg_ref,
        notes="Parameter map: W = lin.weight.T, b = lin.bias.")

    for aggr, definition in (("add", "GraphConv"), ("mean", "GraphConvMean")):
        Wr, Wo = glorot(rngl, (F, O), F, O), glorot(rngl, (F, O), F, O)
        b = small_vec(rngl, (O,))

        def gc_ref(used, n, x, W_root, W_rel, b, aggr=aggr):
            s_ = spread(used, x @ W_rel)
            if aggr == "mean":
                s_ = s_ / np.maximum(np.bincount(used[1], minlength=n), 1)[:, None]
            return x @ W_root + s_ + b
        library_case(
            f"graphconv_small_{aggr}", definition=definition,
            gnn="gnn/graphconv.gnn", hparams={"in_dim": F, "out_dim": O},
            loops=False, ctor=f"GraphConv({F}, {O}, aggr='{aggr}')",
            inputs={"x": x_s}, params={"W_root": Wo, "W_rel": Wr, "b": b},
            pyg_params=lambda conv: {
                **lin(conv.lin_root, "W_root", None),
                **lin(conv.lin_rel, "W_rel", "b")},
            call=lambda conv, t, e: conv(t["x"], e),
            pyg_forward="conv(x, edge_index)", ref=gc_ref,
            notes="Parameter map: W_root = lin_root.weight.T, W_rel = "
                  "lin_rel.weight.T, b = lin_rel.bias (lin_root has none).")

    W1, W2, W3 = (glorot(rngl, (F, O), F, O) for _ in range(3))
    b1, b3 = small_vec(rngl, (O,)), small_vec(rngl, (O,))

    def le_ref(used, n, x, W1, b1, W2, W3, b3):
        a, bb = x @ W1 + b1, x @ W2
        out = np.zeros((n, O))
        np.add.at(out, used[1], a[used[0]] - bb[used[1]])
        return out + x @ W3 + b3
    library_case(
        "leconv_small", definition="LEConv", gnn="gnn/leconv.gnn",
        hparams={"in_dim": F, "out_dim": O}, loops=False,
        ctor=f"LEConv({F}, {O})", inputs={"x": x_s},
        params={"W1": W1, "b1": b1, "W2": W2, "W3": W3, "b3": b3},
        pyg_params=lambda conv: {
            **lin(conv.lin1, "W1", "b1"),
            **lin(conv.lin2, "W2", None),
            **lin(conv.lin3, "W3", "b3")},
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)", ref=le_ref,
        notes="Parameter map: W1, b1 = lin1; W2 = lin2 (no bias); W3, b3 = "
              "lin3; each W is the weight transposed.")

    x0 = quant(rngl.normal(0.0, 1.0, size=(SMALL_N, F)))
    for shared in (True, False):
        Wa, Wb = glorot(rngl, (F, F), F, F), glorot(rngl, (F, F), F, F)
        alpha, theta, depth = 0.2, 0.5, 2
        beta = float(np.log(theta / depth + 1))

        def g2_ref(used, n, x, x0, W=None, W1=None, W2=None, shared=shared):
            p_ = (1 - alpha) * spread(used, x, sym_weight(used, n))
            r_ = alpha * x0
            if shared:
                h = p_ + r_
                return (1 - beta) * h + beta * (h @ W)
            return (1 - beta) * (p_ + r_) + beta * (p_ @ W1 + r_ @ W2)
        params = {"W": Wa} if shared else {"W1": Wa, "W2": Wb}
        library_case(
            "gcn2conv_small_selfloops" + ("" if shared else "_separate"),
            definition="GCN2Conv" if shared else "GCN2ConvSeparate",
            gnn="gnn/gcn2conv.gnn",
            hparams={"dim": F, "alpha": alpha, "theta": theta, "depth": depth},
            loops=True,
            ctor=(f"GCN2Conv({F}, alpha={alpha}, theta={theta}, layer={depth}, "
                  f"shared_weights={shared}, add_self_loops=False)"),
            inputs={"x": x_s, "x0": x0}, params=params,
            pyg_params=(lambda conv: {"W": same(conv.weight1)})
            if shared else (lambda conv: {
                "W1": same(conv.weight1),
                "W2": same(conv.weight2)}),
            call=lambda conv, t, e: conv(t["x"], t["x0"], e),
            pyg_forward="conv(x, x0, edge_index)", ref=g2_ref,
            notes="Parameter map: W (W1, W2) = weight1 (weight2) as they are "
                  "(PyG multiplies h @ weight1). depth is PyG's layer.")

    Wk, Wq, Wv, Ws = (glorot(rngl, (F, O), F, O) for _ in range(4))
    bk, bq, bv, bs = (small_vec(rngl, (O,)) for _ in range(4))

    def rg_ref(used, n, x, W_key, b_key, W_query, b_query, W_value, b_value,
               W_skip, b):
        src, dst = used[0], used[1]
        k, q = x @ W_key + b_key, x @ W_query + b_query
        val = x @ W_value + b_value
        out = np.zeros((n, O))
        np.add.at(out, dst, val[src] / (1.0 + np.exp(-(k[dst] + q[src]))))
        return out + x @ W_skip + b
    library_case(
        "resgatedgraphconv_small", definition="ResGatedGraphConv",
        gnn="gnn/resgatedgraphconv.gnn", hparams={"in_dim": F, "out_dim": O},
        loops=False, ctor=f"ResGatedGraphConv({F}, {O})", inputs={"x": x_s},
        params={"W_key": Wk, "b_key": bk, "W_query": Wq, "b_query": bq,
                "W_value": Wv, "b_value": bv, "W_skip": Ws, "b": bs},
        pyg_params=lambda conv: {
            **lin(conv.lin_key, "W_key", "b_key"),
            **lin(conv.lin_query, "W_query", "b_query"),
            **lin(conv.lin_value, "W_value", "b_value"),
            **lin(conv.lin_skip, "W_skip", None),
            "b": same(conv.bias)},
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)", ref=rg_ref,
        notes="Parameter map: W_key, b_key = lin_key; W_query, b_query = "
              "lin_query; W_value, b_value = lin_value; W_skip = lin_skip "
              "(no bias); b = bias; each W is the weight transposed.")

    def agnn_ref(used, n, x, beta):
        src, dst = used[0], used[1]
        xn = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        s_ = beta[0] * (xn[dst] * xn[src]).sum(1)
        return softmax_sum(used, n, s_[:, None], x[src][:, None])[:, 0]
    library_case(
        "agnnconv_small_selfloops", definition="AGNNConv",
        gnn="gnn/agnnconv.gnn", hparams={"dim": F}, loops=True,
        ctor="AGNNConv(requires_grad=True, add_self_loops=False)",
        inputs={"x": x_s}, params={"beta": np.array([1.7])},
        pyg_params=lambda conv: {"beta": same(conv.beta)},
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)", ref=agnn_ref,
        notes="Parameter map: beta = beta (1.7 here; PyG and agnnconv.gnn "
              "start it at 1).")

    def split_rows(conv_lin, *parts):
        """Our parameters (name, array) that are consecutive row blocks of a
        PyG Linear's weight transposed (the layer multiplies the parts of a
        concatenation separately): {name: (tensor, to PyG, back)}."""
        whole = lambda _a: np.concatenate([a for _, a in parts]).T  # noqa
        out, start = {}, 0
        for name_, a in parts:
            rows = slice(start, start + a.shape[0])
            out[name_] = (conv_lin.weight, whole,
                          lambda g_, rows=rows: g_.T[rows])
            start += a.shape[0]
        return out

    att_l, att_r = glorot(rngl, (F, 1), F, 1), glorot(rngl, (F, 1), F, 1)
    x0f = quant(rngl.normal(0.0, 1.0, size=(SMALL_N, F)))

    def fa_ref(used, n, x, x0, att_l, att_r, eps=0.3):
        src, dst = used[0], used[1]
        w_ = np.tanh((x @ att_l)[src, 0] + (x @ att_r)[dst, 0])
        return spread(used, x, w_ * sym_weight(used, n)) + eps * x0
    library_case(
        "faconv_small_selfloops", definition="FAConv", gnn="gnn/faconv.gnn",
        hparams={"dim": F, "eps": 0.3}, loops=True,
        ctor="FAConv(%d, eps=0.3, add_self_loops=False)" % F,
        inputs={"x": x_s, "x0": x0f}, params={"att_l": att_l, "att_r": att_r},
        pyg_params=lambda conv: {
            **lin(conv.att_l, "att_l", None),
            **lin(conv.att_r, "att_r", None)},
        call=lambda conv, t, e: conv(t["x"], t["x0"], e),
        pyg_forward="conv(x, x0, edge_index)", ref=fa_ref,
        notes="Parameter map: att_l = att_l.weight.T, att_r = "
              "att_r.weight.T (no biases). PyG's gcn_norm on the looped "
              "graph (add_self_loops=False): in-degree at both ends.")

    for concat in (True, False):
        H = 3
        tp = {}
        for k_ in ("query", "key", "value"):
            tp["W_" + k_] = glorot(rngl, (F, H * O), F, H * O)
            tp["b_" + k_] = small_vec(rngl, (H * O,))
        skip = H * O if concat else O
        tp["W_skip"], tp["b_skip"] = (glorot(rngl, (F, skip), F, skip),
                                      small_vec(rngl, (skip,)))

        def tc_ref(used, n, x, concat=concat, **p_):
            src, dst = used[0], used[1]
            q = (x @ p_["W_query"] + p_["b_query"]).reshape(n, H, O)
            k = (x @ p_["W_key"] + p_["b_key"]).reshape(n, H, O)
            val = (x @ p_["W_value"] + p_["b_value"]).reshape(n, H, O)
            sc = (q[dst] * k[src]).sum(-1) / np.sqrt(O)  # [E, H]
            out = softmax_sum(used, n, sc, val[src])
            out = out.reshape(n, H * O) if concat else out.mean(1)
            return out + x @ p_["W_skip"] + p_["b_skip"]

        def tc_params(conv):
            m = {}
            for k_ in ("query", "key", "value", "skip"):
                m.update(lin(getattr(conv, "lin_" + k_), "W_" + k_, "b_" + k_))
            return m
        library_case(
            "transformerconv_small" + ("" if concat else "_mean"),
            definition="TransformerConv" if concat else "TransformerConvMean",
            gnn="gnn/transformerconv.gnn",
            hparams={"in_dim": F, "out_dim": O, "heads": H}, loops=False,
            ctor="TransformerConv(%d, %d, heads=%d, concat=%s)" % (
                F, O, H, concat),
            inputs={"x": x_s}, params=tp, pyg_params=tc_params,
            call=lambda conv, t, e: conv(t["x"], e),
            pyg_forward="conv(x, edge_index)", ref=tc_ref,
            notes="Parameter map: W_<k>, b_<k> = lin_<k>.weight.T, "
                  "lin_<k>.bias for k in query, key, value, skip.")

    cg = {"W_f_dst": glorot(rngl, (F, F), 2 * F, F),
          "W_f_src": glorot(rngl, (F, F), 2 * F, F),
          "b_f": small_vec(rngl, (F,)),
          "W_s_dst": glorot(rngl, (F, F), 2 * F, F),
          "W_s_src": glorot(rngl, (F, F), 2 * F, F),
          "b_s": small_vec(rngl, (F,))}

    def cg_ref(used, n, x, W_f_dst, W_f_src, b_f, W_s_dst, W_s_src, b_s):
        src, dst = used[0], used[1]
        f_ = x[dst] @ W_f_dst + x[src] @ W_f_src + b_f
        s_ = x[dst] @ W_s_dst + x[src] @ W_s_src + b_s
        sp = np.where(s_ > 20, s_, np.log1p(np.exp(np.minimum(s_, 20))))
        out = np.zeros_like(x)
        np.add.at(out, dst, sp / (1.0 + np.exp(-f_)))
        return x + out
    library_case(
        "cgconv_small", definition="CGConv", gnn="gnn/cgconv.gnn",
        hparams={"dim": F}, loops=False, ctor="CGConv(%d)" % F,
        inputs={"x": x_s}, params=cg,
        pyg_params=lambda conv: {
            **split_rows(conv.lin_f, ("W_f_dst", cg["W_f_dst"]),
                         ("W_f_src", cg["W_f_src"])),
            "b_f": same(conv.lin_f.bias),
            **split_rows(conv.lin_s, ("W_s_dst", cg["W_s_dst"]),
                         ("W_s_src", cg["W_s_src"])),
            "b_s": same(conv.lin_s.bias)},
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)", ref=cg_ref,
        notes="Parameter map: [W_f_dst; W_f_src] = lin_f.weight.T (rows "
              "0..dim multiply x_v, the rest x_u), b_f = lin_f.bias; the "
              "same for W_s_*, b_s and lin_s.")

    M = 6
    ge = {"W1": glorot(rngl, (F, M), F, M), "b1": small_vec(rngl, (M,)),
          "W2": glorot(rngl, (M, O), M, O), "b2": small_vec(rngl, (O,))}
    ea = quant(rngl.normal(0.0, 1.0, size=(ei_s.shape[1], F)))

    def gine_ref(used, n, x, edge_attr, W1, b1, W2, b2, eps=0.25):
        out = np.zeros_like(x)
        np.add.at(out, used[1], np.maximum(x[used[0]] + edge_attr, 0.0))
        z = (1 + eps) * x + out
        return np.maximum(z @ W1 + b1, 0.0) @ W2 + b2
    library_case(
        "gineconv_small", definition="GINEConv", gnn="gnn/gineconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "mlp_dim": M, "eps": 0.25},
        loops=False,
        ctor=("GINEConv(torch.nn.Sequential(torch.nn.Linear(%d, %d), "
              "torch.nn.ReLU(), torch.nn.Linear(%d, %d)), eps=0.25)"
              % (F, M, M, O)),
        inputs={"x": x_s, "edge_attr": ea}, params=ge,
        pyg_params=lambda conv: {
            **lin(conv.nn[0], "W1", "b1"),
            **lin(conv.nn[2], "W2", "b2")},
        call=lambda conv, t, e: conv(t["x"], e, t["edge_attr"]),
        pyg_forward="conv(x, edge_index, edge_attr)", ref=gine_ref,
        notes="Parameter map: W1 = nn[0].weight.T, b1 = nn[0].bias, W2 = "
              "nn[2].weight.T, b2 = nn[2].bias; eps fixed. edge_attr has a "
              "row per column of edge_index, in its order.")

    library_case(
        "wlconvcontinuous_small", definition="WLConvContinuous",
        gnn="gnn/wlconvcontinuous.gnn", hparams={"dim": F}, loops=False,
        ctor="WLConvContinuous()", inputs={"x": x_s}, params={},
        pyg_params=lambda conv: {},
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)",
        ref=lambda used, n, x: 0.5 * (x + spread(used, x) / np.maximum(
            np.bincount(used[1], minlength=n), 1)[:, None]),
        notes="No parameters. A vertex without in-edges averages its own "
              "row with 0 (PyG's 1 / 0 -> 0).")

    ec = {"W1_dst": glorot(rngl, (F, O), 2 * F, O),
          "W1_diff": glorot(rngl, (F, O), 2 * F, O),
          "b1": small_vec(rngl, (O,)), "W2": glorot(rngl, (O, O), O, O),
          "b2": small_vec(rngl, (O,))}

    def ec_ref(used, n, x, W1_dst, W1_diff, b1, W2, b2):
        src, dst = used[0], used[1]
        h_ = np.maximum(x[dst] @ W1_dst + (x[src] - x[dst]) @ W1_diff + b1,
                        0.0) @ W2 + b2
        return max_of(used, n, h_)
    library_case(
        "edgeconv_small", definition="EdgeConv", gnn="gnn/edgeconv.gnn",
        hparams={"in_dim": F, "out_dim": O}, loops=False,
        ctor=("EdgeConv(torch.nn.Sequential(torch.nn.Linear(%d, %d), "
              "torch.nn.ReLU(), torch.nn.Linear(%d, %d)))" % (2 * F, O, O, O)),
        inputs={"x": x_s}, params=ec,
        pyg_params=lambda conv: {
            **split_rows(conv.nn[0], ("W1_dst", ec["W1_dst"]),
                         ("W1_diff", ec["W1_diff"])),
            "b1": same(conv.nn[0].bias),
            **lin(conv.nn[2], "W2", "b2")},
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)", ref=ec_ref,
        notes="Parameter map: [W1_dst; W1_diff] = nn[0].weight.T (rows "
              "0..in_dim multiply x_v, the rest x_u - x_v), b1 = nn[0].bias, "
              "W2 = nn[2].weight.T, b2 = nn[2].bias. A vertex without "
              "in-edges gets 0 (PyG's scatter max).")

    D = 3
    ea3 = quant(rngl.normal(0.0, 1.0, size=(ei_s.shape[1], D)))
    nn_ = {"W_nn": glorot(rngl, (D, F * O), D, F * O),
           "b_nn": small_vec(rngl, (F * O,)),
           "W_root": glorot(rngl, (F, O), F, O), "b": small_vec(rngl, (O,))}

    def nn_ref(used, n, x, edge_attr, W_nn, b_nn, W_root, b):
        m = (edge_attr @ W_nn + b_nn).reshape(-1, F, O)
        out = np.zeros((n, O))
        np.add.at(out, used[1], np.einsum("ei,eio->eo", x[used[0]], m))
        return out + x @ W_root + b
    library_case(
        "nnconv_small", definition="NNConv", gnn="gnn/nnconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "edge_dim": D}, loops=False,
        ctor="NNConv(%d, %d, torch.nn.Linear(%d, %d))" % (F, O, D, F * O),
        inputs={"x": x_s, "edge_attr": ea3}, params=nn_,
        pyg_params=lambda conv: {
            **lin(conv.nn, "W_nn", "b_nn"),
            **lin(conv.lin, "W_root", None),
            "b": same(conv.bias)},
        call=lambda conv, t, e: conv(t["x"], e, t["edge_attr"]),
        pyg_forward="conv(x, edge_index, edge_attr)", ref=nn_ref,
        notes="Parameter map: W_nn = nn.weight.T, b_nn = nn.bias, W_root "
              "= lin.weight.T (no bias), b = bias. edge_attr has a row per "
              "column of edge_index.")

    K = 2
    gm = {"W_g": glorot(rngl, (F, K * O), F, K * O),
          "mu": quant(rngl.normal(0.0, 1.0, size=(K, D))),
          "sigma": 1.0 + 0.25 * quant(rngl.normal(0.0, 1.0, size=(K, D))),
          "W_root": glorot(rngl, (F, O), F, O), "b": small_vec(rngl, (O,))}

    def gmm_ref(used, n, x, pseudo, W_g, mu, sigma, W_root, b):
        d = pseudo[:, None, :] - mu[None]
        w_ = np.exp((-0.5 * d * d / (1e-15 + sigma * sigma)).sum(-1))  # [E, K]
        msg = ((x @ W_g)[used[0]].reshape(-1, K, O) * w_[:, :, None]).sum(1)
        out = np.zeros((n, O))
        np.add.at(out, used[1], msg)
        out /= np.maximum(np.bincount(used[1], minlength=n), 1)[:, None]
        return out + x @ W_root + b
    library_case(
        "gmmconv_small", definition="GMMConv", gnn="gnn/gmmconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "dim": D, "kernel_size": K},
        loops=False, ctor="GMMConv(%d, %d, dim=%d, kernel_size=%d)" % (
            F, O, D, K),
        inputs={"x": x_s, "pseudo": ea3}, params=gm,
        pyg_params=lambda conv: {
            "W_g": same(conv.g), "mu": same(conv.mu),
            "sigma": same(conv.sigma),
            **lin(conv.root, "W_root", None),
            "b": same(conv.bias)},
        call=lambda conv, t, e: conv(t["x"], e, t["pseudo"]),
        pyg_forward="conv(x, edge_index, pseudo)", ref=gmm_ref,
        notes="Parameter map: W_g = g, mu = mu, sigma = sigma (as they "
              "are), W_root = root.weight.T (no bias), b = bias. pseudo "
              "has a row per column of edge_index.")

    pn = {"W1_x": glorot(rngl, (F, O), F + 3, O),
          "W1_pos": glorot(rngl, (3, O), F + 3, O),
          "b1": small_vec(rngl, (O,)), "W2": glorot(rngl, (O, O), O, O),
          "b2": small_vec(rngl, (O,))}
    pos_s = quant(rngl.normal(0.0, 1.0, size=(SMALL_N, 3)))

    def pn_ref(used, n, x, pos, W1_x, W1_pos, b1, W2, b2):
        src, dst = used[0], used[1]
        h_ = np.maximum(x[src] @ W1_x + (pos[src] - pos[dst]) @ W1_pos + b1,
                        0.0) @ W2 + b2
        return max_of(used, n, h_)
    library_case(
        "pointnetconv_small_selfloops", definition="PointNetConv",
        gnn="gnn/pointnetconv.gnn", hparams={"in_dim": F, "out_dim": O},
        loops=True,
        ctor=("PointNetConv(torch.nn.Sequential(torch.nn.Linear(%d, %d), "
              "torch.nn.ReLU(), torch.nn.Linear(%d, %d)), "
              "add_self_loops=False)" % (F + 3, O, O, O)),
        inputs={"x": x_s, "pos": pos_s}, params=pn,
        pyg_params=lambda conv: {
            **split_rows(conv.local_nn[0], ("W1_x", pn["W1_x"]),
                         ("W1_pos", pn["W1_pos"])),
            "b1": same(conv.local_nn[0].bias),
            **lin(conv.local_nn[2], "W2", "b2")},
        call=lambda conv, t, e: conv(t["x"], t["pos"], e),
        pyg_forward="conv(x, pos, edge_index)", ref=pn_ref,
        notes="Parameter map: [W1_x; W1_pos] = local_nn[0].weight.T (rows "
              "0..in_dim multiply x_u, the last 3 pos_u - pos_v), b1 = "
              "local_nn[0].bias, W2 = local_nn[2].weight.T, b2 = "
              "local_nn[2].bias.")

    Hg = 2
    gc = {"W_msg": glorot(rngl, (F, Hg * O), F, Hg * O),
          "b_msg": small_vec(rngl, (Hg * O,)),
          "W_edge": glorot(rngl, (D, Hg * O), D, Hg * O),
          "b_edge": small_vec(rngl, (Hg * O,)),
          "att": glorot(rngl, (Hg, O), Hg, O),
          "W_self": glorot(rngl, (F, O), F, O), "b_self": small_vec(rngl, (O,))}

    def gc_ref2(used, n, x, edge_attr, W_msg, b_msg, W_edge, b_edge, att,
                W_self, b_self):
        m = ((x @ W_msg + b_msg)[used[0]] + edge_attr @ W_edge + b_edge).reshape(
            -1, Hg, O)
        sc = (m * att[None]).sum(-1)
        sc = np.where(sc > 0, sc, 0.2 * sc)
        return softmax_sum(used, n, sc, m).mean(1) + x @ W_self + b_self
    library_case(
        "generalconv_small", definition="GeneralConv",
        gnn="gnn/generalconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "edge_dim": D, "heads": Hg},
        loops=False,
        ctor=("GeneralConv(%d, %d, in_edge_channels=%d, heads=%d, "
              "attention=True)" % (F, O, D, Hg)),
        inputs={"x": x_s, "edge_attr": ea3}, params=gc,
        pyg_params=lambda conv: {
            **lin(conv.lin_msg, "W_msg", "b_msg"),
            **lin(conv.lin_edge, "W_edge", "b_edge"),
            "att": (conv.att_msg, lambda a: a[None], lambda g_: g_[0]),
            **lin(conv.lin_self, "W_self", "b_self")},
        call=lambda conv, t, e: conv(t["x"], e, t["edge_attr"]),
        pyg_forward="conv(x, edge_index, edge_attr)", ref=gc_ref2,
        notes="Parameter map: W_msg, b_msg = lin_msg; W_edge, b_edge = "
              "lin_edge; att = att_msg[0]; W_self, b_self = lin_self; each "
              "W the weight transposed. PyG's softmax adds 1e-16 to the "
              "denominator (negligible).")

    Hs = 3
    sg = {"W": glorot(rngl, (F, Hs * O), F, Hs * O),
          "att_l": glorot(rngl, (Hs, O), Hs, O),
          "att_r": glorot(rngl, (Hs, O), Hs, O),
          "b": small_vec(rngl, (Hs * O,))}

    def sg_ref(used, n, x, W, att_l, att_r, b):
        src, dst = used[0], used[1]
        h = (x @ W).reshape(n, Hs, O)
        lg = (h[src] * h[dst]).sum(-1)
        sc = ((h[src] * att_l).sum(-1) + (h[dst] * att_r).sum(-1)) / (
            1.0 + np.exp(-lg))
        sc = np.where(sc > 0, sc, 0.2 * sc)
        return softmax_sum(used, n, sc, h[src]).reshape(n, Hs * O) + b
    library_case(
        "supergatconv_small_selfloops", definition="SuperGATConv",
        gnn="gnn/supergatconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "heads": Hs}, loops=True,
        ctor=("SuperGATConv(%d, %d, heads=%d, attention_type='MX', "
              "add_self_loops=False)" % (F, O, Hs)),
        inputs={"x": x_s}, params=sg,
        pyg_params=lambda conv: {
            **lin(conv.lin, "W", None),
            "att_l": (conv.att_l, lambda a: a[None], lambda g_: g_[0]),
            "att_r": (conv.att_r, lambda a: a[None], lambda g_: g_[0]),
            "b": same(conv.bias)},
        call=lambda conv, t, e: conv.eval()(t["x"], e),
        pyg_forward="conv.eval()(x, edge_index)", ref=sg_ref,
        notes="Parameter map: W = lin.weight.T, att_l = att_l[0], att_r = "
              "att_r[0], b = bias. PyG in eval mode: in training it also "
              "samples edges for its self-supervised loss, which does not "
              "change the output.")

    fl = {k: glorot(rngl, (F, O), F, O)
          for k in ("W", "W_beta", "W_gamma", "W_skip", "W_beta_skip",
                    "W_gamma_skip")}
    fl["b_beta"], fl["b_gamma"] = small_vec(rngl, (O,)), small_vec(rngl, (O,))

    def film_ref(used, n, x, W, W_beta, b_beta, W_gamma, b_gamma, W_skip,
                 W_beta_skip, W_gamma_skip):
        src, dst = used[0], used[1]
        skip = np.maximum((x @ W_gamma_skip) * (x @ W_skip) + x @ W_beta_skip,
                          0.0)
        beta, gamma = x @ W_beta + b_beta, x @ W_gamma + b_gamma
        msg = np.maximum(gamma[dst] * (x @ W)[src] + beta[dst], 0.0)
        out = np.zeros((n, O))
        np.add.at(out, dst, msg)
        return skip + out / np.maximum(np.bincount(dst, minlength=n),
                                       1)[:, None]

    def split_cols(lin_, first, second, k, bias=False):
        """Two of our parameters that are the first and last k outputs of a
        PyG Linear (its weight's rows; with bias, the bias's halves)."""
        if bias:
            whole = lambda _a: np.concatenate([first[1], second[1]])  # noqa
            return {first[0]: (lin_.bias, whole, lambda g_: g_[:k]),
                    second[0]: (lin_.bias, whole, lambda g_: g_[k:])}
        whole = lambda _a: np.concatenate([first[1], second[1]], 1).T  # noqa
        return {first[0]: (lin_.weight, whole, lambda g_: g_.T[:, :k]),
                second[0]: (lin_.weight, whole, lambda g_: g_.T[:, k:])}
    library_case(
        "filmconv_small", definition="FiLMConv", gnn="gnn/filmconv.gnn",
        hparams={"in_dim": F, "out_dim": O}, loops=False,
        ctor="FiLMConv(%d, %d)" % (F, O), inputs={"x": x_s}, params=fl,
        pyg_params=lambda conv: {
            **lin(conv.lins[0], "W", None),
            **split_cols(conv.films[0], ("W_beta", fl["W_beta"]),
                         ("W_gamma", fl["W_gamma"]), O),
            **split_cols(conv.films[0], ("b_beta", fl["b_beta"]),
                         ("b_gamma", fl["b_gamma"]), O, bias=True),
            **lin(conv.lin_skip, "W_skip", None),
            **split_cols(conv.film_skip, ("W_beta_skip", fl["W_beta_skip"]),
                         ("W_gamma_skip", fl["W_gamma_skip"]), O)},
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)", ref=film_ref,
        notes="Parameter map: W = lins[0].weight.T; [W_beta, W_gamma] = "
              "films[0].weight.T (output columns 0..out_dim are beta), "
              "[b_beta, b_gamma] = films[0].bias; W_skip = "
              "lin_skip.weight.T; [W_beta_skip, W_gamma_skip] = "
              "film_skip.weight.T (no biases on the skip).")

    def simple_ref(used, n, x, aggr, root):
        src, dst = used[0], used[1]
        if aggr == "max":
            out = max_of(used, n, x[src])
        else:
            out = spread(used, x)
            if aggr == "mean":
                out /= np.maximum(np.bincount(dst, minlength=n), 1)[:, None]
        return out + x if root else out
    for case, definition, aggr, root in (
            ("simpleconv_small", "SimpleConv", "sum", None),
            ("simpleconv_small_mean", "SimpleConvMean", "mean", None),
            ("simpleconv_small_max_root", "SimpleConvMaxRoot", "max", "sum")):
        library_case(
            case, definition=definition, gnn="gnn/simpleconv.gnn",
            hparams={"dim": F}, loops=False,
            ctor="SimpleConv(aggr='%s', combine_root=%s)" % (
                aggr, "'sum'" if root else "None"),
            inputs={"x": x_s}, params={}, pyg_params=lambda conv: {},
            call=lambda conv, t, e: conv(t["x"], e),
            pyg_forward="conv(x, edge_index)",
            ref=lambda used, n, x, aggr=aggr, root=root: simple_ref(
                used, n, x, aggr, root),
            notes="No parameters.")

    cl = {"W_out": glorot(rngl, (F, O), F, O), "b": small_vec(rngl, (O,)),
          "W_root": glorot(rngl, (F, O), F, O)}

    def cl_ref(used, n, x, W_out, b, W_root):
        deg = np.maximum(np.bincount(used[1], minlength=n), 1)[:, None]
        return ((spread(used, x) + 0.5 * x) / deg) @ W_out + b + x @ W_root
    library_case(
        "clustergcnconv_small_selfloops", definition="ClusterGCNConv",
        gnn="gnn/clustergcnconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "diag_lambda": 0.5},
        loops="replace", ctor="ClusterGCNConv(%d, %d, diag_lambda=0.5)" % (
            F, O),
        inputs={"x": x_s}, params=cl,
        pyg_params=lambda conv: {**lin(conv.lin_out, "W_out", "b"),
                                 **lin(conv.lin_root, "W_root", None)},
        call=lambda conv, t, e: conv(t["x"], e),
        pyg_forward="conv(x, edge_index)", ref=cl_ref,
        notes="Parameter map: W_out, b = lin_out (weight transposed); "
              "W_root = lin_root.weight.T (no bias). PyG's default "
              "add_self_loops=True removes the graph's self-loops and adds "
              "one per vertex; the case's graph is that graph already, so "
              "PyG's pass leaves it as it is.")

    NF, CUT = 6, 5.0
    cf = {"W1": glorot(rngl, (F, NF), F, NF),
          "W2": glorot(rngl, (NF, O), NF, O), "b2": small_vec(rngl, (O,)),
          "W_nn1": glorot(rngl, (D, NF), D, NF),
          "b_nn1": small_vec(rngl, (NF,)),
          "W_nn2": glorot(rngl, (NF, NF), NF, NF),
          "b_nn2": small_vec(rngl, (NF,))}
    dist_s = quant(rngl.uniform(0.0, CUT, size=(ei_s.shape[1],)))

    def cf_ref(used, n, x, edge_weight, edge_attr, W1, W2, b2, W_nn1, b_nn1,
               W_nn2, b_nn2):
        cut = 0.5 * (np.cos(edge_weight * np.pi / CUT) + 1.0)
        s_ = edge_attr @ W_nn1 + b_nn1
        filt = (np.where(s_ > 20, s_, np.log1p(np.exp(s_))) - np.log(2.0)
                ) @ W_nn2 + b_nn2
        msg = (x @ W1)[used[0]] * filt * cut[:, None]
        out = np.zeros((n, NF))
        np.add.at(out, used[1], msg)
        return out @ W2 + b2
    library_case(
        "cfconv_small", definition="CFConv", gnn="gnn/cfconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "num_filters": NF,
                 "num_gaussians": D, "cutoff": CUT},
        loops=False,
        ctor=("CFConv(%d, %d, %d, torch.nn.Sequential(torch.nn.Linear(%d, "
              "%d), ShiftedSoftplus(), torch.nn.Linear(%d, %d)), %r)" % (
                  F, O, NF, D, NF, NF, NF, CUT)),
        inputs={"x": x_s, "edge_weight": dist_s, "edge_attr": ea3},
        params=cf,
        pyg_params=lambda conv: {
            **lin(conv.lin1, "W1", None), **lin(conv.lin2, "W2", "b2"),
            **lin(conv.nn[0], "W_nn1", "b_nn1"),
            **lin(conv.nn[2], "W_nn2", "b_nn2")},
        call=lambda conv, t, e: conv(t["x"], e, t["edge_weight"],
                                     t["edge_attr"]),
        pyg_forward="conv(x, edge_index, edge_weight, edge_attr)",
        ref=cf_ref,
        notes="torch_geometric.nn.models.schnet.CFConv with SchNet's filter "
              "network as nn. Parameter map: W1 = lin1.weight.T (no bias); "
              "W2, b2 = lin2; W_nn1, b_nn1 = nn[0]; W_nn2, b_nn2 = nn[2]; "
              "each W the weight transposed. edge_weight (distances) and "
              "edge_attr have a row per column of edge_index.")

    gen = {"W_src": glorot(rngl, (F, O), F, O),
           "W_dst": glorot(rngl, (F, O), F, O),
           "W_edge": glorot(rngl, (D, O), D, O), "t": np.array([0.75]),
           "W1": glorot(rngl, (O, 2 * O), O, 2 * O),
           "W2": glorot(rngl, (2 * O, O), 2 * O, O)}
    gen_ln = dict(gen, ln_weight=quant(rngl.normal(1.0, 0.2, size=(2 * O,))),
                  ln_bias=small_vec(rngl, (2 * O,)))

    def gen_ref(used, n, x, edge_attr, W_src, W_dst, W_edge, t, W1, W2,
                ln_weight=None, ln_bias=None):
        m = np.maximum((x @ W_src)[used[0]] + edge_attr @ W_edge, 0.0) + 1e-7
        agg = softmax_sum(used, n, m * t, m[..., None])[..., 0]
        z = (agg + x @ W_dst) @ W1
        if ln_weight is not None:
            z = (z - z.mean(-1, keepdims=True)) / np.sqrt(
                z.var(-1, keepdims=True) + 1e-5) * ln_weight + ln_bias
        return np.maximum(z, 0.0) @ W2

    def gen_params(conv, norm):
        """PyG's MLP: Linear, [LayerNorm,] ReLU, Dropout(0), Linear."""
        m = {**lin(conv.lin_src, "W_src", None),
             **lin(conv.lin_dst, "W_dst", None),
             **lin(conv.lin_edge, "W_edge", None),
             "t": same(conv.aggr_module.t), **lin(conv.mlp[0], "W1", None)}
        if norm:
            m.update(ln_weight=same(conv.mlp[1].weight),
                     ln_bias=same(conv.mlp[1].bias))
        m.update(lin(conv.mlp[4 if norm else 3], "W2", None))
        return m
    for case, definition, norm, params_, note in (
            ("genconv_small", "GENConv", None, gen,
             "W2 = mlp[3].weight.T (mlp[2] is a Dropout(0)). norm=None: "
             "PyG's default, a batch norm in the MLP, has no counterpart "
             "yet."),
            ("genconv_small_layernorm", "GENConvLayerNorm", "layer", gen_ln,
             "norm='layer': mlp[1] is a torch.nn.LayerNorm (eps 1e-5), "
             "ln_weight = mlp[1].weight, ln_bias = mlp[1].bias; W2 = "
             "mlp[4].weight.T.")):
        library_case(
            case, definition=definition, gnn="gnn/genconv.gnn",
            hparams={"in_dim": F, "out_dim": O, "edge_dim": D}, loops=False,
            ctor=("GENConv(%d, %d, aggr='softmax', learn_t=True, edge_dim=%d, "
                  "norm=%r)" % (F, O, D, norm)),
            inputs={"x": x_s, "edge_attr": ea3}, params=params_,
            pyg_params=lambda conv, norm=norm: gen_params(conv, norm),
            call=lambda conv, t, e: conv(t["x"], e, t["edge_attr"]),
            pyg_forward="conv(x, edge_index, edge_attr)", ref=gen_ref,
            notes="Parameter map: W_src = lin_src.weight.T, W_dst = "
                  "lin_dst.weight.T, W_edge = lin_edge.weight.T, t = "
                  "aggr_module.t (set to 0.75), W1 = mlp[0].weight.T (no "
                  "biases: PyG's bias=False); " + note + " edge_attr has a "
                  "row per column of edge_index.")

    # PyG's default norm="batch": a torch.nn.BatchNorm1d (momentum 0.1, eps
    # 1e-5) after the MLP's hidden
    # Linear, in training mode (batch statistics, running statistics
    # updated) and in eval mode (the running statistics). Its own draws, so
    # that the cases above keep theirs.
    rng_bn = rng_for("genconv_batchnorm")
    gen_bn = dict(gen, bn_weight=quant(rng_bn.normal(1.0, 0.2, size=(2 * O,))),
                  bn_bias=small_vec(rng_bn, (2 * O,)))
    bn_state = {"bn_mean": small_vec(rng_bn, (2 * O,), scale=0.5),
                "bn_var": quant(rng_bn.uniform(0.5, 2.0, size=(2 * O,)))}

    def gen_bn_ref(used, n, x, edge_attr, W_src, W_dst, W_edge, t, W1, W2,
                   bn_weight, bn_bias, bn_mean, bn_var, training):
        m = np.maximum((x @ W_src)[used[0]] + edge_attr @ W_edge, 0.0) + 1e-7
        agg = softmax_sum(used, n, m * t, m[..., None])[..., 0]
        z = (agg + x @ W_dst) @ W1
        mean, var = (z.mean(0), z.var(0)) if training else (bn_mean, bn_var)
        z = (z - mean) / np.sqrt(var + 1e-5) * bn_weight + bn_bias
        after = {"bn_mean": bn_mean, "bn_var": bn_var}
        if training:
            after = {"bn_mean": 0.9 * bn_mean + 0.1 * mean,
                     "bn_var": 0.9 * bn_var + 0.1 * z.shape[0] /
                     (z.shape[0] - 1) * var}
        return np.maximum(z, 0.0) @ W2, after

    def gen_bn_params(conv):
        bn = conv.mlp[1]                 # a torch.nn.BatchNorm1d
        return {**lin(conv.lin_src, "W_src", None),
                **lin(conv.lin_dst, "W_dst", None),
                **lin(conv.lin_edge, "W_edge", None),
                "t": same(conv.aggr_module.t),
                **lin(conv.mlp[0], "W1", None),
                "bn_weight": same(bn.weight), "bn_bias": same(bn.bias),
                **lin(conv.mlp[4], "W2", None)}
    for case, training in (("genconv_small_batchnorm", True),
                           ("genconv_small_batchnorm_eval", False)):
        library_case(
            case, definition="GENConvBatchNorm", gnn="gnn/genconv.gnn",
            hparams={"in_dim": F, "out_dim": O, "edge_dim": D}, loops=False,
            ctor=("GENConv(%d, %d, aggr='softmax', learn_t=True, edge_dim=%d)"
                  % (F, O, D)),
            inputs={"x": x_s, "edge_attr": ea3}, params=gen_bn,
            pyg_params=gen_bn_params,
            buffers={k: (v, lambda conv, k=k: getattr(
                conv.mlp[1], "running_" + k[3:]))
                for k, v in bn_state.items()},
            training=training,
            call=lambda conv, t, e: conv(t["x"], e, t["edge_attr"]),
            pyg_forward="conv(x, edge_index, edge_attr)", ref=gen_bn_ref,
            notes="Parameter map: W_src = lin_src.weight.T, W_dst = "
                  "lin_dst.weight.T, W_edge = lin_edge.weight.T, t = "
                  "aggr_module.t (set to 0.75), W1 = mlp[0].weight.T, W2 = "
                  "mlp[4].weight.T (no biases: PyG's bias=False); PyG's "
                  "default norm='batch': mlp[1] is a torch.nn.BatchNorm1d "
                  "(momentum 0.1, eps 1e-5): bn_weight = mlp[1].weight, "
                  "bn_bias = mlp[1].bias, and the buffers bn_mean = "
                  "mlp[1].running_mean, bn_var = mlp[1].running_var, which "
                  "start from "
                  "params/bn_mean.npy and params/bn_var.npy. " +
                  ("The module is in training mode (conv.train()): the batch "
                   "statistics normalise, and expected/buffers/ holds the "
                   "running statistics the forward updated (unbiased "
                   "variance)." if training else
                   "The module is in eval mode (conv.eval()): the running "
                   "statistics normalise and stay as they are.") +
                  " edge_attr has a row per column of edge_index.")

    Hp = 6
    pd = {"W": glorot(rngl, (F, O), F, O),
          "W_e1": glorot(rngl, (D, Hp), D, Hp), "b_e1": small_vec(rngl, (Hp,)),
          "W_e2": glorot(rngl, (Hp, 1), Hp, 1), "b_e2": small_vec(rngl, (1,)),
          "b": small_vec(rngl, (O,))}

    def pd_ref(used, n, x, edge_attr, W, W_e1, b_e1, W_e2, b_e2, b):
        w = 1.0 / (1.0 + np.exp(-(np.maximum(edge_attr @ W_e1 + b_e1, 0.0)
                                  @ W_e2 + b_e2)[:, 0]))
        deg = np.zeros(n)
        np.add.at(deg, used[1], w)
        dis = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)),
                       0.0)
        return spread(used, x @ W, dis[used[0]] * w * dis[used[1]]) + b
    library_case(
        "pdnconv_small", definition="PDNConv", gnn="gnn/pdnconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "edge_dim": D, "hidden": Hp},
        loops=False,
        ctor=("PDNConv(%d, %d, %d, %d, add_self_loops=False)" % (
            F, O, D, Hp)),
        inputs={"x": x_s, "edge_attr": ea3}, params=pd,
        pyg_params=lambda conv: {
            **lin(conv.lin, "W", None),
            **lin(conv.mlp[0], "W_e1", "b_e1"),
            **lin(conv.mlp[2], "W_e2", "b_e2"), "b": same(conv.bias)},
        call=lambda conv, t, e: conv(t["x"], e, t["edge_attr"]),
        pyg_forward="conv(x, edge_index, edge_attr)", ref=pd_ref,
        notes="Parameter map: W = lin.weight.T (no bias); W_e1, b_e1 = "
              "mlp[0]; W_e2, b_e2 = mlp[2] (each weight transposed); b = "
              "bias. gcn_norm with the learnt edge weights, no self-loops "
              "added. edge_attr has a row per column of edge_index.")

    pn4 = {"W_edge": glorot(rngl, (D, F), D, F),
           "b_edge": small_vec(rngl, (F,)),
           "W_pre_dst": glorot(rngl, (F, F), 3 * F, F),
           "W_pre_src": glorot(rngl, (F, F), 3 * F, F),
           "W_pre_edge": glorot(rngl, (F, F), 3 * F, F),
           "b_pre": small_vec(rngl, (F,)),
           "W_post": glorot(rngl, (13 * F, O), 13 * F, O),
           "b_post": small_vec(rngl, (O,)),
           "W_lin": glorot(rngl, (O, O), O, O), "b_lin": small_vec(rngl, (O,))}
    # PyG's deg: the in-degree histogram of the small graph.
    pna_hist = np.bincount(np.bincount(ei_s[1], minlength=SMALL_N))
    pna_avg_log = float((np.log(np.arange(len(pna_hist)) + 1.0) *
                         pna_hist).sum() / pna_hist.sum())

    def pna_ref(used, n, x, edge_attr, W_edge, b_edge, W_pre_dst, W_pre_src,
                W_pre_edge, b_pre, W_post, b_post, W_lin, b_lin):
        src, dst = used[0], used[1]
        h = ((x @ W_pre_dst + b_pre)[dst] + (x @ W_pre_src)[src]
             + (edge_attr @ W_edge + b_edge) @ W_pre_edge)
        deg = np.bincount(dst, minlength=n).astype(np.float64)[:, None]
        s1, s2 = np.zeros((n, F)), np.zeros((n, F))
        np.add.at(s1, dst, h)
        np.add.at(s2, dst, h * h)
        mean, mean2 = s1 / np.maximum(deg, 1.0), s2 / np.maximum(deg, 1.0)
        std = np.sqrt(np.maximum(mean2 - mean * mean, 1e-5))
        agg = np.concatenate([mean, -max_of(used, n, -h), max_of(used, n, h),
                              std], -1)
        amp = np.log(deg + 1.0) / pna_avg_log
        att = pna_avg_log / np.log(np.maximum(deg, 1.0) + 1.0)
        post = np.concatenate([x, agg, agg * amp, agg * att], -1) @ W_post
        return (post + b_post) @ W_lin + b_lin
    library_case(
        "pnaconv_small", definition="PNAConv", gnn="gnn/pnaconv.gnn",
        hparams={"in_dim": F, "out_dim": O, "edge_dim": D,
                 "avg_deg_log": pna_avg_log},
        loops=False,
        ctor=("PNAConv(%d, %d, ['mean', 'min', 'max', 'std'], ['identity', "
              "'amplification', 'attenuation'], torch.tensor(%s), "
              "edge_dim=%d)" % (F, O, pna_hist.tolist(), D)),
        inputs={"x": x_s, "edge_attr": ea3}, params=pn4,
        pyg_params=lambda conv: {
            **lin(conv.edge_encoder, "W_edge", "b_edge"),
            **split_rows(conv.pre_nns[0][0], ("W_pre_dst", pn4["W_pre_dst"]),
                         ("W_pre_src", pn4["W_pre_src"]),
                         ("W_pre_edge", pn4["W_pre_edge"])),
            "b_pre": same(conv.pre_nns[0][0].bias),
            **lin(conv.post_nns[0][0], "W_post", "b_post"),
            **lin(conv.lin, "W_lin", "b_lin")},
        call=lambda conv, t, e: conv(t["x"], e, t["edge_attr"]),
        pyg_forward="conv(x, edge_index, edge_attr)", ref=pna_ref,
        notes="Parameter map: W_edge, b_edge = edge_encoder; [W_pre_dst; "
              "W_pre_src; W_pre_edge] = pre_nns[0][0].weight.T by rows "
              "(x_i, x_j, the encoded edge), b_pre = its bias; W_post, "
              "b_post = post_nns[0][0]; W_lin, b_lin = lin; each W the "
              "weight transposed. deg is the small graph's in-degree "
              "histogram, and avg_deg_log = %.17g is PyG's avg_deg_log "
              "from it (the power-law case keeps the layer). edge_attr has "
              "a row per column of edge_index." % pna_avg_log)

    # ---------------- PyG behaviour probes ----------------

    probe = scatter(T(np.array([[-3.0], [-1.0]])), torch.tensor([0, 0]),
                    0, dim_size=2, reduce="max")
    assert probe.numpy().ravel().tolist() == [-1.0, 0.0], probe
    probe = scatter(T(np.array([[4.0]])), torch.tensor([1]), 0, dim_size=2,
                    reduce="mean")
    assert probe.numpy().ravel().tolist() == [0.0, 4.0], probe

    # ---------------- the cases ----------------

    F, O = SMALL_F, 4
    gcn_case("gcn_small", "own", False, F, O)
    gcn_case("gcn_small_selfloops", "own", True, F, O)
    gcn_case("gcn_cora", "cora", True, 1433, 16)
    gat_case("gat_small_concat", "own", False, F, O, 3, True)
    gat_case("gat_small_mean", "own", False, F, O, 3, False)
    gat_case("gat_small_concat_selfloops", "own", True, F, O, 3, True)
    gat_case("gat_cora_concat", "cora", True, 1433, 2, 8, True, 6.0)
    gat_case("gat_cora_mean", "cora", True, 1433, 4, 4, False, 6.0)
    sage_mean_case("sage_mean_small", "own", F, O)
    sage_mean_case("sage_mean_cora", "cora", 1433, 8)
    sage_max_case("sage_max_small", "own", F, O, F)
    sage_max_case("sage_max_small_pool7", "own", F, O, 7)
    sage_max_case("sage_max_cora", "cora", 1433, 8, 8)
    gin_case("gin_small", "own", F, O, 6, 0.25, False)
    gin_case("gin_small_weighted", "own", F, O, 6, 0.25, True)
    gin_case("gin_cora", "cora", 1433, 8, 8, 0.0, False)
    appnp_case("appnp_small", "own", False, O, 10, 0.1)
    appnp_case("appnp_cora", "cora", True, 7, 10, 0.1)

    total = sum(p.stat().st_size for p in out_dir.rglob("*") if p.is_file())
    for name, meta in summary:
        print(f"  {name:28s} {meta['definition']:13s} graph={meta['graph']:4s}"
              f" N={meta['num_nodes']:<5d} E={meta['num_edges']:<6d} "
              f"out={meta['expected']['out']}")
    print(f"make_goldens: {len(summary)} cases, {total} bytes in {out_dir}")
    print("make_goldens: versions", json.dumps(versions))
    return total


def _deb_version(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    return r.stdout.strip() or "?"


def compare(new_dir, old_dir):
    import numpy as np
    new_dir, old_dir = pathlib.Path(new_dir), pathlib.Path(old_dir)
    names = lambda d: sorted(str(p.relative_to(d)) for p in d.rglob("*")
                             if p.is_file() and p.parent != d)
    bad = []
    if names(new_dir) != names(old_dir):
        bad.append("file lists differ")
    for rel in names(new_dir):
        a, b = new_dir / rel, old_dir / rel
        if not b.exists():
            continue
        if rel.endswith(".npy"):
            x, y = np.load(a), np.load(b)
            if x.dtype != y.dtype or x.shape != y.shape:
                bad.append(f"{rel}: dtype/shape")
            elif x.size and np.max(np.abs(x - y)) > CHECK_TOL * max(
                    1.0, float(np.max(np.abs(y)))):
                bad.append(f"{rel}: values")
        elif rel.endswith("case.json"):
            ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
            for j in (ja, jb):
                j.pop("checks", None)
                j.pop("versions", None)
                j.pop("notes", None)  # carries the measured differences
            if ja != jb:
                bad.append(f"{rel}: fields")
    for line in bad:
        print("make_goldens --check:", line)
    return not bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "tests" / "goldens"))
    ap.add_argument("--cora", default=str(DEFAULT_CORA))
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.inner:
        if not args.no_install:
            install()
        argv = [DEB_PY, os.path.abspath(__file__), "--inner", *sys.argv[1:]]
        os.execv(DEB_PY, argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            generate(pathlib.Path(tmp) / "goldens", args.cora)
            ok = compare(pathlib.Path(tmp) / "goldens", args.out)
        print("make_goldens --check:", "OK" if ok else "DIFFERENT")
        sys.exit(0 if ok else 1)
    generate(args.out, args.cora)


if __name__ == "__main__":
    main()
