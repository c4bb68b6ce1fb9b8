"""The anchors of a mini-batch training benchmark: two-layer GraphSAGE node
classification trained with sampled mini-batches by PyG and by DGL
GraphBolt on the CPU, one implementation per process.

Runs in the sampling benchmark's virtual environment
(build/bench-sampling-venv, tools/benchmarks/requirements-sampling*.txt):

    P=build/bench-sampling-venv/bin/python
    $P tools/benchmarks/disttrain/anchors.py --probe
    $P tools/benchmarks/disttrain/anchors.py --impl pyg \\
        --data /work/shared/datasets/cora --fanouts 25,10 --batch-size 256 \\
        --threads 2 --epochs 3 --warmup 1 [--eval] [--out result.json]
    $P tools/benchmarks/disttrain/anchors.py --impl graphbolt ... (the same)

Dataset (--data DIR): edge_index.npy (int64 [2, E], row 0 the source, row 1
the destination: a vertex aggregates over its in-edges), x.npy (float32
[N, F]), y.npy (int64 [N]; classes = max + 1), train_mask.npy, val_mask.npy,
test_mask.npy (bool [N]). The rows of x are divided by their sums after
loading (rows summing to 0 stay), as gnnc-train does; --no-normalize keeps
them.

Model, the same in both, as dsl-examples/sage2_block.gnn: dropout 0.5 on the
input features, SAGEConv(F, hidden) with mean aggregation, root weight and
one bias (out_i = x_i W_self + mean_j x_j W_neigh + b), ReLU, dropout 0.5,
SAGEConv(hidden, classes); softmax cross-entropy averaged over the batch's
seeds; torch.optim.Adam(lr 0.01, weight decay 5e-4, L2 added to the
gradient). The weights are re-initialised Glorot-uniform (gain 1) and the
biases zero, as the .gnn declares them, instead of each library's own
initialisation (PyG: Kaiming-uniform; DGL: Glorot with the ReLU gain).

  * pyg: torch_geometric.loader.NeighborLoader(Data(x, y, edge_index),
    num_neighbors=fanouts reversed (PyG starts at the seeds),
    input_nodes=training vertices, batch_size, shuffle=True, num_workers=0),
    sampling with pyg-lib or torch-sparse, whichever imports (--probe says),
    then torch_geometric.nn.SAGEConv twice over the batch's whole sampled
    subgraph and the first batch.batch_size rows (the seeds) of the output.
    Both layers run on every sampled vertex, and the seeds' first-layer
    neighbours are the ones sampled for the seeds (the innermost fanout).
  * graphbolt: dgl.graphbolt.fused_csc_sampling_graph on the CSC by
    destination, gb.ItemSampler(gb.ItemSet((train ids, their labels),
    names=("seed_nodes", "labels")), batch_size, shuffle=True)
    .sample_neighbor(graph, fanouts).fetch_feature(store, ["feat"]) through
    gb.DataLoader(num_workers=0), then dgl.nn.SAGEConv('mean') over
    minibatch.blocks: each layer computes its own block's destinations
    only, and every destination of the first block (the seeds included) has
    the outermost fanout's neighbours.

Fanouts (--fanouts A,B) are in DGL's order, the outermost hop first; the last
entry is the seeds' (as tools/benchmarks/sampling/anchors.py). Sampling is
uniform without replacement.

--seed seeds torch, NumPy, DGL, GraphBolt and the GraphBolt item sampler's
shuffle (which draws from its own unseeded NumPy generator otherwise). A
PyG run repeats exactly; a GraphBolt run does with --threads 1 only (with
more, which thread samples which seed, and so the random draws, vary).

An epoch is one pass over all training vertices in shuffled batches of
--batch-size, the last partial batch kept. --warmup epochs (default 1) train
untimed first, then --epochs timed ones. One epoch's time runs from creating
the loader's iterator to the end of its last optimizer step, and is split
into
  sample_s   time inside the iterator's next(): item shuffling and batching,
             neighbour sampling, relabelling, and the gather of the input
             vertices' features (and PyG's of their labels);
  prep_s     between next() and the forward: GraphBolt's conversion of the
             sampled subgraphs to DGL blocks (minibatch.blocks) and the
             labels' read; PyG's seed slicing;
  compute_s  forward, loss, backward and the Adam step;
the rest (seconds minus the three) is the loop itself. cpu_s is the
process's CPU time over the epoch (all its threads). Both loaders are made
once, untimed (setup_s: PyG converts the graph to its CSC there, GraphBolt's
graph is built from a CSC sorted here), and iterated once per epoch.

--eval: after the timed epochs, accuracies on the training, validation and
test vertices with full neighbourhoods (every in-edge, no sampling), in
evaluation mode (no dropout): each layer once over the whole graph (PyG:
SAGEConv on a torch-sparse SparseTensor adjacency, or a torch CSR tensor
without torch-sparse; DGL: SAGEConv on dgl.graph), the same computation
gnnc-train --minibatch's full-neighbourhood evaluation makes on the seeds.

Memory, from /proc/self/status: rss_before_load_mib (after the imports),
rss_after_load_mib (the arrays read and normalised), rss_after_setup_mib
(graph, loader, model), peak_rss_mib (VmHWM at the end of the timed epochs:
the high-water mark of the whole process, loading included) and, with
--eval, peak_rss_after_eval_mib.

Prints one JSON object (also to --out): the dataset's sizes, the settings,
"epochs" (per timed epoch: seconds, sample_s, prep_s, compute_s, cpu_s,
loss = the mean over the epoch's seeds, batches, sampled_edges = edges the
model aggregates over, input_vertices = vertices whose features were
fetched), "warmup_epochs" (seconds, loss), median_epoch_s, seeds_per_s (the
training vertices / median_epoch_s), the medians of the split, the memory
figures, versions and threads, and "eval". Progress goes to stderr. A bad
flag, a missing or malformed dataset file, or a failure while training: one
line on stderr and exit status 1 (--traceback adds Python's traceback).
"""
import argparse
import pathlib
import json
import os
import statistics
import sys
import time
import traceback
import warnings

