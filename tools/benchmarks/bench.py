"""gnnc benchmarks against PyG, DGL and the memory-bandwidth limit.

Run through tools/bench (which installs what is missing first):

    tools/bench                 the full run: writes docs/benchmarks.md,
                                docs/benchmarks/*.png and
                                docs/benchmarks/results.json
    tools/bench --quick         a smoke run (Cora and a small R-MAT, two
                                layers, few repetitions) into build/bench-quick/
    tools/bench --only REGEX    only the cases whose id matches REGEX
                                (ids: graph/layer/F<width>/mode/impl; a mode
                                ending in -busy runs beside a busy process
                                pinned to a core)
    tools/bench --report-only   rewrite the doc and plots from the JSON
    tools/bench --compile-only  time gnnc's compiles of growing programs
                                (tools/benchmarks/compile_scaling.py) into
                                the JSON, and rewrite the doc from it
    tools/bench --dist          gnnc_dist's gather throughput over MPI ranks
                                (tools/benchmarks/dist/run.py): its section
                                of docs/benchmarks.md and
                                docs/benchmarks/dist-results.json
    tools/bench --torch         gnnc's layers called from PyTorch (gnnc.torch)
                                beside gnnc native, PyG on Debian's PyTorch
                                and PyG on the current PyTorch (pyg2 and
                                pyg2-compile): its section of
                                docs/benchmarks.md and
                                docs/benchmarks/torch-results.json
    tools/bench --library       every layer of the library (gnn/ and the
                                examples' layers with a PyG counterpart,
                                tools/benchmarks/library.py) against PyG on
                                rmat-17 at F = 64, inference and forward +
                                backward: its section of docs/benchmarks.md,
                                docs/benchmarks/library.png and
                                docs/benchmarks/library-results.json
    tools/bench --sampling      mini-batch sampling throughput of gnnc_sample
                                against DGL GraphBolt and PyG
                                (tools/benchmarks/sampling/run.py): its
                                section of docs/benchmarks.md and
                                docs/benchmarks/sampling-results.json

The anchors of the full run: PyG 2.3 (pyg: edge_index; pyg-sparse: a
torch.sparse CSR adjacency) and DGL (dgl) on Debian's PyTorch 1.13, and PyG
on the current PyTorch from PyPI (build/bench-torch-venv,
requirements-torch.txt, installed unless --quick or --no-install) in four
configurations: pyg2 (edge_index), pyg2-edgeindex (a torch_geometric.EdgeIndex
sorted by destination), pyg2-csr (a torch.sparse CSR adjacency) and
pyg2-compile (pyg2's layer under torch.compile). Every target compares gnnc
with the fastest of them (make_plan says which cases each runs). Without
that environment (the smoke run on a fresh machine, CI) the pyg2 cases are
recorded as unavailable, with the reason.

Steps: build gnnc (gnnc, gnnc_ops, gnnc_runtime) and install it as a CMake
package; configure tools/benchmarks/ against it with one gnnc_add_model
per layer variant and build gnnc-bench and gnnc-stream; time gnnc's compile
of every dsl-examples/*.gnn and of generated programs of growing size (a
chain of N statements, APPNP with K steps); measure the STREAM triad; write
the graphs (build/bench-data, reused); run every case in a fresh process
under a memory and time cap; profile the gnnc case of each target with perf; write
the JSON, then the doc and plots (tools/benchmarks/report.py).

Everything in the doc comes from the JSON of the run.
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import graphs  # noqa: E402
import library  # noqa: E402

DEB_PY = "/usr/bin/python3"
# gnnc, and the anchors on Debian's PyTorch 1.13 (PyG 2.3, DGL).
IMPLS = ["gnnc", "pyg", "pyg-sparse", "dgl"]
# PyG on the current PyTorch from PyPI (build/bench-torch-venv,
# requirements-torch.txt), the anchors a user would pick today: eager with
# edge_index, with an EdgeIndex sorted by destination, with the adjacency as
# a torch.sparse CSR tensor, and eager's layer under torch.compile. Each is
# anchor.py's --impl (and whether --compile) under the environment's Python.
PYG2_IMPLS = ["pyg2", "pyg2-edgeindex", "pyg2-csr", "pyg2-compile"]
PYG2_ANCHOR = {"pyg2": ("pyg", False), "pyg2-edgeindex": ("pyg-edgeindex", False),
               "pyg2-csr": ("pyg-sparse", False), "pyg2-compile": ("pyg", True)}
# The main run's implementations and anchors.
MAIN_IMPLS = IMPLS + PYG2_IMPLS
ANCHORS = ["pyg", "pyg-sparse", "dgl"] + PYG2_IMPLS
# The current PyTorch's configuration on the R-MAT scales sweep, per layer
# (the layers' tables have all four): the fastest of the four for that case
# (GCN inference, GAT forward + backward) on rmat-17 in our runs; the doc
# says where rmat-17's row of the same run disagrees.
PYG2_SWEEP = {"gcn": "pyg2-csr", "gat8": "pyg2-edgeindex"}
# The cases "from PyTorch": gnnc's layers through gnnc.torch (python/),
# beside gnnc native, PyG on Debian's PyTorch and PyG on the current
# PyTorch, eager and under torch.compile.
TORCH_IMPLS = ["gnnc-torch"]
ALL_IMPLS = IMPLS + PYG2_IMPLS + TORCH_IMPLS
TORCH_REQUIREMENTS = HERE / "requirements-torch.txt"
# Rounds of the gnnc native and gnnc-from-PyTorch cases (tools/bench --torch).
TORCH_ROUNDS = 3

# Each benchmarked layer: the .gnn file, the entry point, its
# hyper-parameters at width F (input and output width F).
LAYERS = {
    "gcn": dict(title="GCN", source="dsl-examples/gcn.gnn", entry="GCNConv",
                defines=lambda F: {"in_dim": F, "out_dim": F}),
    "gat1": dict(title="GAT, 1 head", source="dsl-examples/gat.gnn",
                 entry="GATConv",
                 defines=lambda F: {"in_dim": F, "out_dim": F, "heads": 1}),
    "gat8": dict(title="GAT, 8 heads", source="dsl-examples/gat.gnn",
                 entry="GATConv",
                 defines=lambda F: {"in_dim": F, "out_dim": F // 8, "heads": 8}),
    "sage_mean": dict(title="GraphSAGE mean", source="dsl-examples/sage_mean.gnn",
                      entry="SAGEConv",
                      defines=lambda F: {"in_dim": F, "out_dim": F}),
    "sage_max": dict(title="GraphSAGE max (pool)",
                     source="dsl-examples/sage_max.gnn", entry="SAGEPoolConv",
                     defines=lambda F: {"in_dim": F, "out_dim": F, "pool_dim": F}),
    "gin": dict(title="GIN", source="dsl-examples/gin.gnn", entry="GINConv",
                defines=lambda F: {"in_dim": F, "out_dim": F, "mlp_dim": F}),
    "gcn_agg": dict(title="GCN aggregation", source="tools/benchmarks/aggregate.gnn",
                    entry="GCNAggregate", defines=lambda F: {"dim": F}),
    "gcn_model": dict(title="GCN model (2 layers, Cora)", source="dsl-examples/gcn.gnn",
                      entry="GCN",
                      defines=lambda F: {"in_dim": 1433, "hidden": 16, "classes": 7}),
    "gat_model": dict(title="GAT model (2 layers, Cora)", source="dsl-examples/gat.gnn",
                      entry="GAT",
                      defines=lambda F: {"in_dim": 1433, "hidden": 8, "heads": 8,
                                         "classes": 7}),
}
# The layer library (tools/bench --library, tools/benchmarks/library.py).
LAYERS.update({library.layer_key(k): dict(title=v["title"], source=v["source"],
                                          entry=v["entry"], defines=v["defines"])
               for k, v in library.LIBRARY.items()})
LAYER_ORDER = ["gcn", "gat1", "gat8", "sage_mean", "sage_max", "gin", "gcn_agg",
               "gcn_model", "gat_model"]
# Models trained for an epoch on Cora (mode epoch), not layers at width F.
EPOCH_MODELS = ("gcn_model", "gat_model")


def module_name(layer, width):
    return layer + "_cora" if layer in EPOCH_MODELS else "%s_f%d" % (layer, width)


def param_count(layer, F):
    return {"gcn": F * F + F, "gat1": F * F + 3 * F, "gat8": F * F + 3 * F,
            "sage_mean": 2 * F * F + F, "sage_max": 3 * F * F + 2 * F,
            "gin": 2 * F * F + 2 * F, "gcn_agg": 0}.get(layer, 0)


def min_bytes(layer, F, mode, N, E):
    """The minimum byte count of a case: the CSR (int64 row offsets and
    column indices, as gnnc's runtime stores them) read once, every input
    and parameter read once, every output written once. Forward + backward
    reads the graph in both directions (CSR and CSC), x, the cotangent and
    the parameters, and writes the output, the gradient of x and the
    gradients of the parameters. None where it is not defined (an epoch)."""
    if layer in EPOCH_MODELS or mode == "epoch":
        return None
    csr = 8 * (N + 1) + 8 * E
    feat = 4 * N * F
    par = 4 * param_count(layer, F)
    extra = 4 * E if layer == "gin" else 0  # GIN's edge weights
    if mode == "infer":
        return csr + feat + par + feat + extra
    return 2 * csr + 2 * feat + par + 2 * feat + par + extra


# --------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------


def make_plan(quick):
    """The cases of the main run. PyG on the current PyTorch (PYG2_IMPLS)
    runs in all four configurations on rmat-17's layers (the targets'
    graph), the Cora epoch and the aggregation's target case; eager (the
    three without torch.compile, whose compile of each case takes longer
    than the case) on Cora's layers; PYG2_SWEEP's alone on the R-MAT scales;
    not on Citeseer, the Erdos-Renyi graph and the widths. That keeps the
    full run within about 40 minutes."""
    cases = {}

    def add(group, graph, layer, width, mode, impls=MAIN_IMPLS):
        for impl in impls:
            cid = "%s/%s/F%d/%s/%s" % (graph, layer, width, mode, impl)
            if cid in cases:
                if group not in cases[cid]["groups"]:
                    cases[cid]["groups"].append(group)
                continue
            cases[cid] = dict(id=cid, groups=[group], graph=graph, layer=layer,
                              width=width, mode=mode, impl=impl)

    eager = [i for i in PYG2_IMPLS if i != "pyg2-compile"]
    if quick:
        # The current PyTorch's configurations where its environment exists
        # (the quick run does not install it; without it they are recorded
        # as unavailable).
        add("layers", "cora", "gcn", 16, "infer", ["gnnc", "pyg", "dgl"])
        add("layers", "cora", "gcn", 16, "train", ["gnnc", "pyg", "dgl", "pyg2"])
        add("layers", "rmat-12", "gat8", 16, "train", ["gnnc", "pyg"] + PYG2_IMPLS)
        add("bandwidth", "rmat-12", "gcn_agg", 16, "infer",
            ["gnnc", "pyg-sparse", "pyg2-edgeindex"])
        add("contention", "cora", "gcn", 16, "train", ["gnnc", "pyg"])
        add("contention", "cora", "gcn", 16, "train" + BUSY, ["gnnc", "pyg"])
        return list(cases.values())

    # Every layer, both modes, every implementation, at F = 64 (on Citeseer,
    # which is much like Cora, three of them).
    impls_of = {"cora": IMPLS + eager, "citeseer": IMPLS, "rmat-17": MAIN_IMPLS}
    for graph in ("cora", "citeseer", "rmat-17"):
        for layer in ("gcn", "gat1", "gat8", "sage_mean", "sage_max", "gin"):
            if graph == "citeseer" and layer not in ("gcn", "gat8", "sage_mean"):
                continue
            for mode in ("infer", "train"):
                add("layers", graph, layer, 64, mode, impls_of[graph])
    # The same scale on an Erdos-Renyi graph.
    for layer in ("gcn", "gat8"):
        for mode in ("infer", "train"):
            add("er", "er-17", layer, 64, mode, IMPLS)
    # Feature widths 16..256.
    for F in (16, 64, 256):
        for layer in ("gcn", "gat8"):
            add("widths", "rmat-15", layer, F, "infer", IMPLS)
        add("widths", "rmat-15", "gat8", F, "train", IMPLS)
    # Scales 14..20.
    for s in range(14, 21):
        add("scales", "rmat-%d" % s, "gcn", 64, "infer", IMPLS + [PYG2_SWEEP["gcn"]])
        add("scales", "rmat-%d" % s, "gat8", 64, "train", ["gnnc", "pyg", "dgl",
                                                           PYG2_SWEEP["gat8"]])
        add("bandwidth", "rmat-%d" % s, "gcn_agg", 64, "infer",
            MAIN_IMPLS if s == 20 else IMPLS)
    for F in (16, 256):
        add("bandwidth", "rmat-20", "gcn_agg", F, "infer", ["gnnc", "dgl"])
        add("bandwidth", "rmat-14", "gcn_agg", F, "infer", ["gnnc"])
    # The Cora training epoch, and the same beside a busy process.
    add("epoch", "cora", "gcn_model", 1433, "epoch")
    for model, impls in (("gcn_model", IMPLS), ("gat_model", ["gnnc", "pyg", "dgl"])):
        add("contention", "cora", model, 1433, "epoch", impls)
        add("contention", "cora", model, 1433, "epoch" + BUSY, impls)

    return list(cases.values())


def torch_plan():
    """tools/bench --torch: gnnc's layers from PyTorch (gnnc.torch) beside
    gnnc native, PyG on Debian's PyTorch 1.13 and PyG on the current
    PyTorch, eager and compiled."""
    cases = []
    for layer in ("gcn", "gat8", "sage_mean"):
        for mode in ("infer", "train"):
            for impl in ["gnnc", "gnnc-torch", "pyg", "pyg2", "pyg2-compile"]:
                cases.append(dict(id="rmat-17/%s/F64/%s/%s" % (layer, mode, impl),
                                  groups=["torch"], graph="rmat-17", layer=layer,
                                  width=64, mode=mode, impl=impl))
    return cases


def library_plan():
    """tools/bench --library: every library layer (tools/benchmarks/library.py)
    and the examples' layers with a PyG counterpart, on rmat-17 at F = 64,
    inference and forward + backward, gnnc against PyG on Debian's PyTorch
    1.13 and on the current PyTorch."""
    layers = ["gcn", "gat8", "sage_mean", "sage_max", "gin"]
    layers += [library.layer_key(k) for k in library.LIBRARY]
    cases = []
    for layer in layers:
        spec = library.entry_of(layer) or {}
        width = spec.get("width", 64)
        for mode in ("infer", "train"):
            for impl in ("gnnc", "pyg", "pyg2"):
                cases.append(dict(id="rmat-17/%s/F%d/%s/%s" % (layer, width, mode, impl),
                                  groups=["library"], graph="rmat-17", layer=layer,
                                  width=width, mode=mode, impl=impl))
    return cases


# Minutes of cases in the full run, after which the cases other than the
# targets' are skipped (the whole run, with the builds, compile times and
# profiles, stays within about 40 minutes).
BUDGET_MIN = 32.0

# A mode with this suffix runs the case of the plain mode while a busy
# process (busy_process) holds one of the cores.
BUSY = "-busy"


def driver_mode(mode):
    """The mode the benchmark program runs for a mode of the plan."""
    return mode[:-len(BUSY)] if mode.endswith(BUSY) else mode


def busy_cpus(threads):
    """The cores a case beside a busy process runs on: the first `threads`
    this process may use (so that on a machine with more cores than the
    case has threads, the busy core is one of them)."""
    return sorted(os.sched_getaffinity(0))[:threads]


def busy_process(cpus):
    """A process that keeps the last of `cpus` busy (a Python loop, pinned
    there), as another user's work would; None with fewer than 2 cores."""
    if len(cpus) < 2:
        return None
    cpu = cpus[-1]
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                         preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    time.sleep(0.3)
    return p


