"""The anchors of tools/bench --sampling: DGL GraphBolt's and PyG's CPU
neighbour samplers, timed on the same CSC and seeds as gnnc-sample-bench.

Runs in the benchmark's virtual environment (build/bench-sampling-venv,
tools/benchmarks/requirements-sampling*.txt), one implementation per process:

    python anchors.py --probe
    python anchors.py --impl graphbolt --indptr G/csc_indptr.npy \\
        --indices G/csc_indices.npy --seeds G/seeds.npy \\
        --fanouts 15,10,5 --fanouts 25,10 --batch 1024 --threads 1,2 \\
        --fetch 0,1 --dim 128 --reps 5 --warmup 1 [--out result.json]
    python anchors.py --impl pyg --graph-list graphs.json --fanouts ... (several
        graphs in one process: {"graphs": {name: result}})

Fanouts are given in DGL's order, from the outermost hop inwards: the last
entry is the seeds' (GraphBolt takes them so; PyG's num_neighbors starts at
the seeds, so it gets the reversed list). Sampling is uniform, without
replacement.

  * graphbolt: gb.fused_csc_sampling_graph(indptr, indices), then
    gb.ItemSampler(gb.ItemSet(seeds), batch_size, shuffle=False)
    .sample_neighbor(graph, fanouts) [.fetch_feature(store, ["feat"])]
    iterated through gb.DataLoader(num_workers=0). Sampled edges of a batch:
    the indices of every sampled subgraph's CSC, summed.
  * pyg: torch_geometric.loader.NeighborLoader over Data(edge_index, x) with
    input_nodes=seeds, shuffle=False, num_workers=0 (its sampler is pyg-lib's
    or torch-sparse's, whichever is installed). Sampled edges of a batch:
    the columns of its edge_index (= sum of num_sampled_edges).

The loader is made once per configuration (untimed); one repetition is one
pass over it (the seeds in batches of --batch), timed from creating the
iterator to its end. torch.set_num_threads(t) for each
thread count. Prints one JSON object shaped like gnnc-sample-bench's (with
"threads" for "workers").
"""
import argparse
import json
import resource
import statistics
import sys
import time
import traceback
import warnings


def probe():
    out = {"python": sys.version.split()[0]}
    try:
        import torch
        out["torch"] = torch.__version__
        out["torch_threads"] = torch.get_num_threads()
    except Exception as e:  # noqa: BLE001
        out["torch_error"] = "%s: %s" % (type(e).__name__, e)
        return out
    try:
        import numpy
        out["numpy"] = numpy.__version__
    except Exception as e:  # noqa: BLE001
        out["numpy_error"] = str(e)
    try:
        import dgl
        out["dgl"] = dgl.__version__
        import dgl.graphbolt as gb  # noqa: F401
        out["graphbolt"] = True
        try:
            import torchdata
            out["torchdata"] = torchdata.__version__
        except Exception:  # noqa: BLE001
            pass
        try:
            import pydantic
            out["pydantic"] = pydantic.VERSION
        except Exception:  # noqa: BLE001
            pass
    except Exception as e:  # noqa: BLE001
        out["graphbolt_error"] = "%s: %s" % (type(e).__name__, str(e)[:400])
    try:
        import torch_geometric
        import torch_geometric.typing as tgt
        out["pyg"] = torch_geometric.__version__
        out["pyg_with_pyg_lib"] = bool(tgt.WITH_PYG_LIB)
        out["pyg_with_torch_sparse"] = bool(tgt.WITH_TORCH_SPARSE)
        if tgt.WITH_PYG_LIB:
            import pyg_lib
            out["pyg_backend"] = "pyg-lib %s" % pyg_lib.__version__
        elif tgt.WITH_TORCH_SPARSE:
            import torch_sparse
            out["pyg_backend"] = "torch-sparse %s" % torch_sparse.__version__
            try:
                import torch_scatter
                out["torch_scatter"] = torch_scatter.__version__
            except Exception:  # noqa: BLE001
                pass
        else:
            out["pyg_backend"] = None
            out["pyg_error"] = ("neither pyg-lib nor torch-sparse imports: "
                                "PyG's NeighborSampler has no sampler")
    except Exception as e:  # noqa: BLE001
        out["pyg_error"] = "%s: %s" % (type(e).__name__, str(e)[:400])
    return out