PROG = "anchors.py"
FILES = ["edge_index.npy", "x.npy", "y.npy", "train_mask.npy",
         "val_mask.npy", "test_mask.npy"]
DROPOUT = 0.5
LR = 0.01
WEIGHT_DECAY = 5e-4


class Failure(Exception):
    """An error reported as one line on stderr, exit status 1."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Failure(message)


def status_mib():
    """VmRSS and VmHWM of this process in MiB (None where /proc lacks them)."""
    out = {"VmRSS": None, "VmHWM": None}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in out:
                    out[key] = int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return out


def dist_version(name):
    """The installed version of a distribution, without importing it."""
    try:
        from importlib import metadata
        return metadata.version(name)
    except Exception:  # noqa: BLE001
        return None


def probe():
    """The sampling benchmark's probe (the versions of torch, NumPy, DGL with
    GraphBolt, PyG and its sampler), plus the layers this benchmark trains."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "sampling_anchors", str(pathlib.Path(__file__).resolve().parent.parent
                                / "sampling" / "anchors.py"))
    sampling = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sampling)
    out = sampling.probe()
    if out.get("graphbolt"):
        try:
            from dgl.nn.pytorch import SAGEConv  # noqa: F401
            out["dgl_sageconv"] = True
        except Exception as e:  # noqa: BLE001
            out["graphbolt_error"] = "%s: %s" % (type(e).__name__, str(e)[:400])
    if out.get("pyg"):
        try:
            from torch_geometric.loader import NeighborLoader  # noqa: F401
            from torch_geometric.nn import SAGEConv  # noqa: F401,F811
        except Exception as e:  # noqa: BLE001
            out["pyg_error"] = "%s: %s" % (type(e).__name__, str(e)[:400])
    return out