# The performance targets: which cases they read (see report.py, which has
# the same table for results without it). The contention target compares
# its case with the same case without the busy process.
TARGETS = {
    "gat": dict(case="rmat-17/gat8/F64/train", quick="rmat-12/gat8/F16/train"),
    "gcn": dict(case="rmat-17/gcn/F64/train", quick="cora/gcn/F16/train"),
    "bandwidth": dict(case="rmat-20/gcn_agg/F64/infer", quick="rmat-12/gcn_agg/F16/infer"),
    "epoch": dict(case="cora/gcn_model/F1433/epoch", quick=None),
    "contention": dict(case="cora/gat_model/F1433/epoch" + BUSY,
                       quick="cora/gcn/F16/train" + BUSY),
}
# The targets whose gnnc case is profiled.
PROFILED_TARGETS = ("gat", "gcn", "bandwidth", "epoch")


def target_ids(quick):
    """The cases of the targets (without the implementation), which the
    run's time budget never skips."""
    out = set()
    for t in TARGETS.values():
        base = t["quick" if quick else "case"]
        if base:
            out.add(base)
            if base.endswith(BUSY):
                out.add(base[:-len(BUSY)])
    return out


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def log(msg):
    print("bench: " + msg, flush=True)


def sh(cmd, **kw):
    kw.setdefault("check", True)
    return subprocess.run(cmd, **kw)


