"""Mini-batch sampling throughput: gnnc_sample against DGL GraphBolt and PyG.

Run through tools/bench:

    tools/bench --sampling          the full run (about 20 to 30 minutes on 2
                                    cores, without the first install): writes
                                    docs/benchmarks/sampling-results.json,
                                    docs/benchmarks/sampling.png and the
                                    section "Mini-batch sampling" of
                                    docs/benchmarks.md
    tools/bench --sampling --quick  a smoke run of a few seconds (Cora and
                                    rmat-12) into build/bench-sampling-quick/;
                                    it installs nothing and runs the anchors
                                    only where their environment exists
    tools/bench --sampling --report-only
                                    rewrite the section and plot from the JSON

or directly (/usr/bin/python3 tools/benchmarks/sampling/run.py ...).

Steps:

  1. Build gnnc_sample and gnnc_runtime in gnnc's build tree (--gnnc-build,
     default build/), or take an installed gnnc package (--prefix); configure
     and build gnnc-sample-bench (tools/benchmarks/sampling/CMakeLists.txt)
     against it.
  2. Unless --no-install or --quick: create the anchors' virtual environment
     (--venv, default build/bench-sampling-venv) with `python3 -m venv` and
     install tools/benchmarks/requirements-sampling.txt from PyPI, then build
     the PyG extensions of requirements-sampling-ext.txt against its torch.
  3. Write each graph once as a CSC by destination (--data-dir, default
     build/bench-sampling-data/<graph>/csc_indptr.npy, csc_indices.npy, both
     int64) with a fixed random permutation of its vertices (perm.npy):
     R-MAT from tools/benchmarks/graphs.py (the same edges as the main
     harness' rmat-S) and Cora from runtime/data/cora.gnnd.
  4. For each graph, write the seeds of the run (the permutation's first
     P vertices, P the largest multiple of the batch size <= N, repeated to
     batches x batch size entries) and run gnnc-sample-bench, then the
     anchors (tools/benchmarks/sampling/anchors.py in the environment), each
     in its own process, on the same files.
  5. Write the JSON and the section (tools/benchmarks/report.py:
     sampling_section, sampling_plots).

Everything in the section comes from the JSON of the run.
"""
import argparse
import datetime
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
BENCH = HERE.parent
ROOT = BENCH.parents[1]
sys.path.insert(0, str(BENCH))
import benchbuild  # noqa: E402

DEB_PY = "/usr/bin/python3"
IMPLS = ["gnnc", "graphbolt", "pyg"]
FANOUTS = ["15,10,5", "25,10"]
BATCH = 1024
DIM = 128
PERM_SEED = 20240617

# Graph -> batches per repetition.
FULL = {
    "graphs": {"cora": 64, "rmat-20": 32, "rmat-22": 32},
    "check_graphs": ["rmat-14"],
    "check_batches": 16,
    "threads": [1, 2],
    "reps": 5,
    "warmup": 1,
}
QUICK = {
    "graphs": {"cora": 4, "rmat-12": 4},
    "check_graphs": [],
    "check_batches": 4,
    "threads": [1, 2],
    "reps": 3,
    "warmup": 1,
}


def log(msg):
    print("bench --sampling: " + msg, flush=True)


sh = benchbuild.sh


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


# --------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------


def build(args):
    """Builds gnnc-sample-bench; returns its path."""
    return benchbuild.build_program(HERE, args, ["gnnc_sample", "gnnc_runtime"],
                                    "gnnc-sample-bench", log)


# --------------------------------------------------------------------------
# The anchors' environment
# --------------------------------------------------------------------------

REQS = BENCH / "requirements-sampling.txt"
REQS_EXT = BENCH / "requirements-sampling-ext.txt"


def pins(path):
    return [l.split("#")[0].strip() for l in path.read_text().splitlines()
            if l.split("#")[0].strip()]


def venv_python(venv):
    return venv / "bin" / "python"