def fanout_list(text):
    try:
        out = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("not a comma-separated list of "
                                         "integers: %r" % text)
    if len(out) != 2 or any(f <= 0 for f in out):
        raise argparse.ArgumentTypeError("the two-layer model takes two "
                                         "positive fanouts, got %r" % text)
    return out


def positive(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not an integer: %r" % text)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be positive: %r" % text)
    return v


def non_negative(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not an integer: %r" % text)
    if v < 0:
        raise argparse.ArgumentTypeError("must not be negative: %r" % text)
    return v


def load_dataset(folder, normalize):
    """The arrays of the dataset as torch tensors, checked."""
    import numpy as np
    import torch
    if not os.path.isdir(folder):
        raise Failure("%s: not a folder" % folder)
    arrays = {}
    for name in FILES:
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            raise Failure("%s: missing" % path)
        try:
            arrays[name[:-4]] = np.load(path, allow_pickle=False)
        except Exception as e:  # noqa: BLE001
            raise Failure("%s: cannot read: %s" % (path, e))
    ei, x, y = arrays["edge_index"], arrays["x"], arrays["y"]

    def bad(name, what):
        return Failure("%s: %s" % (os.path.join(folder, name + ".npy"), what))
    if x.ndim != 2:
        raise bad("x", "expected [N, F], shape %s" % (x.shape,))
    n = x.shape[0]
    if x.dtype != np.float32:
        raise bad("x", "expected float32, got %s" % x.dtype)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise bad("edge_index", "expected [2, E], shape %s" % (ei.shape,))
    if not np.issubdtype(ei.dtype, np.integer):
        raise bad("edge_index", "expected int64, got %s" % ei.dtype)
    if y.shape != (n,) or not np.issubdtype(y.dtype, np.integer):
        raise bad("y", "expected integers [%d], got %s %s" % (n, y.dtype, y.shape))
    masks = {}
    for split in ("train", "val", "test"):
        m = arrays[split + "_mask"]
        if m.shape != (n,):
            raise bad(split + "_mask", "expected [%d], shape %s" % (n, m.shape))
        if m.dtype != np.bool_:
            if not np.issubdtype(m.dtype, np.integer):
                raise bad(split + "_mask", "expected bool, got %s" % m.dtype)
            m = m != 0
        masks[split] = torch.from_numpy(np.ascontiguousarray(m))
    if ei.dtype != np.int64:
        ei = ei.astype(np.int64)
    if ei.shape[1] and (ei.min() < 0 or ei.max() >= n):
        raise bad("edge_index", "vertex ids outside [0, %d)" % n)
    if n and (y.min() < 0):
        raise bad("y", "negative class")
    if int(masks["train"].sum()) == 0:
        raise bad("train_mask", "no training vertices")
    x = torch.from_numpy(np.ascontiguousarray(x))
    if normalize:
        sums = x.sum(dim=1, dtype=torch.float64)
        sums[sums == 0] = 1.0
        x.div_(sums.to(torch.float32).unsqueeze(1))
    return {
        "edge_index": torch.from_numpy(np.ascontiguousarray(ei)),
        "x": x,
        "y": torch.from_numpy(y.astype(np.int64, copy=False)),
        "masks": masks,
        "num_nodes": int(n),
        "num_classes": int(y.max()) + 1 if n else 0,
    }


def glorot_(layer_weights, biases):
    import torch
    for w in layer_weights:
        torch.nn.init.xavier_uniform_(w)
    for b in biases:
        torch.nn.init.zeros_(b)


# --------------------------------------------------------------------------
# PyG


def pyg_setup(ds, args):
    import torch
    import torch.nn.functional as F
    import torch_geometric.typing as tgt
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader
    from torch_geometric.nn import SAGEConv

    if not (tgt.WITH_PYG_LIB or tgt.WITH_TORCH_SPARSE):
        raise Failure("PyG's NeighborLoader needs pyg-lib or torch-sparse; "
                      "neither imports (--probe)")

    class Net(torch.nn.Module):
        def __init__(self, fin, hidden, classes):
            super().__init__()
            self.conv1 = SAGEConv(fin, hidden, aggr="mean", root_weight=True,
                                  bias=True)
            self.conv2 = SAGEConv(hidden, classes, aggr="mean",
                                  root_weight=True, bias=True)
            # lin_l: the neighbour term and the bias; lin_r: the root term.
            glorot_([c.lin_l.weight for c in (self.conv1, self.conv2)]
                    + [c.lin_r.weight for c in (self.conv1, self.conv2)],
                    [c.lin_l.bias for c in (self.conv1, self.conv2)])

        def forward(self, x, adj):
            x = F.dropout(x, DROPOUT, self.training)
            h = F.relu(self.conv1(x, adj))
            h = F.dropout(h, DROPOUT, self.training)
            return self.conv2(h, adj)

    data = Data(x=ds["x"], y=ds["y"], edge_index=ds["edge_index"],
                num_nodes=ds["num_nodes"])
    train_ids = ds["masks"]["train"].nonzero().view(-1)
    loader = NeighborLoader(data, num_neighbors=list(reversed(args.fanouts)),
                            input_nodes=train_ids, batch_size=args.batch_size,
                            shuffle=True, replace=False, num_workers=0)
    model = Net(ds["x"].shape[1], args.hidden, ds["num_classes"])
    backend = "pyg-lib" if tgt.WITH_PYG_LIB else "torch-sparse"

    def prep(batch):
        n = batch.batch_size
        return (batch.x, batch.edge_index), batch.y[:n], n

    def forward(inputs, n):
        x, edge_index = inputs
        return model(x, edge_index)[:n]

    def counts(batch):
        return int(batch.edge_index.size(1)), int(batch.num_nodes)

    def full_logits():
        n = ds["num_nodes"]
        src, dst = ds["edge_index"][0], ds["edge_index"][1]
        if tgt.WITH_TORCH_SPARSE:
            from torch_sparse import SparseTensor
            adj = SparseTensor(row=dst, col=src, sparse_sizes=(n, n))
        else:
            from torch_geometric.utils import to_torch_csr_tensor
            adj = to_torch_csr_tensor(torch.stack([dst, src]), size=(n, n))
        return model(ds["x"], adj)

    return {"model": model, "loader": loader, "prep": prep,
            "forward": forward, "counts": counts, "full_logits": full_logits,
            "sampler": backend}


# --------------------------------------------------------------------------
# GraphBolt


def graphbolt_setup(ds, args):
    import numpy as np
    import torch
    import torch.nn.functional as F
    import dgl
    import dgl.graphbolt as gb
    from dgl.nn.pytorch import SAGEConv

    class Net(torch.nn.Module):
        def __init__(self, fin, hidden, classes):
            super().__init__()
            self.conv1 = SAGEConv(fin, hidden, "mean", bias=True)
            self.conv2 = SAGEConv(hidden, classes, "mean", bias=True)
            # fc_neigh: the neighbour term; fc_self: the root term and,
            # with mean aggregation, the bias.
            glorot_([c.fc_self.weight for c in (self.conv1, self.conv2)]
                    + [c.fc_neigh.weight for c in (self.conv1, self.conv2)],
                    [c.fc_self.bias for c in (self.conv1, self.conv2)])

        def forward(self, g1, g2, x):
            # On a block, SAGEConv takes the destinations' rows as the
            # first rows of the sources' (the same dropout mask for both).
            x = F.dropout(x, DROPOUT, self.training)
            h = F.relu(self.conv1(g1, x))
            h = F.dropout(h, DROPOUT, self.training)
            return self.conv2(g2, h)

    n = ds["num_nodes"]
    src, dst = ds["edge_index"][0], ds["edge_index"][1]
    order = torch.argsort(dst, stable=True)
    indices = src[order]
    del order
    indptr = torch.zeros(n + 1, dtype=torch.int64)
    torch.cumsum(torch.bincount(dst, minlength=n), 0, out=indptr[1:])
    graph = gb.fused_csc_sampling_graph(indptr, indices)
    store = gb.BasicFeatureStore(
        {("node", None, "feat"): gb.TorchBasedFeature(ds["x"])})
    train_ids = ds["masks"]["train"].nonzero().view(-1)
    itemset = gb.ItemSet((train_ids, ds["y"][train_ids]),
                         names=("seed_nodes", "labels"))
    items = gb.ItemSampler(itemset, batch_size=args.batch_size, shuffle=True,
                           drop_last=False)
    # ItemSampler draws its shuffles from an unseeded NumPy generator.
    if hasattr(items, "_rng"):
        items._rng = np.random.default_rng(args.seed)
    pipe = items.sample_neighbor(graph, args.fanouts, replace=False)
    pipe = pipe.fetch_feature(store, node_feature_keys=["feat"])
    loader = gb.DataLoader(pipe, num_workers=0)
    model = Net(ds["x"].shape[1], args.hidden, ds["num_classes"])

    def prep(mb):
        g1, g2 = mb.blocks
        return (g1, g2, mb.node_features["feat"]), mb.labels, int(mb.labels.numel())

    def forward(inputs, n):
        g1, g2, x = inputs
        out = model(g1, g2, x)
        if out.shape[0] != n:
            raise RuntimeError("the last block has %d destinations for %d seeds"
                               % (out.shape[0], n))
        return out

    def counts(mb):
        e = sum(int(s.sampled_csc.indices.numel()) for s in mb.sampled_subgraphs)
        return e, int(mb.input_nodes.numel())

    def full_logits():
        g = dgl.graph((src, dst), num_nodes=n)
        x = ds["x"]
        h = F.relu(model.conv1(g, x))
        return model.conv2(g, h)

    return {"model": model, "loader": loader, "prep": prep,
            "forward": forward, "counts": counts, "full_logits": full_logits,
            "sampler": "graphbolt"}


# --------------------------------------------------------------------------


def versions(impl):
    import torch
    out = {"torch": torch.__version__, "numpy": dist_version("numpy")}
    if impl == "pyg":
        import torch_geometric
        out["pyg"] = torch_geometric.__version__
        out["torch_sparse"] = dist_version("torch-sparse")
        out["torch_scatter"] = dist_version("torch-scatter")
        out["pyg_lib"] = dist_version("pyg-lib")
        out["dgl"] = dist_version("dgl")
    else:
        import dgl
        out["dgl"] = dgl.__version__
        out["torchdata"] = dist_version("torchdata")
        out["pyg"] = dist_version("torch-geometric")
    return out


def run_epoch(state, opt, timed):
    import torch.nn.functional as F
    model, loader = state["model"], state["loader"]
    prep, forward, counts = state["prep"], state["forward"], state["counts"]
    model.train()
    sample_s = prep_s = compute_s = 0.0
    loss_sum = 0.0
    seeds = batches = edges = inputs = 0
    perf = time.perf_counter
    c0 = time.process_time()
    t0 = perf()
    it = iter(loader)
    while True:
        a = perf()
        try:
            mb = next(it)
        except StopIteration:
            sample_s += perf() - a
            break
        b = perf()
        inputs_, labels, n = prep(mb)
        c = perf()
        opt.zero_grad()
        out = forward(inputs_, n)
        loss = F.cross_entropy(out, labels)
        loss.backward()
        opt.step()
        d = perf()
        sample_s += b - a
        prep_s += c - b
        compute_s += d - c
        lv = float(loss.detach())
        if lv != lv or lv in (float("inf"), float("-inf")):
            raise Failure("the loss is not finite (batch %d)" % (batches + 1))
        loss_sum += lv * n
        seeds += n
        batches += 1
        if timed:
            e, v = counts(mb)
            edges += e
            inputs += v
    secs = perf() - t0
    cpu = time.process_time() - c0
    rec = {"seconds": secs, "loss": loss_sum / max(seeds, 1)}
    if timed:
        rec.update({"sample_s": sample_s, "prep_s": prep_s,
                    "compute_s": compute_s, "cpu_s": cpu, "batches": batches,
                    "seeds": seeds, "sampled_edges": edges,
                    "input_vertices": inputs})
    return rec


def evaluate(state, ds):
    import torch
    model = state["model"]
    model.eval()
    t0 = time.perf_counter()
    with torch.no_grad():
        pred = state["full_logits"]().argmax(dim=1)
    out = {"neighbourhoods": "full"}
    for split in ("train", "val", "test"):
        m = ds["masks"][split]
        k = int(m.sum())
        out[split + "_acc"] = (float((pred[m] == ds["y"][m]).sum()) / k) if k else None
    out["eval_s"] = time.perf_counter() - t0
    return out


def run(args):
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if args.impl == "graphbolt":
        import dgl
        import dgl.graphbolt as gb
        dgl.seed(args.seed)
        gb.seed(args.seed)
    else:
        import torch_geometric  # noqa: F401
    vers = versions(args.impl)
    rss_before = status_mib()["VmRSS"]

    t0 = time.perf_counter()
    ds = load_dataset(args.data, not args.no_normalize)
    load_s = time.perf_counter() - t0
    rss_load = status_mib()["VmRSS"]
    num_train = int(ds["masks"]["train"].sum())
    print("anchors %s: %s: %d vertices, %d edges, %d features, %d classes, "
          "%d training vertices (%.2f s)" % (
              args.impl, args.data, ds["num_nodes"], ds["edge_index"].shape[1],
              ds["x"].shape[1], ds["num_classes"], num_train, load_s),
          file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    setup = {"pyg": pyg_setup, "graphbolt": graphbolt_setup}[args.impl]
    state = setup(ds, args)
    opt = torch.optim.Adam(state["model"].parameters(), lr=LR,
                           weight_decay=WEIGHT_DECAY)
    setup_s = time.perf_counter() - t0
    rss_setup = status_mib()["VmRSS"]

    warm = []
    for i in range(args.warmup):
        r = run_epoch(state, opt, timed=False)
        warm.append(r)
        print("anchors %s: warm-up epoch %d: %.4g s, loss %.4f" % (
            args.impl, i + 1, r["seconds"], r["loss"]), file=sys.stderr, flush=True)
    epochs = []
    for i in range(args.epochs):
        r = run_epoch(state, opt, timed=True)
        r = dict({"epoch": args.warmup + i + 1}, **r)
        epochs.append(r)
        print("anchors %s: epoch %d: %.4g s (sample %.4g, prep %.4g, compute "
              "%.4g), loss %.4f" % (args.impl, r["epoch"], r["seconds"],
                                    r["sample_s"], r["prep_s"], r["compute_s"],
                                    r["loss"]), file=sys.stderr, flush=True)
    peak = status_mib()["VmHWM"]

    def med(key):
        return statistics.median([e[key] for e in epochs]) if epochs else None
    median_s = med("seconds")
    out = {
        "ok": True,
        "impl": args.impl,
        "sampler": state["sampler"],
        "data": os.path.abspath(args.data),
        "num_vertices": ds["num_nodes"],
        "num_edges": int(ds["edge_index"].shape[1]),
        "num_features": int(ds["x"].shape[1]),
        "num_classes": ds["num_classes"],
        "num_train": num_train,
        "num_val": int(ds["masks"]["val"].sum()),
        "num_test": int(ds["masks"]["test"].sum()),
        "normalized": not args.no_normalize,
        "fanouts": args.fanouts,
        "batch_size": args.batch_size,
        "hidden": args.hidden,
        "dropout": DROPOUT,
        "lr": LR,
        "weight_decay": WEIGHT_DECAY,
        "num_parameters": sum(p.numel() for p in state["model"].parameters()),
        "threads": torch.get_num_threads(),
        "seed": args.seed,
        "warmup": args.warmup,
        "load_s": load_s,
        "setup_s": setup_s,
        "epochs": epochs,
        "warmup_epochs": warm,
        "median_epoch_s": median_s,
        "seeds_per_s": (num_train / median_s) if median_s else None,
        "median_sample_s": med("sample_s"),
        "median_prep_s": med("prep_s"),
        "median_compute_s": med("compute_s"),
        "median_cpu_s": med("cpu_s"),
        "rss_before_load_mib": rss_before,
        "rss_after_load_mib": rss_load,
        "rss_after_setup_mib": rss_setup,
        "peak_rss_mib": peak,
        "versions": vers,
    }
    if args.eval:
        out["eval"] = evaluate(state, ds)
        out["peak_rss_after_eval_mib"] = status_mib()["VmHWM"]
        print("anchors %s: full-neighbourhood accuracy: val %.4f, test %.4f" % (
            args.impl, out["eval"]["val_acc"], out["eval"]["test_acc"]),
            file=sys.stderr, flush=True)
    return out


def parse(argv):
    ap = Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--probe", action="store_true",
                    help="print the installed versions as JSON and stop")
    ap.add_argument("--impl", choices=["pyg", "graphbolt"])
    ap.add_argument("--data", help="the dataset folder (edge_index.npy, x.npy, ...)")
    ap.add_argument("--fanouts", type=fanout_list, default=[25, 10],
                    help="A,B: outermost hop first, the seeds' last (default 25,10)")
    ap.add_argument("--batch-size", type=positive, default=1024)
    ap.add_argument("--hidden", type=positive, default=16)
    ap.add_argument("--epochs", type=positive, default=3, help="timed epochs")
    ap.add_argument("--warmup", type=non_negative, default=1,
                    help="untimed epochs before them (default 1)")
    ap.add_argument("--threads", type=positive, default=1,
                    help="torch.set_num_threads (and OMP_NUM_THREADS)")
    ap.add_argument("--seed", type=non_negative, default=0)
    ap.add_argument("--eval", action="store_true",
                    help="then full-neighbourhood accuracies on train/val/test")
    ap.add_argument("--no-normalize", action="store_true",
                    help="keep the raw features (default: rows divided by their sums)")
    ap.add_argument("--out", help="also write the JSON here")
    ap.add_argument("--traceback", action="store_true",
                    help="on an error, print Python's traceback too")
    args = ap.parse_args(argv)
    if not args.probe and not (args.impl and args.data):
        ap.error("--impl and --data are required (or --probe)")
    if args.out and not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        raise Failure("%s: its folder does not exist" % args.out)
    if not args.probe:
        # Before the imports, which take seconds.
        if not os.path.isdir(args.data):
            raise Failure("%s: not a folder" % args.data)
        for name in FILES:
            if not os.path.isfile(os.path.join(args.data, name)):
                raise Failure("%s: missing" % os.path.join(args.data, name))
    return args


def main(argv):
    args = None
    try:
        args = parse(argv)
        if args.probe:
            text = json.dumps(probe())
        else:
            # Before torch (and DGL's OpenMP kernels) start their thread pools.
            for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                os.environ[var] = str(args.threads)
            text = json.dumps(run(args))
        if args.out:
            try:
                with open(args.out, "w") as f:
                    f.write(text + "\n")
            except OSError as e:
                raise Failure("%s: cannot write: %s" % (args.out, e.strerror))
        print(text)
        return 0
    except Failure as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
    except KeyboardInterrupt:
        print("%s: error: interrupted" % PROG, file=sys.stderr)
    except Exception as e:  # noqa: BLE001
        if args is not None and args.traceback:
            traceback.print_exc()
        msg = " ".join(str(e).split())
        print("%s: error: %s: %s" % (PROG, type(e).__name__, msg[:500]),
              file=sys.stderr)
    return 1


if __name__ == "__main__":
    # torchdata's datapipes warn that they are deprecated, once per stage.
    warnings.simplefilter("ignore")
    sys.exit(main(sys.argv[1:]))