def capture(cmd, timeout=60):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return (r.stdout + r.stderr).strip() if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def meminfo(key):
    with open("/proc/meminfo") as f:
        m = re.search(r"^%s:\s+(\d+) kB" % key, f.read(), re.M)
    return int(m.group(1)) * 1024 if m else 0


def llc_bytes():
    best = 0
    base = pathlib.Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")):
        try:
            if (idx / "type").read_text().strip() == "Instruction":
                continue
            size = (idx / "size").read_text().strip()
            m = re.match(r"(\d+)([KMG]?)", size)
            n = int(m.group(1)) * {"": 1, "K": 1024, "M": 1 << 20, "G": 1 << 30}[m.group(2)]
            best = max(best, n)
        except (OSError, AttributeError):
            pass
    return best


def machine_info():
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    lscpu = capture(["lscpu"])
    flags = ""
    for line in lscpu.splitlines():
        if line.startswith("Flags:"):
            flags = line
    git = capture(["git", "-C", str(ROOT), "rev-parse", "HEAD"])
    dirty = capture(["git", "-C", str(ROOT), "status", "--porcelain"])
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "lscpu": {k.strip(): v.strip() for k, v in
                  (line.split(":", 1) for line in lscpu.splitlines() if ":" in line)
                  if k.strip() in ("Architecture", "CPU(s)", "Thread(s) per core",
                                   "Core(s) per socket", "Socket(s)", "Model name",
                                   "Hypervisor vendor", "L1d cache", "L2 cache",
                                   "L3 cache", "NUMA node(s)")},
        "avx512": " avx512f " in flags + " ",
        "mem_total_bytes": meminfo("MemTotal"),
        "mem_available_bytes": meminfo("MemAvailable"),
        "llc_bytes": llc_bytes(),
        "kernel": platform.release(),
        "os": capture(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
        "gcc": capture(["gcc", "--version"]).splitlines()[0] if capture(["gcc", "--version"]) else "",
        "cmake": (capture(["cmake", "--version"]).splitlines() or [""])[0],
        "openblas": capture(["dpkg-query", "-W", "-f=${Version}", "libopenblas0-pthread"]) or
                    capture(["dpkg-query", "-W", "-f=${Version}", "libopenblas0"]),
        "git_commit": git,
        "git_dirty_files": len(dirty.splitlines()) if dirty else 0,
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
    }


# --------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------