def install(args):
    """Creates the environment and installs the pinned anchors into it
    (again only when the pins changed). Returns the install record; a
    failure is recorded, not fatal: the anchors are then reported as
    unavailable with its message."""
    venv = args.venv
    state_path = venv / "install.json"
    want = {"reqs": pins(REQS), "ext": pins(REQS_EXT)}
    if state_path.exists():
        state = json.loads(state_path.read_text())
        if state.get("pins") == want and state.get("ok"):
            return state
    state = {"pins": want, "ok": False, "steps": []}
    t0 = time.time()

    def step(name, cmd, env=None):
        log("  %s" % name)
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        state["steps"].append({"step": name, "ok": r.returncode == 0,
                               "log": (r.stdout + r.stderr)[-2000:]})
        if r.returncode != 0:
            log("  failed: %s" % ((r.stderr or r.stdout).strip().splitlines() or [""])[-1])
        return r.returncode == 0

    log("installing the anchors into %s (PyPI; the first time takes 10 to 20 "
        "minutes: PyTorch's wheel and its CUDA libraries, and torch-scatter and "
        "torch-sparse built from source)" % venv)
    py = venv_python(venv)
    ok = py.exists() or step("python3 -m venv", [DEB_PY, "-m", "venv", str(venv)])
    pip = [str(py), "-m", "pip", "install", "--disable-pip-version-check",
           "--quiet"]
    ok = ok and step("pip install -r %s" % REQS.relative_to(ROOT),
                     pip + ["-r", str(REQS)])
    # The extensions compile against the environment's torch: no build
    # isolation, CPU only, without debug information (Python's flags have -g,
    # which makes every file of torch's headers several times slower to
    # compile; their setup.py files compile one file at a time).
    env = dict(os.environ, FORCE_ONLY_CPU="1", FORCE_CUDA="0",
               MAX_JOBS=str(args.jobs), CFLAGS="-g0")
    for pin in pins(REQS_EXT):
        ok = ok and step("pip install --no-build-isolation %s" % pin,
                         pip + ["--no-build-isolation", "--no-binary", ":all:", pin],
                         env=env)
    state["ok"] = bool(ok)
    state["seconds"] = time.time() - t0
    venv.mkdir(parents=True, exist_ok=True)
    state_path.write_text(json.dumps(state, indent=1) + "\n")
    return state


def probe(args):
    py = venv_python(args.venv)
    if not py.exists():
        shown = (os.path.relpath(args.venv, ROOT) if str(args.venv).startswith(str(ROOT))
                 else str(args.venv))
        return {"venv_error": "no environment at %s (tools/bench --sampling "
                "installs it; --quick does not)" % shown}
    r = subprocess.run([str(py), str(HERE / "anchors.py"), "--probe"],
                       capture_output=True, text=True)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"venv_error": "the probe failed: " + (r.stderr or r.stdout)[-600:]}


def availability(pr):
    """impl -> (ok, why not)."""
    out = {"gnnc": (True, "")}
    if pr.get("venv_error"):
        out["graphbolt"] = out["pyg"] = (False, pr["venv_error"])
        return out
    if pr.get("torch_error"):
        out["graphbolt"] = out["pyg"] = (False, "torch: " + pr["torch_error"])
        return out
    out["graphbolt"] = ((True, "") if pr.get("graphbolt") else
                        (False, "dgl.graphbolt: %s" % pr.get("graphbolt_error", "?")))
    out["pyg"] = ((True, "") if pr.get("pyg") and pr.get("pyg_backend") else
                  (False, "PyG: %s" % pr.get("pyg_error", "?")))
    return out


# --------------------------------------------------------------------------
# Graphs and seeds
# --------------------------------------------------------------------------