def int_list(text):
    return [int(x) for x in text.split(",") if x != ""]


def median(xs):
    return statistics.median(xs) if xs else None


def load(args):
    import numpy as np
    import torch
    t0 = time.time()
    indptr = torch.from_numpy(np.load(args.indptr))
    indices = torch.from_numpy(np.load(args.indices))
    seeds = torch.from_numpy(np.load(args.seeds))
    if args.num_seeds is not None:
        seeds = seeds[:args.num_seeds]
    return indptr, indices, seeds, time.time() - t0


def features(n, dim):
    """The N x dim float32 feature matrix, uniform in [0, 1)."""
    import torch
    g = torch.Generator().manual_seed(1)
    return torch.rand(n, dim, generator=g, dtype=torch.float32)


def graphbolt_runner(indptr, indices, seeds, fanouts, fetch, x, batch):
    """A function that makes the loader, and one that gives (sampled edges,
    input vertices) of a batch it yields."""
    import dgl.graphbolt as gb
    graph = gb.fused_csc_sampling_graph(indptr, indices)
    store = None
    if fetch:
        store = gb.BasicFeatureStore({("node", None, "feat"): gb.TorchBasedFeature(x)})
    itemset = gb.ItemSet(seeds, names="seed_nodes")

    def make():
        dp = gb.ItemSampler(itemset, batch_size=batch, shuffle=False)
        dp = dp.sample_neighbor(graph, fanouts, replace=False)
        if fetch:
            dp = dp.fetch_feature(store, node_feature_keys=["feat"])
        return gb.DataLoader(dp, num_workers=0)

    def counts(mb):
        e = sum(int(s.sampled_csc.indices.numel()) for s in mb.sampled_subgraphs)
        n = int(mb.input_nodes.numel())
        if fetch and mb.node_features["feat"].shape[0] != n:
            raise RuntimeError("fetched features do not match the input vertices")
        return e, n

    return make, counts


def pyg_runner(indptr, indices, seeds, fanouts, fetch, x, batch):
    import torch
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader
    n = indptr.numel() - 1
    deg = indptr[1:] - indptr[:-1]
    dst = torch.repeat_interleave(torch.arange(n, dtype=torch.int64), deg)
    data = Data(edge_index=torch.stack([indices, dst]), num_nodes=n)
    if fetch:
        data.x = x
    # PyG's num_neighbors starts at the seeds.
    nn = list(reversed(fanouts))

    def make():
        return NeighborLoader(data, num_neighbors=nn, input_nodes=seeds,
                              batch_size=batch, shuffle=False, replace=False,
                              num_workers=0, is_sorted=True)

    def counts(b):
        e = int(b.edge_index.size(1))
        n = int(b.num_nodes)
        if fetch and b.x.shape[0] != n:
            raise RuntimeError("fetched features do not match the sampled vertices")
        return e, n

    return make, counts