def build_gnnc(args):
    bdir = pathlib.Path(args.gnnc_build)
    if not (bdir / "CMakeCache.txt").exists():
        log("configuring gnnc in %s" % bdir)
        env = dict(os.environ, CC="gcc", CXX="g++")
        sh(["cmake", "-S", str(ROOT), "-B", str(bdir), "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release"], env=env, stdout=subprocess.DEVNULL)
    # What the package needs (gnnc, gnnc_ops, gnnc_runtime) and the other
    # installed tools, so that `cmake --install` finds everything; if some
    # other installed target is missing, everything is built.
    log("building gnnc, gnnc_ops, gnnc_runtime, gnn-opt and gnnc-interp in %s" % bdir)
    sh(["cmake", "--build", str(bdir), "-j%d" % args.jobs, "--target",
        "gnnc", "gnnc_ops", "gnnc_runtime", "gnn-opt", "gnnc-interp"])
    prefix = args.work / "gnnc-prefix"
    install = ["cmake", "--install", str(bdir), "--prefix", str(prefix)]
    if subprocess.run(install, stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        log("cmake --install failed; building all of %s" % bdir)
        sh(["cmake", "--build", str(bdir), "-j%d" % args.jobs])
        sh(install, stdout=subprocess.DEVNULL)
    return bdir / "bin" / "gnnc", prefix


def write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text() == text:
        return
    path.write_text(text)


def build_driver(args, prefix, variants):
    src = args.work / "driver-gen"
    lines = ["# Written by tools/benchmarks/bench.py; one gnnc_add_model per variant."]
    reg = ['// Written by tools/benchmarks/bench.py: the modules gnnc-bench can run.',
           '#include "gnnc/runtime/Ops.h"', ""]
    table = []
    for (layer, width) in sorted(variants):
        spec = LAYERS[layer]
        name = module_name(layer, width)
        target = "bench_" + name
        defs = " ".join("%s=%s" % kv for kv in spec["defines"](width).items())
        lines.append('gnnc_add_model(%s SOURCES "%s" BACKEND cpu TRAINING ENTRY %s '
                     'NAMESPACE %s DEFINES %s)' % (target, ROOT / spec["source"],
                                                   spec["entry"], target, defs))
        lines.append("list(APPEND GNNC_BENCH_MODELS %s)" % target)
        reg.append("namespace %s { extern const gnnc::rt::ModuleInfo gnnc_module; }"
                   % target)
        table.append('  {"%s", &%s::gnnc_module},' % (name, target))
    reg += ["", "struct RegisteredModule { const char *name; const gnnc::rt::ModuleInfo *module; };",
            "extern const RegisteredModule kBenchModules[] = {"] + table + [
        "  {nullptr, nullptr}};",
        "extern const int kNumBenchModules = %d;" % len(table), ""]
    write_if_changed(src / "variants.cmake", "\n".join(lines) + "\n")
    write_if_changed(src / "registry.cpp", "\n".join(reg))
    bdir = args.work / "driver"
    cfg = ["cmake", "-S", str(HERE), "-B", str(bdir), "-G", "Ninja",
           "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=%s" % prefix,
           "-DGNNC_BENCH_VARIANTS=%s" % (src / "variants.cmake"),
           "-DGNNC_BENCH_REGISTRY=%s" % (src / "registry.cpp"),
           "-DGNNC_BENCH_ARCH_FLAGS=%s" % args.arch_flags]
    env = dict(os.environ, CC="gcc", CXX="g++")
    log("configuring the benchmark programs in %s (%d gnnc variants)"
        % (bdir, len(variants)))
    sh(cfg, env=env, stdout=subprocess.DEVNULL)
    log("building gnnc-bench and gnnc-stream")
    t0 = time.time()
    sh(["cmake", "--build", str(bdir), "-j%d" % args.jobs])
    return bdir / "gnnc-bench", bdir / "gnnc-stream", time.time() - t0


# --------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------


def compile_times(gnnc, reps):
    """Wall time of gnnc --emit=cpp (and --training) on every example."""
    out = []
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="gnnc-bench-compile-"))
    try:
        for f in sorted((ROOT / "dsl-examples").glob("*.gnn")):
            for training in (False, True):
                cmd = [str(gnnc), str(f), "--emit=cpp", "-o", str(tmp)]
                if training:
                    cmd.append("--training")
                times, err = [], ""
                for _ in range(reps):
                    t0 = time.perf_counter()
                    r = subprocess.run(cmd, capture_output=True, text=True)
                    dt = time.perf_counter() - t0
                    if r.returncode != 0:
                        err = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0][:300]
                        break
                    times.append(dt)
                out.append({"example": f.name, "training": training,
                            "ok": not err, "error": err,
                            "best_s": min(times) if times else None,
                            "times_s": times})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


# Compile time against program size (tools/benchmarks/compile_scaling.py):
# the chain model with N statements and APPNP with K propagation steps.
SCALING_SIZES = {
    "chain": dict(full=(1000, 2000, 4000, 8000, 20000), quick=(1000, 2000)),
    "appnp": dict(full=(10, 30, 100, 300, 1000), quick=(10, 100)),
}