def ensure_graph(name, data_dir):
    """The folder of graph `name` as a CSC by destination (written once):
    csc_indptr.npy, csc_indices.npy (int64), perm.npy (a fixed random
    permutation of the vertices) and meta.json."""
    import numpy as np
    import graphs
    folder = pathlib.Path(data_dir) / name
    meta_path = folder / "meta.json"
    if meta_path.exists():
        return folder, json.loads(meta_path.read_text())
    t0 = time.time()
    if name.startswith("rmat-"):
        scale = int(name.split("-")[1])
        seed = graphs._seed(name)
        n, ei = graphs.rmat_edges(scale, seed=seed, **graphs.GRAPH500)
        meta = {"name": name, "kind": "rmat", "scale": scale,
                "edge_factor": graphs.EDGE_FACTOR, "params": graphs.GRAPH500,
                "seed": seed, "generator": "tools/benchmarks/graphs.py rmat_edges "
                "(the main harness' %s)" % name}
    elif name in ("cora", "citeseer"):
        d = graphs._planetoid(name)
        ei = np.asarray(d["edge_index"], dtype=np.int64)
        n = int(d["x"].shape[0])
        meta = {"name": name, "kind": "planetoid",
                "source": "runtime/data/%s.gnnd" % name}
    else:
        raise ValueError("unknown graph %r" % name)
    src, dst = ei[0], ei[1]
    del ei
    order = np.argsort(dst, kind="stable")
    indices = src[order]
    del order, src
    indeg = np.bincount(dst, minlength=n)
    del dst
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(indeg, out=indptr[1:])
    perm = np.random.default_rng(PERM_SEED).permutation(n).astype(np.int64)
    meta.update({"N": int(n), "E": int(indices.shape[0]),
                 "max_in_degree": int(indeg.max()) if n else 0,
                 "zero_in_degree": int((indeg == 0).sum()),
                 "perm_seed": PERM_SEED})
    folder.mkdir(parents=True, exist_ok=True)
    for key, value in (("csc_indptr", indptr), ("csc_indices", indices),
                       ("perm", perm)):
        tmp = folder / (".%s.tmp.npy" % key)
        np.save(tmp, value)
        os.replace(tmp, folder / ("%s.npy" % key))
    meta["generate_s"] = time.time() - t0
    tmp = folder / ".meta.json.tmp"
    tmp.write_text(json.dumps(meta, indent=1) + "\n")
    os.replace(tmp, meta_path)
    return folder, meta


def write_seeds(folder, meta, batches, path):
    """The seeds of a run: the permutation's first P vertices (P the largest
    multiple of the batch size not above N, so that no batch repeats a
    vertex), repeated to batches x BATCH entries."""
    import numpy as np
    perm = np.load(folder / "perm.npy")
    p = (meta["N"] // BATCH) * BATCH or meta["N"]
    seeds = np.resize(perm[:p], batches * BATCH).astype(np.int64)
    np.save(path, seeds)
    digest = hashlib.sha256(seeds.tobytes()).hexdigest()[:16]
    return {"count": int(seeds.size), "distinct": int(min(p, seeds.size)),
            "sha256_16": digest}


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------


def run_one(cmd, out_json, time_cap):
    """One benchmark process; its JSON with a "launch" record."""
    if out_json.exists():
        out_json.unlink()
    load0 = loadavg()
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=time_cap)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc = "time-cap"
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    wall = time.time() - t0
    data = benchbuild.read_result(out_json, out, err, rc)
    data["launch"] = {"exit": rc, "wall_s": wall, "loadavg_start": load0,
                      "loadavg_end": loadavg(),
                      "stderr_tail": (err or "").strip()[-1500:]}
    return data


def impl_command(impl, exe, args, folder, seeds_path, threads, fetch, reps, warmup,
                 out_json):
    common = ["--indptr", str(folder / "csc_indptr.npy"),
              "--indices", str(folder / "csc_indices.npy"),
              "--seeds", str(seeds_path), "--batch", str(BATCH),
              "--dim", str(DIM), "--reps", str(reps), "--warmup", str(warmup),
              "--fetch", ",".join(str(f) for f in fetch),
              "--out", str(out_json)]
    for f in FANOUTS:
        common += ["--fanouts", f]
    tl = ",".join(str(t) for t in threads)
    if impl == "gnnc":
        return [str(exe), "--workers", tl] + common
    return [str(venv_python(args.venv)), str(HERE / "anchors.py"), "--impl", impl,
            "--threads", tl] + common


