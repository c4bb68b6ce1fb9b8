"""One PyG or DGL benchmark case, in a fresh process (tools/bench runs it).

    /usr/bin/python3 tools/benchmarks/anchor.py --impl pyg|pyg-sparse|pyg-edgeindex|dgl
        --layer gcn|gat1|gat8|sage_mean|sage_max|gin|gcn_agg|gcn_model|gat_model
        --width F --graph DIR --nodes N --mode infer|train|epoch
        [--warmup W] [--min-reps R] [--max-reps R] [--min-time S]
        [--max-time S] [--threads T] [--seed S] [--compile]
        [--device cuda [--kernels STEPS]]
    /usr/bin/python3 tools/benchmarks/anchor.py --probe

Any Python with torch runs it: tools/bench runs Debian's PyTorch 1.13 with
PyG 2.3 and DGL, and the current PyTorch and PyG from PyPI in their own
environment (build/bench-torch-venv). --compile wraps the layer in
torch.compile(dynamic=False) (an epoch: its forward function); the warm-up
calls compile it, and setup_s does not include that.

--impl gnnc-torch runs gnnc's own layer (the dsl-examples file and
hyper-parameters bench.py's LAYERS names) through gnnc.torch (python/,
docs/python.md), called as PyG's is: it needs GNNC_PREFIX (an installed
gnnc) and python/ on PYTHONPATH.

--kernels STEPS (with --device cuda) profiles STEPS more steps after the
timed ones with torch.profiler and adds "kernels" to the result: each CUDA
kernel and copy by name, its count per step and its device time per step in
microseconds, largest first. Under Nsight Compute (ncu --profile-from-start
off) the first of those steps is the one between cudaProfilerStart and Stop.

Prints one JSON object on stdout, with the same fields as gnnc-bench: the
time of every timed repetition and their median, the process's CPU time of
each repetition and its median, the resident set once the
graph, inputs and model are built (the baseline) and its peak during the
timed part (VmHWM, reset through /proc/self/clear_refs just before the
warm-up).

The layers compute what the matching dsl-examples layer computes, with input
width F and output width F:
  gcn        PyG GCNConv(F, F, add_self_loops=False) / DGL GraphConv(norm='both')
  gat1, gat8 PyG GATConv(F, F / H, heads=H, add_self_loops=False) /
             DGL GATConv(F, F / H, num_heads=H); heads concatenated
  sage_mean  PyG SAGEConv(F, F, aggr='mean') / DGL SAGEConv(F, F, 'mean')
  sage_max   PyG SAGEConv(F, F, aggr='max', project=True) (relu(x W_pool + b)
             before the max, GraphSAGE's pooling aggregator) /
             DGL SAGEConv(F, F, 'pool')
  gin        PyG GINConv(MLP(F, F, F), eps=0) (no edge weights: gnnc's layer
             multiplies by w = 1) / DGL GINConv(MLP, 'sum') with edge_weight = 1
  gcn_agg    the aggregation alone, out[v] = sum of x[u] over in-edges u -> v:
             PyG's MessagePassing path on CPU without torch_scatter
             (index_select, then scatter-add), torch.sparse.mm for
             pyg-sparse, dgl.ops.copy_u_sum for DGL
  gcn_model  the two-layer GCN of PyG's examples/gcn.py (mode epoch only)
  gat_model  the two-layer GAT of PyG's examples/gat.py (mode epoch only)
pyg feeds edge_index; pyg-sparse feeds the transposed adjacency as a
torch.sparse CSR tensor (PyG's torch.sparse path; it coalesces repeated
edges into one entry of weight > 1); pyg-edgeindex (PyG 2.5 and later)
feeds a torch_geometric.EdgeIndex of the same edges sorted by destination
(EdgeIndex(edge_index, sparse_size=(N, N)).sort_by('col')), with which
MessagePassing aggregates over the CSC row pointers (segment reductions)
instead of scattering, and gcn_agg is EdgeIndex.matmul(x, transpose=True);
in the epochs, whose layers add self-loops (which would undo the sorting),
the self-loops are added to the graph before it is sorted and the layers
add none.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import traceback

import numpy as np

import library


def proc_status(key):
    with open("/proc/self/status") as f:
        m = re.search(r"^%s:\s+(\d+) kB" % key, f.read(), re.M)
    return int(m.group(1)) * 1024 if m else -1


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def debian_torch_version():
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-torch"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout.strip() if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def import_dgl():
    """Imports DGL; returns (module, note). DGL 1.1 refuses torch < 1.13.0,
    and Debian's python3-torch 1.13.1 calls itself 1.13.0a0 (a pre-release
    of 1.13.0 to packaging.version); the version string is corrected to the
    Debian package's upstream version before the import, and the fact is
    recorded."""
    import torch
    note = ""
    deb = debian_torch_version()
    if torch.__version__.startswith("1.13.0a0") and deb.startswith("1.13."):
        upstream = deb.split("+")[0]
        note = ("torch.__version__ reads %s for Debian's python3-torch %s; set "
                "to %s before importing DGL, whose check wants >= 1.13.0"
                % (torch.__version__, deb, upstream))
        torch.__version__ = upstream
    os.environ.setdefault("DGLBACKEND", "pytorch")
    import dgl  # noqa: E402
    return dgl, note


def versions(impl):
    import torch
    v = {"python": sys.version.split()[0], "torch": torch.__version__,
         "torch_debian": debian_torch_version(), "numpy": np.__version__,
         "torch_threads": torch.get_num_threads()}
    if impl.startswith("pyg"):
        import torch_geometric
        import torch_geometric.typing as T
        v["torch_geometric"] = torch_geometric.__version__
        v["pyg_extensions"] = {k: bool(getattr(T, k)) for k in dir(T)
                               if k.startswith("WITH_")}
    if impl == "gnnc-torch":
        import gnnc
        v["gnnc_python"] = gnnc.__version__
        v["gnnc_prefix"] = os.environ.get("GNNC_PREFIX", "")
    if impl == "dgl":
        dgl, note = import_dgl()
        v["dgl"] = dgl.__version__
        if note:
            v["dgl_note"] = note
    return v


def probe():
    """What is installed and what runs: versions, torch.compile, TorchScript."""
    out = {"python": sys.version.split()[0]}
    try:
        import torch
        out["torch"] = torch.__version__
        out["torch_debian"] = debian_torch_version()
        out["torch_config"] = torch.__config__.show()[:2000]
        out["torch_parallel"] = torch.__config__.parallel_info()[:1000]
        out["torch_compile"] = hasattr(torch, "compile")
    except Exception as e:  # noqa: BLE001
        out["torch_error"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(out))
        return
    try:
        import torch_geometric
        import torch_geometric.typing as T
        out["torch_geometric"] = torch_geometric.__version__
        out["pyg_extensions"] = {k: bool(getattr(T, k)) for k in dir(T)
                                 if k.startswith("WITH_")}
        try:
            edge_index_sorted(torch.tensor([[0, 1], [1, 0]]), 2)
            out["pyg_edge_index"] = True
        except Exception as e:  # noqa: BLE001
            out["pyg_edge_index"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        from torch_geometric.nn import GCNConv
        conv = GCNConv(8, 8)
        try:
            torch.jit.script(conv.jittable())
            out["pyg_torchscript"] = "ok"
        except Exception as e:  # noqa: BLE001
            out["pyg_torchscript"] = "%s: %s" % (type(e).__name__,
                                                 str(e).splitlines()[0][:300])
    except Exception as e:  # noqa: BLE001
        out["pyg_error"] = "%s: %s" % (type(e).__name__, e)
    try:
        dgl, note = import_dgl()
        out["dgl"] = dgl.__version__
        if note:
            out["dgl_note"] = note
        g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 2])), num_nodes=3)
        dgl.ops.copy_u_sum(g, torch.ones(3, 4))
        out["dgl_ok"] = True
    except Exception as e:  # noqa: BLE001
        out["dgl_error"] = "%s: %s" % (type(e).__name__, str(e)[:500])
    print(json.dumps(out))


def edge_index_sorted(edge_index, N):
    """PyG's EdgeIndex of `edge_index` (sources in row 0), sorted by
    destination: what MessagePassing needs to aggregate over CSC row
    pointers. Needs PyG 2.5 or later."""
    try:
        from torch_geometric import EdgeIndex
    except ImportError as e:
        import torch_geometric
        raise ValueError("EdgeIndex not supported: PyG %s has no "
                         "torch_geometric.EdgeIndex (%s)"
                         % (torch_geometric.__version__, e))
    return EdgeIndex(edge_index, sparse_size=(N, N)).sort_by("col").values


def build_layer(impl, layer, F):
    import torch
    spec = library.entry_of(layer)
    if spec is not None:
        if impl != "pyg":
            raise ValueError("library layers run against pyg only")
        return spec["pyg"](F, library.pyg_namespace())
    if impl == "gnnc-torch":
        import gnnc.torch as gt
        from bench import LAYERS, ROOT
        spec = LAYERS[layer]
        return gt.load(str(ROOT / spec["source"]), spec["entry"],
                       **spec["defines"](F))
    if impl == "dgl":
        from dgl.nn import GATConv, GINConv, GraphConv, SAGEConv
        if layer == "gcn":
            return GraphConv(F, F, norm="both", allow_zero_in_degree=True)
        if layer in ("gat1", "gat8"):
            h = 1 if layer == "gat1" else 8
            return GATConv(F, F // h, num_heads=h, allow_zero_in_degree=True)
        if layer == "sage_mean":
            return SAGEConv(F, F, "mean")
        if layer == "sage_max":
            return SAGEConv(F, F, "pool")
        if layer == "gin":
            mlp = torch.nn.Sequential(torch.nn.Linear(F, F), torch.nn.ReLU(),
                                      torch.nn.Linear(F, F))
            return GINConv(mlp, "sum")
    else:
        from torch_geometric.nn import GATConv, GCNConv, GINConv, SAGEConv
        if layer == "gcn":
            return GCNConv(F, F, add_self_loops=False, normalize=True)
        if layer in ("gat1", "gat8"):
            h = 1 if layer == "gat1" else 8
            return GATConv(F, F // h, heads=h, add_self_loops=False)
        if layer == "sage_mean":
            return SAGEConv(F, F, aggr="mean")
        if layer == "sage_max":
            return SAGEConv(F, F, aggr="max", project=True)
        if layer == "gin":
            mlp = torch.nn.Sequential(torch.nn.Linear(F, F), torch.nn.ReLU(),
                                      torch.nn.Linear(F, F))
            return GINConv(mlp, eps=0.0, train_eps=False)
    raise ValueError("unknown layer %s for %s" % (layer, impl))


# CPU time of the process (all its threads) of each timed repetition.
CPU_TIMES = []


def timed(args, fn):
    for i in range(args.warmup):
        fn()
    times = []
    total = 0.0
    del CPU_TIMES[:]
    for i in range(args.max_reps):
        t0 = time.perf_counter()
        c0 = time.process_time()
        fn()
        dt = time.perf_counter() - t0
        CPU_TIMES.append(time.process_time() - c0)
        times.append(dt)
        total += dt
        if len(times) >= args.min_reps and total >= args.min_time:
            break
        if total >= args.max_time:
            break
    return times


def run(args):
    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    t_setup = time.perf_counter()
    ei_np = np.load(os.path.join(args.graph, "edge_index.npy"))
    N = args.nodes
    E = int(ei_np.shape[1])
    edge_index = torch.from_numpy(ei_np)
    del ei_np
    result = {"ok": True, "impl": args.impl, "layer": args.layer,
              "mode": args.mode, "N": N, "E": E, "threads": args.threads,
              "warmup": args.warmup, "device": args.device}
    impl = args.impl
    F = args.width
    dev = torch.device(args.device)
    if dev.type == "cuda":
        result["device_name"] = torch.cuda.get_device_name(dev)
        if impl not in ("pyg", "pyg-sparse", "pyg-edgeindex", "gnnc-torch"):
            raise ValueError("--device cuda runs pyg, pyg-sparse (cuSPARSE), "
                             "pyg-edgeindex and gnnc-torch only")
        if args.mode == "epoch":
            raise ValueError("--device cuda times layers, not epochs")
        edge_index = edge_index.to(dev)

    graph = None
    if impl in ("pyg", "gnnc-torch"):
        graph = edge_index
    elif impl == "pyg-edgeindex":
        if args.mode == "epoch":
            # The self-loops the epoch's layers would add, added once here:
            # adding them in the layer would undo the sorting.
            from torch_geometric.utils import add_remaining_self_loops
            edge_index, _ = add_remaining_self_loops(edge_index, num_nodes=N)
        graph = edge_index_sorted(edge_index, N)
        del edge_index
        edge_index = None
    elif impl == "pyg-sparse":
        src, dst = edge_index[0], edge_index[1]
        adj = torch.sparse_coo_tensor(torch.stack([dst, src]),
                                      torch.ones(E, device=dev),
                                      (N, N)).coalesce()
        graph = adj.to_sparse_csr()
        del adj, src, dst
        result["nnz"] = int(graph.values().numel())
        del edge_index
        edge_index = None
    elif impl == "dgl":
        dgl, _ = import_dgl()
        graph = dgl.graph((edge_index[0], edge_index[1]), num_nodes=N)
        if args.mode == "epoch":
            graph = dgl.add_self_loop(graph)
        graph.create_formats_()
        del edge_index
        edge_index = None
    else:
        raise ValueError("unknown impl " + impl)

    if args.mode == "epoch":
        return run_epoch(args, graph, result, t_setup)

    gen = torch.Generator().manual_seed(args.seed)
    x = (torch.rand(N, F, generator=gen) * 2 - 1).to(dev)
    train = args.mode == "train"
    if train:
        x.requires_grad_(True)

    if args.layer == "gcn_agg":
        if impl == "pyg":
            src, dst = graph[0], graph[1]

            def layer_fn():
                # What MessagePassing does on CPU without torch_scatter.
                msg = x.index_select(0, src)
                return torch.zeros(N, F, dtype=x.dtype,
                                   device=dev).index_add_(0, dst, msg)
        elif impl == "pyg-sparse":
            # On CUDA, cuSPARSE's SpMM (torch.sparse.mm of a CSR tensor).
            def layer_fn():
                return torch.sparse.mm(graph, x)
        elif impl == "pyg-edgeindex":
            # EdgeIndex's SpMM: rows are sources, so out = A^T x.
            def layer_fn():
                return graph.matmul(x, transpose=True)
        elif impl == "gnnc-torch":
            agg = build_layer(impl, args.layer, F).to(dev)

            def layer_fn():
                return agg(x, graph)
        else:
            def layer_fn():
                return dgl.ops.copy_u_sum(graph, x)
        if args.compile:
            result["compiled"] = True
            layer_fn = torch.compile(layer_fn, dynamic=False)
        params = []
    else:
        model = build_layer(impl, args.layer, F).to(dev)
        spec = library.entry_of(args.layer)
        params = list(model.parameters())
        if not train:
            model.eval()
        if args.compile:
            result["compiled"] = True
            model = torch.compile(model, dynamic=False)
        if impl == "dgl":
            if args.layer == "gin":
                w = torch.ones(E)

                def layer_fn():
                    return model(graph, x, edge_weight=w)
            elif args.layer.startswith("gat"):
                def layer_fn():
                    return model(graph, x).reshape(N, -1)
            else:
                def layer_fn():
                    return model(graph, x)
        elif spec is not None:
            if spec.get("eval"):
                model.eval()
            extra = {}
            for name, dims in spec["inputs"].items():
                shape = [{"N": N, "E": E, "F": F}.get(d, d) for d in dims]
                extra[name] = (torch.rand(*shape, generator=gen) * 2 - 1).to(dev)
                if train:
                    extra[name].requires_grad_(True)

            def layer_fn():
                return spec["call"](model, x, graph, extra)
        elif impl == "gnnc-torch" and args.layer == "gin":
            w = torch.ones(E, device=dev)

            def layer_fn():
                return model(x, w, graph)
        else:
            def layer_fn():
                return model(x, graph)

    result["param_bytes"] = sum(4 * p.numel() for p in params)
    if train:
        cot = (torch.rand(N, F, generator=gen) * 2 - 1).to(dev)

        def step():
            for p in params:
                p.grad = None
            x.grad = None
            out = layer_fn()
            out.backward(cot)
            return out
    else:
        def step():
            with torch.no_grad():
                return layer_fn()

    result["rss_baseline_bytes"] = proc_status("VmRSS")
    result["peak_reset"] = reset_peak()
    result["setup_s"] = time.perf_counter() - t_setup
    last = {}

    def fn():
        last["out"] = step()
        if dev.type == "cuda":
            # A call returns once its kernels are queued: time to the end
            # of the last one.
            torch.cuda.synchronize(dev)

    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    times = timed(args, fn)
    if dev.type == "cuda":
        result["cuda_peak_allocated_bytes"] = torch.cuda.max_memory_allocated(dev)
        if args.kernels:
            result["kernels"] = kernel_profile(torch, fn, args.kernels)
    result["rss_peak_bytes"] = proc_status("VmHWM")
    out = last["out"].detach()
    result["out_shape"] = list(out.shape)
    result["checksum"] = float(out.double().sum())
    result["finite"] = bool(torch.isfinite(out).all())
    return finish(result, times, args)


def kernel_profile(torch, fn, steps):
    """Device time per kernel over `steps` calls of fn, per step."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.profiler.start()
    fn()
    torch.cuda.profiler.stop()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn()
    rows = {}
    for ev in prof.events():
        dev_type = str(getattr(ev, "device_type", ""))
        if "CUDA" not in dev_type:
            continue
        t = ev.time_range.elapsed_us()
        r = rows.setdefault(ev.name, [0, 0.0])
        r[0] += 1
        r[1] += t
    out = [{"name": k, "count": c / steps, "us": t / steps}
           for k, (c, t) in rows.items()]
    out.sort(key=lambda r: -r["us"])
    return out