def run_measured(cmd, timeout):
    """Runs cmd; returns (exit status or None on timeout, wall s, peak RSS
    bytes, the first line of its standard error)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        dt = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        first = (err.read().decode(errors="replace").strip().splitlines() or [""])[0]
    timed_out = dt >= timeout and p.returncode < 0
    return (None if timed_out else p.returncode), dt, usage.ru_maxrss * 1024, first[:300]


def compile_scaling(gnnc, quick, reps, timeout):
    """Wall time of gnnc --emit=cpp (and --training) on programs of growing
    size; the median of `reps` runs."""
    import compile_scaling as cs  # noqa: E402
    cases = []
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="gnnc-bench-scaling-"))
    try:
        for program, sizes in SCALING_SIZES.items():
            for size in sizes["quick" if quick else "full"]:
                if program == "appnp":
                    src = ROOT / "dsl-examples" / "appnp.gnn"
                    extra = cs.appnp_args(size)
                else:
                    src = tmp / ("%s%d.gnn" % (program, size))
                    src.write_text(cs.source(program, size))
                    extra = []
                for training in (False, True):
                    out = tmp / "out"
                    cmd = [str(gnnc), str(src), "--emit=cpp", "-o", str(out)] + extra
                    if training:
                        cmd.append("--training")
                    times, peaks, err = [], [], ""
                    for _ in range(reps):
                        rc, dt, peak, first = run_measured(cmd, timeout)
                        if rc is None:
                            err = "timeout after %d s" % timeout
                            break
                        if rc != 0:
                            err = first or "exit %d" % rc
                            break
                        times.append(dt)
                        peaks.append(peak)
                    generated = sum(f.stat().st_size for f in out.glob("*")) \
                        if out.is_dir() else 0
                    shutil.rmtree(out, ignore_errors=True)
                    rec = {"program": program, "size": size, "training": training,
                           "ok": not err, "error": err, "times_s": times,
                           "median_s": statistics.median(times) if times and not err
                           else None,
                           "peak_rss_bytes": max(peaks) if peaks else None,
                           "source_bytes": src.stat().st_size,
                           "generated_bytes": generated}
                    log("  %s %d%s: %s" % (program, size, " --training" if training else "",
                                           "%.2f s" % rec["median_s"] if rec["ok"] else err))
                    cases.append(rec)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%d %H:%M UTC"),
            "gnnc_binary": os.path.relpath(gnnc, ROOT) if str(gnnc).startswith(str(ROOT))
                           else str(gnnc),
            "reps": reps, "timeout_s": timeout,
            "cpu": machine_info()["cpu"], "cores": os.cpu_count(),
            "loadavg_start": open("/proc/loadavg").read().split()[:3],
            "cases": cases}


def compile_only(args, json_path, doc, assets):
    """--compile-only: measures the compile times alone and puts them into
    the JSON of an earlier run (kept otherwise), then rewrites its doc."""
    import report  # noqa: E402
    if args.gnnc:
        gnnc = pathlib.Path(args.gnnc).resolve()
    else:
        bdir = pathlib.Path(args.gnnc_build)
        if not (bdir / "CMakeCache.txt").exists():
            env = dict(os.environ, CC="gcc", CXX="g++")
            sh(["cmake", "-S", str(ROOT), "-B", str(bdir), "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=Release"], env=env, stdout=subprocess.DEVNULL)
        log("building gnnc in %s" % bdir)
        sh(["cmake", "--build", str(bdir), "-j%d" % args.jobs, "--target", "gnnc"])
        gnnc = bdir / "bin" / "gnnc"
    log("timing gnnc --emit=cpp on programs of growing size")
    scaling = compile_scaling(gnnc, args.quick, 1 if args.quick else 3,
                              120 if args.quick else 600)
    if json_path.exists():
        data = json.loads(json_path.read_text())
        data["compile_scaling"] = scaling
        json_path.write_text(json.dumps(data, indent=1) + "\n")
        report.write(data, doc, assets)
        log("wrote %s and %s" % (json_path, doc))
    else:
        assets.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps({"schema": 1, "compile_scaling": scaling},
                                        indent=1) + "\n")
        log("wrote %s (no earlier run there: no doc)" % json_path)
    return 0


def run_stream(stream, quick, llc, threads):
    # Each array at least 8x the last-level cache (2^25 doubles = 256 MiB by
    # default); the smoke run uses 2x.
    n = 1 << 25
    if llc:
        n = max(n, 8 * llc // 8)
    if quick:
        n = max(1 << 20, 2 * llc // 8 if llc else 1 << 22)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false")
    r = subprocess.run([str(stream), "--elements", str(n), "--reps",
                        "5" if quick else "20"], capture_output=True, text=True,
                       env=env)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"ok": False, "error": r.stderr[-500:]}


def supervise(cmd, env, mem_cap, time_cap):
    """Runs cmd; kills it when its resident set passes mem_cap bytes or it
    runs past time_cap seconds. Returns (parsed JSON or None, status, extra)."""
    err = tempfile.TemporaryFile(mode="w+")
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env, text=True)
    out_chunks = []
    reader = threading.Thread(target=lambda: out_chunks.append(p.stdout.read()))
    reader.start()
    status = "ok"
    max_rss = 0
    while p.poll() is None:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                m = re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M)
            rss = int(m.group(1)) * 1024 if m else 0
        except OSError:
            rss = 0
        max_rss = max(max_rss, rss)
        if mem_cap and rss > mem_cap:
            status = "memory-cap"
            p.kill()
            break
        if time.time() - t0 > time_cap:
            status = "time-cap"
            p.kill()
            break
        time.sleep(0.05)
    p.wait()
    reader.join()
    wall = time.time() - t0
    err.seek(0)
    stderr = err.read()
    err.close()
    text = "".join(out_chunks).strip()
    data = None
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
                break
            except ValueError:
                pass
    if status == "ok" and p.returncode != 0 and data is None:
        status = "crashed"
        if p.returncode < 0:
            status = "killed (signal %d)" % -p.returncode
    extra = {"wall_s": wall, "sampled_max_rss_bytes": max_rss,
             "returncode": p.returncode}
    if status != "ok" or (data is not None and not data.get("ok")):
        extra["stderr_tail"] = "\n".join(
            [l for l in stderr.splitlines() if "Warning" not in l][-15:])[-1500:]
    return data, status, extra


def timing_args(args, mode):
    if args.quick:
        return dict(warmup=1, min_reps=2, max_reps=3, min_time=0.0, max_time=2.0)
    if mode == "epoch":
        return dict(warmup=5, min_reps=20, max_reps=200, min_time=2.0, max_time=20.0)
    return dict(warmup=1, min_reps=3, max_reps=30, min_time=1.0, max_time=10.0)


def case_command(case, ctx, args, graph_dir, meta):
    mode = driver_mode(case["mode"])
    t = timing_args(args, mode)
    common = ["--graph", str(graph_dir), "--mode", mode,
              "--warmup", str(t["warmup"]), "--min-reps", str(t["min_reps"]),
              "--max-reps", str(t["max_reps"]), "--min-time", str(t["min_time"]),
              "--max-time", str(t["max_time"])]
    if case["impl"] == "gnnc":
        return [str(ctx["driver"]), "--module", module_name(case["layer"], case["width"]),
                "--entry", LAYERS[case["layer"]]["entry"], "--nodes", str(meta["N"])] + common
    python, impl, extra = DEB_PY, case["impl"], []
    if impl in PYG2_ANCHOR:
        python, (impl, compiled) = str(torch_python(args)), PYG2_ANCHOR[impl]
        extra = ["--compile"] if compiled else []
    return [python, str(HERE / "anchor.py"), "--impl", impl, "--layer",
            case["layer"], "--width", str(case["width"]), "--nodes", str(meta["N"]),
            "--threads", str(args.threads)] + common + extra


def torch_python(args):
    return args.torch_venv / "bin" / "python"


def child_env(args):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(args.threads)
    env["OPENBLAS_NUM_THREADS"] = str(args.threads)
    env["PYTHONWARNINGS"] = "ignore"
    env["DGLBACKEND"] = "pytorch"
    pyd = str(args.pydeps)
    env["PYTHONPATH"] = pyd + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def case_env(env, case, args):
    """The environment of one case. gnnc's matmuls run between the OpenMP
    loops of the generated code: one OpenBLAS thread, as docs/training.md
    recommends, so that OpenBLAS' own thread pool does not compete with the
    OpenMP threads for the same cores (PyTorch runs its BLAS on its own
    intra-op pool of the same size)."""
    impl = case["impl"]
    if impl in PYG2_ANCHOR:
        # Its own PyG, not build/bench-pydeps' 2.3.
        env = dict(env)
        env.pop("PYTHONPATH", None)
        return env
    if impl == "gnnc-torch":
        return dict(env, OPENBLAS_NUM_THREADS="1",
                    PYTHONPATH=str(ROOT / "python") + ":" + env["PYTHONPATH"],
                    GNNC_PREFIX=str(args.prefix), GNNC_TORCH_CXXFLAGS=args.arch_flags,
                    GNNC_TORCH_CACHE=str(args.work / "torch-cache"))
    if impl != "gnnc":
        return env
    return dict(env, OPENBLAS_NUM_THREADS="1")


def anchors_available(probe):
    avail = {"gnnc": (True, "")}
    if probe.get("torch_error") or probe.get("pyg_error"):
        reason = probe.get("torch_error") or probe.get("pyg_error")
        avail["pyg"] = avail["pyg-sparse"] = (False, reason)
    else:
        avail["pyg"] = avail["pyg-sparse"] = (True, "")
    if probe.get("dgl_error") or probe.get("torch_error"):
        avail["dgl"] = (False, probe.get("dgl_error") or probe.get("torch_error"))
    else:
        avail["dgl"] = (True, "")
    return avail


def torch_probe(args, env):
    """What the environment of the current PyTorch holds (anchor.py --probe
    under its Python)."""
    py = torch_python(args)
    if not py.exists():
        return {"torch_error": "no environment at %s (tools/bench installs it "
                "unless --quick or --no-install)" % args.torch_venv}
    env = dict(env)
    env.pop("PYTHONPATH", None)
    r = subprocess.run([str(py), str(HERE / "anchor.py"), "--probe"],
                       capture_output=True, text=True, env=env)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"torch_error": "the probe failed: " + r.stderr[-500:]}


def torch_available(probe):
    """gnnc.torch runs on Debian's PyTorch (the probe of the other anchors),
    PyG's configurations on the current PyTorch in the PyPI environment:
    EdgeIndex needs PyG 2.5, torch.compile PyTorch 2."""
    out = {}
    deb = probe.get("torch_error")
    out["gnnc-torch"] = (False, deb) if deb else (True, "")
    cur = probe["torch_current"]
    why = cur.get("torch_error") or cur.get("pyg_error")
    for impl in PYG2_IMPLS:
        out[impl] = (False, why) if why else (True, "")
    if not why and cur.get("pyg_edge_index") is not True:
        out["pyg2-edgeindex"] = (False, str(cur.get("pyg_edge_index")
                                            or "the probe did not try EdgeIndex"))
    if not why and not cur.get("torch_compile"):
        out["pyg2-compile"] = (False, "torch %s has no torch.compile" % cur.get("torch"))
    return out


def graph_size_key(name, metas):
    m = metas[name]
    return (m["E"], m["N"])


def profile_case(case, ctx, args, graph_dir, meta, setup_s):
    """perf stat and perf record of one gnnc case (the timed part only)."""
    perf = shutil.which("perf")
    if not perf:
        return {"ok": False, "error": "perf is not installed"}
    cmd = case_command(case, ctx, args, graph_dir, meta)
    # Enough repetitions (at least 3 s) for the timed calls to dominate.
    timing = {"--warmup": "1", "--min-reps": "3", "--max-reps": "100000",
              "--min-time": "3", "--max-time": "8"}
    for flag, value in timing.items():
        cmd[cmd.index(flag) + 1] = value
    env = case_env(child_env(args), case, args)
    delay_ms = int(1000 * (setup_s or 0) + 200)
    out = {"ok": True, "command": " ".join(cmd), "delay_ms": delay_ms}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        events = "cycles,instructions,cache-references,cache-misses,branch-misses"
        r = subprocess.run([perf, "stat", "-x", ",", "-e", events, "-D", str(delay_ms),
                            "--"] + cmd, capture_output=True, text=True, env=env)
        stat = {}
        for line in r.stderr.splitlines():
            parts = line.split(",")
            if len(parts) >= 3 and parts[0].replace(".", "").isdigit():
                stat[parts[2]] = float(parts[0])
        out["stat"] = stat
        if stat.get("cycles") and stat.get("instructions"):
            out["ipc"] = stat["instructions"] / stat["cycles"]
        if stat.get("cache-references") and stat.get("cache-misses"):
            out["cache_miss_ratio"] = stat["cache-misses"] / stat["cache-references"]
        r = subprocess.run([perf, "record", "-q", "-F", "1999", "-D", str(delay_ms),
                            "-o", data, "--"] + cmd, capture_output=True, text=True,
                           env=env)
        if r.returncode != 0:
            out["ok"] = False
            out["error"] = r.stderr[-500:]
            return out
        rep = subprocess.run([perf, "report", "-i", data, "--stdio", "--no-children",
                              "--sort", "symbol", "--percent-limit", "1"],
                             capture_output=True, text=True)
        top = []
        for line in rep.stdout.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+\[([.k])\]\s+(.*)$", line)
            if m:
                # The symbol, without perf's trailing IPC columns.
                sym = re.split(r"\s{2,}", m.group(3).strip())[0]
                if m.group(2) == "k":
                    sym = "[kernel] " + sym
                top.append({"percent": float(m.group(1)), "symbol": sym[:200]})
        out["top"] = top[:12]
    return out


def run_cases(plan, ctx, args, metas, avail, keep_order=False):
    results = []
    failed = {}  # (impl, layer, width, mode) -> (graph, status) of a capped run
    env = child_env(args)
    t_start = time.time()
    order = plan if keep_order else sorted(
        plan, key=lambda c: (graph_size_key(c["graph"], metas),
                             ALL_IMPLS.index(c["impl"])))
    targets = target_ids(args.quick)
    for k, case in enumerate(order):
        meta = metas[case["graph"]]
        gdir = ctx["graph_dirs"][case["graph"]]
        rec = dict(case)
        rec["N"], rec["E"] = meta["N"], meta["E"]
        rec["min_bytes"] = min_bytes(case["layer"], case["width"],
                                     driver_mode(case["mode"]), meta["N"], meta["E"])
        key = (case["impl"], case["layer"], case["width"], case["mode"])
        ok_impl, why = avail[case["impl"]]
        base_id = case["id"].rsplit("/", 1)[0]
        if not ok_impl:
            rec.update(status="unavailable", error=why)
        elif key in failed and case["graph"].startswith("rmat-"):
            g0, st0 = failed[key]
            rec.update(status="skipped", error="not run: the same case on %s "
                       "ended with %s" % (g0, st0))
        elif (args.budget and time.time() - t_start > args.budget * 60
              and base_id not in targets):
            rec.update(status="skipped", error="not run: the run's time budget "
                       "(%g min) was spent" % args.budget)
        else:
            cmd = case_command(case, ctx, args, gdir, meta)
            busy = None
            if case["mode"].endswith(BUSY):
                cpus = busy_cpus(args.threads)
                cmd = ["taskset", "-c", ",".join(map(str, cpus))] + cmd
                busy = busy_process(cpus)
            try:
                data, status, extra = supervise(cmd, case_env(env, case, args),
                                                args.mem_cap, args.time_cap)
            finally:
                if busy:
                    busy.kill()
                    busy.wait()
            rec.update(extra)
            if case["mode"].endswith(BUSY):
                rec["busy_process"] = busy is not None
            if status == "memory-cap":
                rec.update(status="memory-cap", error="its resident set passed the "
                           "cap of %.1f GiB" % (args.mem_cap / 2 ** 30))
            elif status == "time-cap":
                rec.update(status="time-cap", error="it ran past the cap of %d s"
                           % args.time_cap)
            elif data is None:
                rec.update(status=status if status != "ok" else "no-output",
                           error="no result")
            elif not data.get("ok"):
                rec.update(status="error", error=data.get("error", "failed"))
                if data.get("traceback"):
                    rec["traceback"] = data["traceback"]
            else:
                rec.update(status="ok", result=data)
            if rec["status"] in ("memory-cap", "time-cap"):
                failed[key] = (case["graph"], rec["status"])
        res = rec.get("result", {})
        log("[%d/%d] %-38s %-10s %s" % (
            k + 1, len(order), case["id"], rec["status"],
            ("%.4g s" % res["median_s"]) if res.get("median_s") is not None
            else rec.get("error", "")[:70]))
        results.append(rec)
    return results


# --------------------------------------------------------------------------
# Installing the Python side
# --------------------------------------------------------------------------


def install(args):
    """The PyPI packages of tools/benchmarks/requirements.txt, into
    build/bench-pydeps (pip --target: nothing is installed into the system's
    Python; tools/bench has installed the Debian packages with
    tools/install-deps.sh bench). A package that does not install (DGL) is
    recorded, not fatal."""
    reqs = (HERE / "requirements.txt").read_text()
    pins = [l.split("#")[0].strip() for l in reqs.splitlines()
            if l.split("#")[0].strip()]
    pyd = args.pydeps
    state_path = pyd / "install.json"
    state = {}
    if state_path.exists():
        state = json.loads(state_path.read_text())
    if state.get("pins") == pins:
        return state
    pyd.mkdir(parents=True, exist_ok=True)
    state = {"pins": pins, "packages": {}}
    for pin in pins:
        log("pip install --target %s --no-deps %s" % (pyd, pin))
        r = subprocess.run([DEB_PY, "-m", "pip", "install", "--quiet",
                            "--disable-pip-version-check", "--no-deps",
                            "--upgrade", "--target", str(pyd), pin],
                           capture_output=True, text=True)
        state["packages"][pin] = {"ok": r.returncode == 0,
                                  "log": (r.stdout + r.stderr)[-1500:]}
        if r.returncode != 0:
            log("  failed (recorded): %s" % (r.stderr.strip().splitlines() or [""])[-1])
    state_path.write_text(json.dumps(state, indent=1) + "\n")
    return state


def install_torch_venv(args):
    """The current PyTorch and PyG (requirements-torch.txt) in their own
    environment, args.torch_venv; recorded, not fatal, when it fails."""
    reqs = TORCH_REQUIREMENTS.read_text()
    pins = [l.split("#")[0].strip() for l in reqs.splitlines()
            if l.split("#")[0].strip()]
    venv = args.torch_venv
    state_path = venv / "install.json"
    if state_path.exists():
        state = json.loads(state_path.read_text())
        if state.get("pins") == pins and state.get("ok"):
            return state
    state = {"pins": pins, "ok": False}
    py = torch_python(args)
    log("installing %s into %s (python3 -m venv, pip)" % (" ".join(pins), venv))
    steps = [] if py.exists() else [[DEB_PY, "-m", "venv", str(venv)]]
    steps.append([str(py), "-m", "pip", "install", "--quiet",
                  "--disable-pip-version-check"] + pins)
    for cmd in steps:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            state["log"] = (r.stdout + r.stderr)[-1500:]
            log("  failed (recorded): %s" % (r.stderr.strip().splitlines() or [""])[-1])
            return state
    state["ok"] = True
    venv.mkdir(parents=True, exist_ok=True)
    state_path.write_text(json.dumps(state, indent=1) + "\n")
    return state


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main():
    if "--dist" in sys.argv[1:]:
        # gnnc_dist's gather benchmarks have their own driver.
        rest = [a for a in sys.argv[1:] if a != "--dist"]
        os.execv(sys.executable, [sys.executable, str(HERE / "dist" / "run.py")] + rest)
    if "--sampling" in sys.argv[1:]:
        # Mini-batch sampling against GraphBolt and PyG has its own driver.
        rest = [a for a in sys.argv[1:] if a != "--sampling"]
        os.execv(sys.executable, [sys.executable, str(HERE / "sampling" / "run.py")]
                 + rest)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the smoke run")
    ap.add_argument("--full", action="store_true", help="the full run (default)")
    ap.add_argument("--only", help="only the cases whose id matches this regex")
    ap.add_argument("--out", help="output folder (default: docs/ for the full run, "
                    "build/bench-quick/ for --quick)")
    ap.add_argument("--gnnc-build", default=str(ROOT / "build"),
                    help="gnnc's build tree (built and installed from; default build/)")
    ap.add_argument("--work", help="the harness' build folder (default build/bench or "
                    "build/bench-quick)")
    ap.add_argument("--data-dir", default=str(ROOT / "build" / "bench-data"))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--mem-cap-gb", type=float, default=None,
                    help="kill a case whose resident set passes this (default: half "
                    "of the available memory, at most 12 GiB)")
    ap.add_argument("--time-cap", type=int, default=None,
                    help="kill a case that runs longer (s; default 240, 60 quick)")
    ap.add_argument("--budget", type=float, default=None,
                    help="minutes for the cases; later non-target cases are skipped "
                    "(default %g for the full run, none for --quick)" % BUDGET_MIN)
    ap.add_argument("--arch-flags", default="-march=native",
                    help="target flags for the generated code (default -march=native)")
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--torch-venv", default=str(ROOT / "build" / "bench-torch-venv"),
                    help="the environment of the current PyTorch and PyG "
                    "(requirements-torch.txt; installed unless --quick or "
                    "--no-install; default build/bench-torch-venv)")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--prepare-only", action="store_true",
                    help="build everything and write the graphs, then stop")
    ap.add_argument("--report-only", action="store_true",
                    help="only rewrite the doc and plots from the JSON")
    ap.add_argument("--compile-only", action="store_true",
                    help="only time gnnc's compiles against program size, into the "
                    "JSON of an earlier run, and rewrite its doc")
    ap.add_argument("--gnnc", help="with --compile-only: this gnnc binary instead of "
                    "building one")
    ap.add_argument("--dist", action="store_true",
                    help="gnnc_dist's gather throughput over MPI ranks instead "
                    "(tools/benchmarks/dist/run.py; with --quick, a smoke run; "
                    "see run.py --help)")
    ap.add_argument("--torch", action="store_true",
                    help="gnnc's layers from PyTorch (gnnc.torch) against gnnc "
                    "native and PyG, old and current, instead: its section of "
                    "docs/benchmarks.md and docs/benchmarks/torch-results.json")
    ap.add_argument("--library", action="store_true",
                    help="every layer of the library against PyG on rmat-17 at "
                    "F = 64 instead: its section of docs/benchmarks.md and "
                    "docs/benchmarks/library-results.json")
    ap.add_argument("--sampling", action="store_true",
                    help="mini-batch sampling throughput against DGL GraphBolt and "
                    "PyG instead (tools/benchmarks/sampling/run.py; with --quick, a "
                    "smoke run; see run.py --help)")
    args = ap.parse_args()
    if args.quick and args.full:
        ap.error("--quick and --full exclude each other")

    if args.library and (args.quick or args.torch):
        ap.error("--library has no quick mode and excludes --torch")
    if args.torch and args.quick:
        ap.error("--torch has no quick mode (tests/python and tools/test-python.sh "
                 "test gnnc.torch)")
    if args.out:
        out_dir = pathlib.Path(args.out).resolve()
    elif args.only and not args.report_only and not (args.torch or args.library):
        # A partial run never overwrites the doc.
        out_dir = ROOT / "build" / "bench-only"
    if args.out or (args.only and not args.report_only
                    and not (args.torch or args.library)):
        doc = out_dir / "benchmarks.md"
        assets = out_dir / "benchmarks"
    elif args.quick:
        out_dir = ROOT / "build" / "bench-quick"
        doc = out_dir / "benchmarks.md"
        assets = out_dir / "benchmarks"
    else:
        out_dir = ROOT / "docs"
        doc = out_dir / "benchmarks.md"
        assets = out_dir / "benchmarks"
    json_path = assets / "results.json"
    import report  # noqa: E402  (matplotlib is imported lazily there)
    if args.report_only and args.library:
        report.update_library(json.loads((assets / "library-results.json").read_text()),
                              doc, assets)
        log("wrote %s" % doc)
        return 0
    if args.report_only and args.torch:
        report.update_torch(json.loads((assets / "torch-results.json").read_text()),
                            doc, assets)
        log("wrote %s" % doc)
        return 0
    if args.report_only:
        report.write(json.loads(json_path.read_text()), doc, assets)
        log("wrote %s" % doc)
        return 0
    if args.compile_only:
        return compile_only(args, json_path, doc, assets)

    args.work = pathlib.Path(args.work or (ROOT / "build" / ("bench-quick" if args.quick
                                                             else "bench"))).resolve()
    args.pydeps = ROOT / "build" / "bench-pydeps"
    if args.mem_cap_gb is None:
        args.mem_cap = int(min(12 * 2 ** 30, 0.5 * meminfo("MemAvailable")))
    else:
        args.mem_cap = int(args.mem_cap_gb * 2 ** 30)
    if args.time_cap is None:
        args.time_cap = 60 if args.quick else 240
    if args.budget is None and not args.quick and not (args.torch or args.library):
        args.budget = BUDGET_MIN
    t0 = time.time()

    args.torch_venv = pathlib.Path(args.torch_venv).resolve()
    install_state = {} if args.no_install else install(args)
    if args.no_install and (args.pydeps / "install.json").exists():
        install_state = json.loads((args.pydeps / "install.json").read_text())

    plan = (torch_plan() if args.torch else
            library_plan() if args.library else make_plan(args.quick))
    if args.only:
        rx = re.compile(args.only)
        plan = [c for c in plan if rx.search(c["id"])]
    if (not args.no_install and not args.quick
            and any(c["impl"] in PYG2_ANCHOR for c in plan)):
        install_state["torch_venv"] = install_torch_venv(args)
    log("%d cases" % len(plan))

    gnnc, prefix = build_gnnc(args)
    args.prefix = prefix
    variants = {(c["layer"], c["width"]) for c in plan if c["impl"] == "gnnc"}
    if not variants:
        variants = {("gcn_agg", 16)}
    driver, stream, driver_build_s = build_driver(args, prefix, variants)

    metas, gdirs = {}, {}
    for name in sorted({c["graph"] for c in plan},
                       key=lambda n: (not n.startswith(("cora", "citeseer")), n)):
        log("graph %s" % name)
        gdirs[name], metas[name] = graphs.ensure(name, args.data_dir)
    if args.prepare_only:
        log("prepared: %s, %s and %d graphs in %s" % (driver, stream, len(metas),
                                                     args.data_dir))
        return 0

    machine = machine_info()
    log("machine: %s, %d cores, %.1f GiB, LLC %.0f MiB, load %s" % (
        machine["cpu"], machine["cores"], machine["mem_total_bytes"] / 2 ** 30,
        machine["llc_bytes"] / 2 ** 20, " ".join(machine["loadavg_start"])))

    env = child_env(args)
    r = subprocess.run([DEB_PY, str(HERE / "anchor.py"), "--probe"], capture_output=True,
                       text=True, env=env)
    try:
        probe = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        probe = {"torch_error": "the probe failed: " + r.stderr[-500:]}
    avail = anchors_available(probe)
    probe["torch_current"] = torch_probe(args, env)
    avail.update(torch_available(probe))
    for impl in ANCHORS + TORCH_IMPLS:
        if impl in avail and not avail[impl][0]:
            log("%s unavailable: %s" % (impl, avail[impl][1][:200]))

    if args.library:
        return run_library(args, plan, driver, gdirs, metas, machine, probe,
                           avail, install_state, assets, doc, t0)
    if args.torch:
        return run_torch(args, plan, driver, gdirs, metas, machine, probe, avail,
                         install_state, assets, doc, t0)

    log("timing gnnc --emit=cpp on every example")
    compile_res = compile_times(gnnc, 2 if args.quick else 5)
    log("timing gnnc --emit=cpp on programs of growing size")
    scaling_res = compile_scaling(gnnc, args.quick, 1 if args.quick else 3,
                                  120 if args.quick else 600)

    log("STREAM triad")
    stream_res = run_stream(stream, args.quick, machine["llc_bytes"], args.threads)
    log("  %.2f GB/s (best of %d)" % (stream_res.get("best_gbs", 0), stream_res.get("reps", 0)))

    ctx = {"driver": driver, "graph_dirs": gdirs}
    results = run_cases(plan, ctx, args, metas, avail)

    profiles = {}
    if not args.no_profile:
        for tname in PROFILED_TARGETS:
            base = TARGETS[tname]["quick" if args.quick else "case"]
            if not base:
                continue
            rec = next((r for r in results if r["id"] == base + "/gnnc"), None)
            if not rec or rec["status"] != "ok":
                continue
            log("profiling %s" % rec["id"])
            profiles[tname] = profile_case(rec, ctx, args, gdirs[rec["graph"]],
                                           metas[rec["graph"]],
                                           rec["result"].get("setup_s"))
            profiles[tname]["case"] = rec["id"]

    machine["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    data = {
        "schema": 1,
        "kind": "quick" if args.quick else ("partial" if args.only else "full"),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "tools/bench " + " ".join(sys.argv[1:]),
        "wall_s": None,
        "machine": machine,
        "threads": args.threads,
        "arch_flags": args.arch_flags,
        "gnnc_binary": os.path.relpath(gnnc, ROOT) if str(gnnc).startswith(str(ROOT))
                       else str(gnnc),
        "mem_cap_bytes": args.mem_cap,
        "time_cap_s": args.time_cap,
        "budget_min": args.budget,
        "driver_build_s": driver_build_s,
        "install": install_state,
        "probe": probe,
        "availability": {k: {"ok": v[0], "reason": v[1]} for k, v in avail.items()},
        "stream": stream_res,
        "compile": compile_res,
        "compile_scaling": scaling_res,
        "graphs": metas,
        "layers": {k: {"title": v["title"], "source": v["source"], "entry": v["entry"]}
                   for k, v in LAYERS.items()},
        "targets": TARGETS,
        "cases": results,
        "profiles": profiles,
    }
    data["wall_s"] = time.time() - t0
    assets.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(data, indent=1) + "\n")
    log("wrote %s" % json_path)
    report.write(data, doc, assets)
    log("wrote %s (%.0f s in all)" % (doc, data["wall_s"]))
    return 0


def section_data(args, machine, probe, avail, install_state, metas, results,
                 t0):
    """The JSON of a run that writes one section (--torch, --library)."""
    machine["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    return {
        "schema": 1,
        "kind": "partial" if args.only else "full",
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "tools/bench " + " ".join(sys.argv[1:]),
        "machine": machine,
        "threads": args.threads,
        "arch_flags": args.arch_flags,
        "install": install_state,
        "probe": probe,
        "availability": {k: {"ok": v[0], "reason": v[1]} for k, v in avail.items()},
        "graphs": metas,
        "layers": {k: {"title": v["title"], "source": v["source"], "entry": v["entry"],
                       "note": (library.entry_of(k) or {}).get("note")}
                   for k, v in LAYERS.items()},
        "cases": results,
        "wall_s": time.time() - t0,
    }


def write_section(data, path, update, doc, assets):
    """Writes the JSON of a section run to `path` and its section with
    `update` (a report.update_* function); the exit status."""
    assets.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    log("wrote %s" % path)
    update(data, doc, assets)
    log("wrote %s (%.0f s in all)" % (doc, data["wall_s"]))
    return 0


def run_torch(args, plan, driver, gdirs, metas, machine, probe, avail,
              install_state, assets, doc, t0):
    """The cases of tools/bench --torch, their JSON and their section. gnnc
    native and gnnc from PyTorch, whose ratio is the point, run in
    TORCH_ROUNDS rounds, the two of each layer and mode one after the other;
    each keeps the round of its median time (every round's median is in
    the result's round_medians_s). The anchors run once."""
    import report  # noqa: E402
    ctx = {"driver": driver, "graph_dirs": gdirs}
    pairs = [c for c in plan if c["impl"] in ("gnnc", "gnnc-torch")]
    others = [c for c in plan if c not in pairs]
    rounds = []
    for r in range(TORCH_ROUNDS):
        log("gnnc native and from PyTorch, round %d of %d" % (r + 1, TORCH_ROUNDS))
        rounds.append(run_cases(pairs, ctx, args, metas, avail, keep_order=True))
    results = []
    for recs in zip(*rounds):
        timed = sorted((rec for rec in recs if rec["status"] == "ok"),
                       key=lambda rec: rec["result"]["median_s"])
        if not timed:
            results.append(recs[0])
            continue
        rec = timed[(len(timed) - 1) // 2]
        rec["result"]["round_medians_s"] = [
            rec_["result"]["median_s"] if rec_["status"] == "ok" else None
            for rec_ in recs]
        results.append(rec)
    results += run_cases(others, ctx, args, metas, avail)
    data = section_data(args, machine, probe, avail, install_state, metas,
                        results, t0)
    return write_section(data, assets / "torch-results.json", report.update_torch, doc,
                         assets)


def run_library(args, plan, driver, gdirs, metas, machine, probe, avail,
                install_state, assets, doc, t0):
    """The cases of tools/bench --library, their JSON and their section."""
    import report  # noqa: E402
    ctx = {"driver": driver, "graph_dirs": gdirs}
    results = run_cases(plan, ctx, args, metas, avail, keep_order=True)
    data = section_data(args, machine, probe, avail, install_state, metas,
                        results, t0)
    return write_section(data, assets / "library-results.json", report.update_library, doc,
                         assets)


if __name__ == "__main__":
    sys.exit(main())