def run_graph(name, folder, meta, batches, plan, exe, args, avail, fetch, reps, warmup,
              tag):
    """Every implementation on one graph; {impl: result}."""
    seeds_path = args.work / ("seeds-%s-%s.npy" % (name, tag))
    seeds = write_seeds(folder, meta, batches, seeds_path)
    res = {"graph": name, "batches_per_rep": batches, "seeds": seeds,
           "fetch": fetch, "impls": {}}
    for impl in IMPLS:
        ok, why = avail[impl]
        if not ok:
            res["impls"][impl] = {"ok": False, "unavailable": True, "error": why}
            continue
        out_json = args.work / ("%s-%s-%s.json" % (tag, name, impl))
        cmd = impl_command(impl, exe, args, folder, seeds_path, plan["threads"],
                           fetch, reps, warmup, out_json)
        log("%s %s (%s)" % (name, impl, tag))
        r = run_one(cmd, out_json, args.time_cap)
        if not r.get("ok"):
            log("  FAILED: %s" % str(r.get("error"))[:400])
        res["impls"][impl] = r
    return res


def run_graphs_grouped(specs, plan, exe, args, avail, fetch, reps, warmup, tag):
    """Every graph of `specs` ((name, folder, meta, batches)): gnnc once per
    graph, each anchor once for all graphs (the smoke run)."""
    out, gspecs = [], []
    for name, folder, meta, batches in specs:
        seeds_path = args.work / ("seeds-%s-%s.npy" % (name, tag))
        seeds = write_seeds(folder, meta, batches, seeds_path)
        out.append({"graph": name, "batches_per_rep": batches, "seeds": seeds,
                    "fetch": fetch, "impls": {}})
        gspecs.append({"name": name, "indptr": str(folder / "csc_indptr.npy"),
                       "indices": str(folder / "csc_indices.npy"),
                       "seeds": str(seeds_path)})
    for impl in IMPLS:
        ok, why = avail[impl]
        if not ok:
            for res in out:
                res["impls"][impl] = {"ok": False, "unavailable": True, "error": why}
            continue
        if impl == "gnnc":
            for res, (name, folder, meta, batches) in zip(out, specs):
                out_json = args.work / ("%s-%s-%s.json" % (tag, name, impl))
                cmd = impl_command(impl, exe, args, folder,
                                   args.work / ("seeds-%s-%s.npy" % (name, tag)),
                                   plan["threads"], fetch, reps, warmup, out_json)
                log("%s %s (%s)" % (name, impl, tag))
                res["impls"][impl] = run_one(cmd, out_json, args.time_cap)
            continue
        list_path = args.work / ("%s-graphs.json" % tag)
        list_path.write_text(json.dumps(gspecs))
        out_json = args.work / ("%s-all-%s.json" % (tag, impl))
        cmd = impl_command(impl, exe, args, specs[0][1], "-", plan["threads"], fetch,
                           reps, warmup, out_json)
        i = cmd.index("--indptr")
        cmd = cmd[:i] + cmd[i + 6:] + ["--graph-list", str(list_path)]
        log("%s %s (%s)" % (",".join(s[0] for s in specs), impl, tag))
        r = run_one(cmd, out_json, args.time_cap)
        for res in out:
            g = (r.get("graphs") or {}).get(res["graph"]) or {
                "ok": False, "error": r.get("error", "no result")}
            g["launch"] = r["launch"]
            res["impls"][impl] = g
    for res in out:
        for impl, r in res["impls"].items():
            if not r.get("ok") and not r.get("unavailable"):
                log("  %s %s FAILED: %s" % (res["graph"], impl, str(r.get("error"))[:400]))
    return out


def edge_check(results):
    """Mean sampled edges per batch of each anchor against gnnc's, per graph
    and fanout list (threads 1, sampling only, the first pass)."""
    rows = []
    for g in results:
        gn = g["impls"].get("gnnc", {})
        for f in FANOUTS:
            fl = [int(x) for x in f.split(",")]

            def mean_edges(r):
                for run in r.get("runs", []) if r.get("ok") else []:
                    if run["fanouts"] == fl and not run["fetch"] and \
                            run.get("workers", run.get("threads")) == 1:
                        be = run.get("batch_edges") or []
                        return sum(be) / len(be) if be else None
                return None
            base = mean_edges(gn)
            row = {"graph": g["graph"], "fanouts": fl, "gnnc": base}
            for impl in IMPLS[1:]:
                m = mean_edges(g["impls"].get(impl, {}))
                row[impl] = m
                row[impl + "_ratio"] = (m / base) if (m is not None and base) else None
            rows.append(row)
    return rows