def run(args):
    import torch
    indptr, indices, seeds, load_s = load(args)
    n = indptr.numel() - 1
    fanout_lists = [int_list(f) for f in args.fanouts]
    threads = int_list(args.threads)
    fetches = int_list(args.fetch)
    x = None
    fill_s = 0.0
    if 1 in fetches:
        t0 = time.time()
        x = features(n, args.dim)
        fill_s = time.time() - t0
    runner = {"graphbolt": graphbolt_runner, "pyg": pyg_runner}[args.impl]
    runs = []
    for fanouts in fanout_lists:
        for fetch in fetches:
            # The loader is made once per configuration (PyG's converts the
            # graph to its CSC there) and iterated once per pass, as a
            # training loop iterates it once per epoch.
            setup0 = time.time()
            make, counts = runner(indptr, indices, seeds, fanouts, bool(fetch), x,
                                  args.batch)
            loader = make()
            setup_s = time.time() - setup0
            for t in threads:
                torch.set_num_threads(t)
                timed = []
                batch_edges = []
                for r in range(args.warmup + args.reps):
                    edges = inputs = batches = 0
                    per = []
                    c0 = time.process_time()
                    t0 = time.perf_counter()
                    for mb in loader:
                        e, nin = counts(mb)
                        edges += e
                        inputs += nin
                        batches += 1
                        per.append(e)
                    secs = time.perf_counter() - t0
                    cpu = time.process_time() - c0
                    if r == 0:
                        batch_edges = per
                    if r >= args.warmup:
                        timed.append(dict(s=secs, cpu=cpu, edges=edges,
                                          inputs=inputs, batches=batches))
                secs = [x_["s"] for x_ in timed]
                mid = sorted(range(len(timed)), key=lambda i: timed[i]["s"])[len(timed) // 2]
                m = timed[mid]
                rec = {
                    "fanouts": fanouts, "threads": t, "fetch": bool(fetch),
                    "batches": m["batches"], "seeds": int(seeds.numel()),
                    "sampled_edges": m["edges"], "input_vertices": m["inputs"],
                    "median_s": median(secs),
                    "median_edges_per_s": median([x_["edges"] / x_["s"] for x_ in timed]),
                    "median_batches_per_s": median([x_["batches"] / x_["s"] for x_ in timed]),
                    "median_cpu_s": median([x_["cpu"] for x_ in timed]),
                    "rep_s": secs,
                    "rep_cpu_s": [x_["cpu"] for x_ in timed],
                    "rep_edges": [x_["edges"] for x_ in timed],
                    "batch_edges": batch_edges,
                    "setup_s": setup_s,
                }
                runs.append(rec)
                print("anchors %s: fanouts %s threads %d fetch %d: %.4g s, %.4g edges/s, "
                      "%.4g batches/s" % (args.impl, fanouts, t, fetch, rec["median_s"],
                                          rec["median_edges_per_s"],
                                          rec["median_batches_per_s"]),
                      file=sys.stderr, flush=True)
    return {
        "ok": True, "impl": args.impl, "num_vertices": int(n),
        "num_edges": int(indices.numel()), "num_seeds": int(seeds.numel()),
        "batch_size": args.batch, "dim": args.dim, "reps": args.reps,
        "warmup": args.warmup, "load_s": load_s, "feature_fill_s": fill_s,
        "torch": torch.__version__,
        "maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "runs": runs,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--probe", action="store_true",
                    help="print the installed versions as JSON and stop")
    ap.add_argument("--impl", choices=["graphbolt", "pyg"])
    ap.add_argument("--indptr")
    ap.add_argument("--indices")
    ap.add_argument("--seeds")
    ap.add_argument("--num-seeds", type=int, default=None)
    ap.add_argument("--graph-list", help="a JSON list of {name, indptr, indices, "
                    "seeds}: run each graph in turn, print {graphs: {name: result}}")
    ap.add_argument("--fanouts", action="append", default=[])
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--threads", default="1")
    ap.add_argument("--fetch", default="0")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe()))
        return 0
    if not (args.impl and args.fanouts and (args.graph_list or (
            args.indptr and args.indices and args.seeds))):
        ap.error("--impl, --fanouts and --graph-list or --indptr, --indices and "
                 "--seeds are required")

    def one(a):
        try:
            return run(a)
        except Exception as e:  # noqa: BLE001
            return {"ok": False, "impl": a.impl,
                    "error": "%s: %s" % (type(e).__name__, e),
                    "traceback": traceback.format_exc()[-3000:]}
    if args.graph_list:
        # Several graphs in one process (the smoke run: one start-up of
        # PyTorch and DGL instead of one per graph).
        with open(args.graph_list) as f:
            specs = json.load(f)
        graphs = {}
        for spec in specs:
            a = argparse.Namespace(**vars(args))
            a.indptr, a.indices, a.seeds = spec["indptr"], spec["indices"], spec["seeds"]
            graphs[spec["name"]] = one(a)
        out = {"ok": all(g.get("ok") for g in graphs.values()), "impl": args.impl,
               "graphs": graphs}
    else:
        out = one(args)
    text = json.dumps(out)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0 if out.get("ok") else 1


if __name__ == "__main__":
    # torchdata's datapipes warn that they are deprecated, once per stage.
    warnings.simplefilter("ignore")
    sys.exit(main())