def run_epoch(args, graph, result, t_setup):
    """One training epoch of PyG's examples/gcn.py (or its DGL equivalent),
    or with --layer gat_model of PyG's examples/gat.py (8 heads of 8, ELU,
    one output head, dropout 0.6 on inputs and attention, Adam lr 0.005
    with weight decay 5e-4)."""
    import torch
    import torch.nn.functional as Fn
    d = args.graph
    x = torch.from_numpy(np.load(os.path.join(d, "x.npy"))).float()
    x = x / x.sum(1, keepdim=True).clamp(min=1)  # NormalizeFeatures
    y = torch.from_numpy(np.load(os.path.join(d, "y.npy"))).long()
    mask = torch.from_numpy(np.load(os.path.join(d, "train_mask.npy"))).bool()
    C = int(y.max()) + 1
    H = 16
    if args.layer == "gat_model":
        return run_gat_epoch(args, graph, result, t_setup, x, y, mask, C)
    if args.impl == "dgl":
        from dgl.nn import GraphConv
        conv1 = GraphConv(x.shape[1], H, norm="both")
        conv2 = GraphConv(H, C, norm="both")

        def forward():
            h = Fn.dropout(x, p=0.5, training=True)
            h = conv1(graph, h).relu()
            h = Fn.dropout(h, p=0.5, training=True)
            return conv2(graph, h)
    else:
        from torch_geometric.nn import GCNConv
        # examples/gcn.py: cached normalisation, self-loops added by the
        # layer (pyg-edgeindex: already in the graph).
        loops = args.impl != "pyg-edgeindex"
        conv1 = GCNConv(x.shape[1], H, cached=True, add_self_loops=loops)
        conv2 = GCNConv(H, C, cached=True, add_self_loops=loops)

        def forward():
            h = Fn.dropout(x, p=0.5, training=True)
            h = conv1(h, graph).relu()
            h = Fn.dropout(h, p=0.5, training=True)
            return conv2(h, graph)
    opt = torch.optim.Adam([dict(params=conv1.parameters(), weight_decay=5e-4),
                            dict(params=conv2.parameters(), weight_decay=0)],
                           lr=0.01)
    return time_epochs(args, result, t_setup, forward, opt, (conv1, conv2), y,
                       mask)