def print_check(rows):
    log("equal-work check: mean sampled edges per batch (threads 1, sampling only)")
    for r in rows:
        parts = []
        for impl in IMPLS[1:]:
            if r.get(impl) is None:
                parts.append("%s –" % impl)
            else:
                ratio = r[impl + "_ratio"]
                parts.append("%s %.0f (%+.1f%%%s)" % (
                    impl, r[impl], 100 * (ratio - 1),
                    "" if abs(ratio - 1) <= 0.05 else ", outside 5%"))
        log("  %-8s %-9s gnnc %s; %s" % (
            r["graph"], ",".join(map(str, r["fanouts"])),
            "%.0f" % r["gnnc"] if r["gnnc"] is not None else "–", "; ".join(parts)))


def machine_info():
    try:
        import bench  # noqa: E402
        return bench.machine_info()
    except ImportError:
        return {"cpu": "", "cores": os.cpu_count(), "loadavg_start": loadavg()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the smoke run")
    ap.add_argument("--full", action="store_true", help="the full run (default)")
    ap.add_argument("--gnnc-build", default=str(ROOT / "build"),
                    help="gnnc's build tree to link gnnc_sample from (default build/)")
    ap.add_argument("--prefix", help="an installed gnnc package (with gnnc::sample) "
                    "instead of a build tree")
    ap.add_argument("--bench-exe", help="a gnnc-sample-bench already built "
                    "(skips the build)")
    ap.add_argument("--venv", default=str(ROOT / "build" / "bench-sampling-venv"),
                    help="the anchors' virtual environment (default "
                    "build/bench-sampling-venv)")
    ap.add_argument("--data-dir", default=str(ROOT / "build" / "bench-sampling-data"))
    ap.add_argument("--work", help="build and scratch folder (default "
                    "build/bench-sampling or build/bench-sampling-quick)")
    ap.add_argument("--out", help="output folder (default docs/ for the full run, "
                    "build/bench-sampling-quick/ for --quick)")
    ap.add_argument("--graphs", help="comma-separated graphs instead of the "
                    "plan's (e.g. cora,rmat-20); like --impls, writes to "
                    "build/bench-sampling-partial/ unless --out")
    ap.add_argument("--impls", default=",".join(IMPLS),
                    help="implementations to run (default gnnc,graphbolt,pyg)")
    ap.add_argument("--reps", type=int, help="timed repetitions (default 5, 3 quick)")
    ap.add_argument("--no-fetch", action="store_true",
                    help="sampling only (no end-to-end runs with features)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--arch-flags", default="-march=native")
    ap.add_argument("--time-cap", type=int, default=None,
                    help="seconds one benchmark process may take (default 1200, 120 quick)")
    ap.add_argument("--no-install", action="store_true",
                    help="do not create or update the anchors' environment")
    ap.add_argument("--report-only", action="store_true",
                    help="only rewrite the section and plot from the JSON")
    args, extra = ap.parse_known_args()
    if args.quick and args.full:
        ap.error("--quick and --full exclude each other")
    if extra:
        ap.error("--sampling does not take %s" % " ".join(extra))

    partial = bool(args.graphs) or set(args.impls.split(",")) != set(IMPLS)
    if args.out:
        out_dir = pathlib.Path(args.out).resolve()
    elif partial and not args.report_only:
        # A partial run never overwrites the doc.
        out_dir = ROOT / "build" / "bench-sampling-partial"
    elif args.quick:
        out_dir = ROOT / "build" / "bench-sampling-quick"
    else:
        out_dir = ROOT / "docs"
    doc = out_dir / "benchmarks.md"
    assets = out_dir / "benchmarks"
    import report  # noqa: E402  (matplotlib is imported lazily there)
    json_path = assets / report.SAMPLING_JSON
    if args.report_only:
        report.update_sampling(json.loads(json_path.read_text()), doc, assets)
        log("wrote %s" % doc)
        return 0

    t0 = time.time()
    # DGL picks its backend from this (else it writes ~/.dgl/config.json).
    os.environ["DGLBACKEND"] = "pytorch"
    args.venv = pathlib.Path(args.venv).resolve()
    args.work = pathlib.Path(args.work or (ROOT / "build" / (
        "bench-sampling-quick" if args.quick else "bench-sampling"))).resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    plan = dict(QUICK if args.quick else FULL)
    if args.graphs:
        gl = args.graphs.split(",")
        default_batches = 4 if args.quick else 32
        plan["graphs"] = {g: plan["graphs"].get(g, 64 if g == "cora" else default_batches)
                          for g in gl}
    reps = args.reps or plan["reps"]
    args.time_cap = args.time_cap or (120 if args.quick else 1200)
    wanted = set(args.impls.split(","))

    exe = pathlib.Path(args.bench_exe).resolve() if args.bench_exe else build(args)
    install_state = None
    if not args.quick and not args.no_install:
        install_state = install(args)
    elif (args.venv / "install.json").exists():
        install_state = json.loads((args.venv / "install.json").read_text())
    pr = probe(args)
    avail = availability(pr)
    for impl in IMPLS:
        if impl not in wanted:
            avail[impl] = (False, "not requested (--impls)")
        if not avail[impl][0]:
            log("%s not run: %s" % (impl, avail[impl][1][:300]))

    machine = machine_info()
    graphs_meta = {}
    for name in list(plan["check_graphs"]) + list(plan["graphs"]):
        if name not in graphs_meta:
            log("graph %s" % name)
            graphs_meta[name] = ensure_graph(name, args.data_dir)

    # The equal-work check: the first pass of every graph of the run (1
    # thread, sampling only), and of the check graphs not in the run (one
    # pass, sampling only), first.
    check = []
    for name in plan["check_graphs"]:
        if name in plan["graphs"]:
            continue
        folder, meta = graphs_meta[name]
        check.append(run_graph(name, folder, meta, plan["check_batches"],
                               dict(plan, threads=[1]), exe, args, avail, [0], 1, 0,
                               "check"))
    if check:
        print_check(edge_check(check))

    fetch = [0] if args.no_fetch else [0, 1]
    results = []
    if args.quick:
        specs = [(name, graphs_meta[name][0], graphs_meta[name][1], batches)
                 for name, batches in plan["graphs"].items()]
        results = run_graphs_grouped(specs, plan, exe, args, avail, fetch, reps,
                                     plan["warmup"], "run")
        print_check(edge_check(results))
    else:
        # One graph at a time, every implementation on it before the next
        # graph, so that each graph's implementations see similar load.
        for name, batches in plan["graphs"].items():
            folder, meta = graphs_meta[name]
            results.append(run_graph(name, folder, meta, batches, plan, exe, args,
                                     avail, fetch, reps, plan["warmup"], "run"))
            print_check(edge_check(results[-1:]))
    check_rows = edge_check(check + results)
    machine["loadavg_end"] = loadavg()
    data = {
        "schema": 1,
        "kind": "quick" if args.quick else ("partial" if args.graphs or
                                            wanted != set(IMPLS) else "full"),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"),
        "command": "tools/bench --sampling" + "".join(" " + a for a in sys.argv[1:]),
        "linked_against": ("package %s" % args.prefix) if args.prefix else
                          ("binary %s" % args.bench_exe) if args.bench_exe else
                          "build tree %s" % os.path.relpath(
                              pathlib.Path(args.gnnc_build).resolve(), ROOT),
        "arch_flags": args.arch_flags,
        "machine": machine,
        "probe": pr,
        "install": install_state and {k: v for k, v in install_state.items()
                                      if k != "steps"},
        "availability": {k: {"ok": v[0], "reason": v[1]} for k, v in avail.items()},
        "batch_size": BATCH, "dim": DIM, "fanouts": FANOUTS,
        "threads": plan["threads"], "reps": reps, "warmup": plan["warmup"],
        "graphs": {k: v[1] for k, v in graphs_meta.items()},
        "check": check_rows,
        "check_runs": check,
        "results": results,
        "wall_s": None,
    }
    data["wall_s"] = time.time() - t0
    assets.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(data, indent=1) + "\n")
    log("wrote %s" % json_path)
    report.update_sampling(data, doc, assets)
    for line in report.sampling_summary(data):
        log(line)
    log("wrote %s (%.0f s in all)" % (doc, data["wall_s"]))
    ok = all(r["impls"].get("gnnc", {}).get("ok") for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