def run_gat_epoch(args, graph, result, t_setup, x, y, mask, C):
    """PyG's examples/gat.py on Cora, or the same network with DGL's
    GATConv (self-loops added to the graph, as PyG's layer adds them)."""
    import torch
    import torch.nn.functional as Fn
    heads, hidden = 8, 8
    if args.impl == "dgl":
        from dgl.nn import GATConv
        conv1 = GATConv(x.shape[1], hidden, num_heads=heads, attn_drop=0.6)
        conv2 = GATConv(heads * hidden, C, num_heads=1, attn_drop=0.6)

        def forward():
            h = Fn.dropout(x, p=0.6, training=True)
            h = Fn.elu(conv1(graph, h).flatten(1))
            h = Fn.dropout(h, p=0.6, training=True)
            return conv2(graph, h).mean(1)
    elif args.impl in ("pyg", "pyg-edgeindex"):
        from torch_geometric.nn import GATConv
        loops = args.impl != "pyg-edgeindex"
        conv1 = GATConv(x.shape[1], hidden, heads=heads, dropout=0.6,
                        add_self_loops=loops)
        conv2 = GATConv(heads * hidden, C, heads=1, concat=False, dropout=0.6,
                        add_self_loops=loops)

        def forward():
            h = Fn.dropout(x, p=0.6, training=True)
            h = Fn.elu(conv1(h, graph))
            h = Fn.dropout(h, p=0.6, training=True)
            return conv2(h, graph)
    else:
        raise ValueError("the GAT epoch runs with pyg, pyg-edgeindex or dgl")
    opt = torch.optim.Adam(list(conv1.parameters()) + list(conv2.parameters()),
                           lr=0.005, weight_decay=5e-4)
    return time_epochs(args, result, t_setup, forward, opt, (conv1, conv2), y,
                       mask)


def time_epochs(args, result, t_setup, forward, opt, modules, y, mask):
    """Times epochs of forward(), the cross-entropy over the training
    vertices, backward and one step of opt."""
    import torch
    import torch.nn.functional as Fn
    result["param_bytes"] = sum(4 * p.numel() for m in modules
                                for p in m.parameters())
    if args.compile:
        # As `model = torch.compile(model)`: the forward (both layers, the
        # dropouts and activations); the warm-up epochs compile it.
        result["compiled"] = True
        forward = torch.compile(forward, dynamic=False)
    last = {}

    def fn():
        opt.zero_grad()
        out = forward()
        loss = Fn.cross_entropy(out[mask], y[mask])
        loss.backward()
        opt.step()
        last["loss"] = float(loss)
        last["out"] = out

    result["rss_baseline_bytes"] = proc_status("VmRSS")
    result["peak_reset"] = reset_peak()
    result["setup_s"] = time.perf_counter() - t_setup
    times = timed(args, fn)
    result["rss_peak_bytes"] = proc_status("VmHWM")
    result["loss"] = last["loss"]
    out = last["out"].detach()
    result["checksum"] = float(out.double().sum())
    result["finite"] = bool(torch.isfinite(out).all())
    return finish(result, times, args)


def finish(result, times, args):
    import resource
    result["times_s"] = times
    result["median_s"] = statistics.median(times)
    result["min_s"] = min(times)
    if CPU_TIMES:
        result["cpu_times_s"] = list(CPU_TIMES)
        result["cpu_median_s"] = statistics.median(CPU_TIMES)
    result["maxrss_process_bytes"] = resource.getrusage(
        resource.RUSAGE_SELF).ru_maxrss * 1024
    result["versions"] = versions(args.impl)
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--probe", action="store_true")
    p.add_argument("--impl", choices=["pyg", "pyg-sparse", "pyg-edgeindex", "dgl",
                                      "gnnc-torch"])
    p.add_argument("--layer")
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--graph")
    p.add_argument("--nodes", type=int)
    p.add_argument("--mode", default="infer", choices=["infer", "train", "epoch"])
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--min-reps", type=int, default=5)
    p.add_argument("--max-reps", type=int, default=50)
    p.add_argument("--min-time", type=float, default=1.0)
    p.add_argument("--max-time", type=float, default=30.0)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cpu",
                   help="cpu, or cuda (pyg and gnnc-torch; times end at "
                        "torch.cuda.synchronize)")
    p.add_argument("--kernels", type=int, default=0,
                   help="with --device cuda: profile this many more steps "
                        "and report the device time per kernel")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the layer (PyTorch 2.x)")
    args = p.parse_args()
    if args.probe:
        probe()
        return 0
    try:
        result = run(args)
    except Exception as e:  # noqa: BLE001
        result = {"ok": False, "impl": args.impl, "layer": args.layer,
                  "mode": args.mode,
                  "error": "%s: %s" % (type(e).__name__, str(e)[:800]),
                  "traceback": traceback.format_exc()[-2000:]}
    print(json.dumps(result))
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
