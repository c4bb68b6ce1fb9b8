"""Data-parallel mini-batch training: epoch time, memory and communication
of gnnc-train --comm against PyG and DGL GraphBolt.

Run through tools/bench:

    tools/bench --disttrain          the full run (about 30 minutes on 2
                                     cores, the graph's generation included):
                                     docs/benchmarks/disttrain-results.json,
                                     docs/benchmarks/disttrain.png and the
                                     section "Data-parallel training" of
                                     docs/benchmarks.md
    tools/bench --disttrain --quick  a smoke run of a few seconds on a small
                                     graph into build/bench-disttrain-quick/
                                     (the anchors only when their environment
                                     exists; nothing is installed)
    tools/bench --disttrain --report-only
                                     rewrite the section and plot from the JSON

or directly (/usr/bin/python3 tools/benchmarks/disttrain/run.py ...).

Steps:

  1. Build gnnc-gen-sbm in gnnc's build tree (--gnnc-build, default
     build/), install that tree into build/bench-disttrain-install and build
     gnnc-train against it without CUDA (build/bench-disttrain-app), as a
     CPU user would (--quick: the build tree's own gnnc-train).
  2. The graph: gnnc-gen-sbm's planted-partition graph (full: 2,000,000
     vertices, average degree 20, about 40M directed edges, 64 features, 16
     classes; quick: 20,000 vertices), generated once into
     build/bench-disttrain-data/.
  3. gnnc: `mpirun -np R gnnc-train --comm mpi --model sage` for R = 1, 2
     and each memory type of the plan, with the global batch size split
     over the ranks and OMP_NUM_THREADS = threads / R, so every run uses the
     same cores; --warmup epochs, then --epochs timed ones (the epoch lines'
     seconds, split by stage; the slowest rank's). The peak resident memory
     of every rank, and the bytes per step and rank, from gnnc-train's own
     report.
  4. The projection of the bytes per step to 8 and 64 ranks is a
     simulation, not a measurement: the same program with --comm threads
     --ranks 8 / 64 (thread ranks in one process, the global batch split
     over them) for a few steps, which counts the rows each rank reads from
     other ranks' memory exactly as an MPI run would.
  5. The anchors (tools/benchmarks/disttrain/anchors.py, in
     build/bench-sampling-venv): PyG NeighborLoader + SAGEConv and DGL
     GraphBolt + SAGEConv, the same fanouts, global batch size, threads and
     epoch definition, one process each.
  6. Ratios against the fastest anchor: epoch time and peak memory (the
     sum over gnnc's ranks against the anchor's process).

Everything in the section comes from the JSON of the run.
"""

import argparse
import datetime
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
BENCH = HERE.parent
ROOT = BENCH.parents[1]
sys.path.insert(0, str(BENCH))

from fixedsize.run import loadavg, machine_info  # noqa: E402

HEADING = "## Data-parallel training"
JSON_NAME = "disttrain-results.json"
PLOT_NAME = "disttrain.png"
VENV_PY = ROOT / "build" / "bench-sampling-venv" / "bin" / "python"

FULL = {
    "nodes": 2000000, "avg_degree": 20, "features": 64, "classes": 16,
    "fanouts": "10,5", "batch_size": 1024, "threads": 2,
    "ranks": [1, 2], "memory": ["chunked", "distributed"],
    "warmup": 1, "epochs": 3, "eval_fanouts": "-1,-1",
    "simulate_ranks": [8, 64], "simulate_steps": 10,
    "anchors": ["pyg", "graphbolt"],
}
QUICK = {
    "nodes": 20000, "avg_degree": 20, "features": 64, "classes": 16,
    "fanouts": "10,5", "batch_size": 256, "threads": 2,
    "ranks": [1, 2], "memory": ["chunked"],
    "warmup": 0, "epochs": 1, "eval_fanouts": "-1,-1",
    "simulate_ranks": [8], "simulate_steps": 2,
    "anchors": ["pyg"],
}

EPOCH_RE = re.compile(
    r"^\s+epoch\s+(\d+)\s+steps\s+(\d+)\s+loss (\S+)\s+train (\S+)\s+val (\S+)"
    r"\s+test (\S+)\s+(\S+) seeds/s\s+(\S+) s \(sample (\S+), fetch (\S+), "
    r"compute (\S+), comm (\S+), optimizer (\S+), waiting (\S+); eval (\S+)\)",
    re.M)
COMM_RE = re.compile(
    r"^== communication per step and rank \(mean\): features (\d+) B \((\S+) "
    r"remote rows\), labels (\d+) B, embeddings (\d+) B, gradient all-reduce "
    r"(\d+) B payload \((\d+) B sent by a ring all-reduce\); (\d+) B in all",
    re.M)
PEAK_RE = re.compile(r"^== peak resident memory per rank: (.*) MiB \((\d+) "
                     r"MiB in all\)", re.M)
PSS_RE = re.compile(r"^== proportional set size per rank, largest after "
                    r"loading and after each epoch(?:'s training)?: (.*) MiB "
                    r"\((\d+) MiB", re.M)
DONE_RE = re.compile(r"^== done: (\d+) global steps.*val (\S+), test (\S+);",
                     re.M)


def log(msg):
    print("bench --disttrain: " + msg, flush=True)


def build_cpu_app(gb, args):
    """gnnc-train as a CPU user builds it: against gnnc installed from `gb`,
    with -DGNNC_TRAIN_CUDA=OFF. (The in-tree gnnc-train of a CUDA build
    links cuBLAS and NCCL, whose loading alone costs about 200 MiB of
    resident memory.)"""
    inst = ROOT / "build" / "bench-disttrain-install"
    app = ROOT / "build" / "bench-disttrain-app"
    log("installing %s into %s" % (gb, inst))
    subprocess.run(["cmake", "--build", str(gb), "-j%d" % args.jobs], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--install", str(gb), "--prefix", str(inst)],
                   check=True, stdout=subprocess.DEVNULL)
    log("building the CPU-only gnnc-train in %s" % app)
    subprocess.run(["cmake", "-S", str(ROOT / "tools" / "benchmarks" / "train"),
                    "-B", str(app), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    "-DCMAKE_PREFIX_PATH=%s" % inst, "-DGNNC_TRAIN_CUDA=OFF"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(app), "-j%d" % args.jobs, "--target",
                    "gnnc-train"], check=True, stdout=subprocess.DEVNULL)
    return app / "gnnc-train"


def build(args):
    gb = pathlib.Path(args.gnnc_build).resolve()
    cache = gb / "CMakeCache.txt"
    if not cache.exists() or "GNNC_BUILD_TRAIN_DEMO:BOOL=ON" not in cache.read_text():
        log("configuring %s with -DGNNC_BUILD_TRAIN_DEMO=ON" % gb)
        cfg = ["cmake", "-S", str(ROOT), "-B", str(gb), "-G", "Ninja",
               "-DGNNC_BUILD_TRAIN_DEMO=ON"]
        if not cache.exists():
            cfg.append("-DCMAKE_BUILD_TYPE=Release")
        subprocess.run(cfg, check=True, stdout=subprocess.DEVNULL)
    log("building gnnc-train and gnnc-gen-sbm in %s" % gb)
    subprocess.run(["cmake", "--build", str(gb), "-j%d" % args.jobs, "--target",
                    "gnnc-train", "gnnc-gen-sbm"], check=True,
                   stdout=subprocess.DEVNULL)
    train = gb / "bin" / "gnnc-train"
    if not args.quick:
        train = build_cpu_app(gb, args)
    return train, gb / "bin" / "gnnc-gen-sbm"


def dataset(gen, plan, data_root):
    """The generated graph's folder (generated once)."""
    name = "sbm-n%d-d%d-f%d-c%d" % (plan["nodes"], plan["avg_degree"],
                                    plan["features"], plan["classes"])
    out = data_root / name
    if (out / "y.npy").exists():
        return out, None
    data_root.mkdir(parents=True, exist_ok=True)
    log("generating %s" % out)
    t0 = time.time()
    p = subprocess.run([str(gen), "--out", str(out), "--nodes", str(plan["nodes"]),
                        "--avg-degree", str(plan["avg_degree"]),
                        "--features", str(plan["features"]),
                        "--classes", str(plan["classes"])],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("gnnc-gen-sbm failed:\n" + p.stderr[-2000:])
    return out, {"seconds": time.time() - t0, "summary": p.stdout.strip()}


def parse_train(text):
    epochs = [dict(zip(["epoch", "steps", "loss", "train", "val", "test",
                        "seeds_per_s", "seconds", "sample", "fetch", "compute",
                        "comm", "optimizer", "waiting", "eval"],
                       [float(x) for x in m.groups()]))
              for m in EPOCH_RE.finditer(text)]
    r = {"epochs": epochs}
    m = COMM_RE.search(text)
    if m:
        g = [float(x) for x in m.groups()]
        r["bytes_per_step"] = {"features": g[0], "remote_rows": g[1],
                               "labels": g[2], "embeddings": g[3],
                               "gradient_payload": g[4], "gradient_ring": g[5],
                               "total": g[6]}
    m = PEAK_RE.search(text)
    if m:
        r["peak_mib_per_rank"] = [float(x) for x in m.group(1).split(",")]
        r["peak_mib_total"] = float(m.group(2))
    m = PSS_RE.search(text)
    if m:
        r["pss_mib_per_rank"] = [float(x) for x in m.group(1).split(",")]
        r["pss_mib_total"] = float(m.group(2))
    m = DONE_RE.search(text)
    if m:
        r["steps"], r["val"], r["test"] = int(m.group(1)), float(m.group(2)), \
            float(m.group(3))
    return r


def run_gnnc(train, data, plan, ranks, memory, comm="mpi", extra=()):
    threads = max(1, plan["threads"] // ranks) if comm == "mpi" else 1
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS=str(threads), OMP_WAIT_POLICY="PASSIVE",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    batch = plan["batch_size"] // ranks
    args = [str(train), "--comm", comm, "--model", "sage", "--data", str(data),
            "--batch-size", str(batch), "--fanouts", plan["fanouts"],
            "--eval-fanouts", plan["eval_fanouts"], "--eval-batch-size", "4096",
            "--memory", memory, "--workers", "1"] + list(extra)
    if comm == "mpi":
        cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to",
               "none", "-x", "OMP_NUM_THREADS", "-x", "OPENBLAS_NUM_THREADS",
               "-x", "OMP_WAIT_POLICY"] + args
    else:
        cmd = args + ["--ranks", str(ranks)]
    t0 = time.time()
    la0 = loadavg()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit("%s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode,
                                                       (p.stdout + p.stderr)[-3000:]))
    r = parse_train(p.stdout)
    r.update({"ranks": ranks, "memory": memory, "comm": comm,
              "batch_per_rank": batch, "omp_threads": threads,
              "wall_s": time.time() - t0, "loadavg": [la0, loadavg()],
              "command": " ".join(cmd)})
    return r


def timed(r, warmup):
    return [e for e in r["epochs"] if e["epoch"] > warmup]


def run_anchor(impl, data, plan, out_dir):
    out = out_dir / ("anchor-%s.json" % impl)
    cmd = [str(VENV_PY), str(HERE / "anchors.py"), "--impl", impl,
           "--data", str(data), "--fanouts", plan["fanouts"],
           "--batch-size", str(plan["batch_size"]), "--threads",
           str(plan["threads"]), "--epochs", str(plan["epochs"]), "--warmup",
           str(plan["warmup"]), "--no-normalize", "--eval", "--out", str(out)]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, OMP_WAIT_POLICY="PASSIVE"))
    if p.returncode != 0:
        return {"impl": impl, "error": (p.stderr or p.stdout)[-1500:],
                "command": " ".join(cmd)}
    r = json.loads(out.read_text())
    r.update({"impl": impl, "wall_s": time.time() - t0, "command": " ".join(cmd)})
    return r


def anchor_epoch_s(a):
    if "median_epoch_s" in a:
        return a["median_epoch_s"]
    return statistics.median(e["seconds"] for e in a["epochs"])


def anchor_peak(a):
    """The peak resident memory of training (before the evaluation)."""
    return a.get("peak_rss_mib")


# --------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------


def gnnc_rows(d):
    rows = []
    for r in d["gnnc"]:
        t = timed(r, d["plan"]["warmup"])
        if not t:
            continue
        med = statistics.median(e["seconds"] for e in t)
        split = {k: statistics.median(e[k] for e in t)
                 for k in ("sample", "fetch", "compute", "comm", "optimizer",
                           "waiting")}
        rows.append((r, med, split))
    return rows


def fastest_anchor(d):
    ok = [a for a in d["anchors"] if "error" not in a]
    return min(ok, key=anchor_epoch_s) if ok else None


def plot(d, assets):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = gnnc_rows(d)
    labels, stacks = [], []
    keys = ["sample", "fetch", "compute", "comm", "optimizer"]
    for r, med, split in rows:
        labels.append("gnnc\n%d rank%s, %s" % (r["ranks"], "s" if r["ranks"] > 1
                                              else "", r["memory"]))
        rest = max(0.0, med - sum(split[k] for k in keys))
        stacks.append([split[k] for k in keys] + [rest])
    for a in d["anchors"]:
        if "error" in a:
            continue
        med = anchor_epoch_s(a)
        sample = statistics.median(e.get("sample_s", 0) for e in a["epochs"])
        comp = statistics.median(e.get("compute_s", 0) for e in a["epochs"])
        labels.append({"pyg": "PyG", "graphbolt": "DGL GraphBolt"}[a["impl"]])
        stacks.append([sample, 0, comp, 0, 0, max(0.0, med - sample - comp)])
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6))
    ax = axes[0]
    colours = ["#4c72b0", "#55a868", "#dd8452", "#c44e52", "#8172b2", "#bbbbbb"]
    names = keys + ["other (loop, waiting)"]
    bottom = [0.0] * len(stacks)
    for j, name in enumerate(names):
        vals = [s[j] for s in stacks]
        ax.bar(range(len(stacks)), vals, bottom=bottom, color=colours[j], label=name)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(stacks)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("seconds per epoch (median)")
    ax.set_title("Epoch time by stage (%s vertices, 2 cores)"
                 % "{:,}".format(d["plan"]["nodes"]))
    ax.legend(fontsize=7)
    ax = axes[1]
    mem = [r["pss_mib_total"] for r, _, _ in rows] + [
        anchor_peak(a) or 0 for a in d["anchors"] if "error" not in a]
    ax.bar(range(len(mem)), mem, color="#4c72b0")
    ax.set_xticks(range(len(mem)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("MiB: gnnc, proportional set size summed over ranks;\n"
                  "anchors, peak resident set")
    ax.set_title("Peak memory")
    fig.tight_layout()
    assets.mkdir(parents=True, exist_ok=True)
    fig.savefig(assets / PLOT_NAME, dpi=110)
    plt.close(fig)
    return "benchmarks/" + PLOT_NAME


def fmt_b(b):
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return "%.2f %s" % (b / scale, unit)
    return "%.0f B" % b


def section(d, plot_path):
    p = d["plan"]
    m = d["machine"]
    out = [HEADING, ""]
    out.append(
        "`%s` (%s, %s; %s cores, commit %s). Two-layer GraphSAGE (hidden 16, "
        "dropout 0.5, Adam) on gnnc-gen-sbm's planted-partition graph: %s "
        "vertices, average degree %d, %d features, %d classes "
        "([runtime.md](runtime.md)); fanouts %s, a global batch of %d seeds, "
        "%d threads in all, %d untimed and %d timed epochs (an epoch: every "
        "training vertex once). Accuracies: after the last epoch, with full "
        "neighbourhoods, on the validation and test vertices. gnnc runs `mpirun -np R gnnc-train --comm mpi`"
        " with the batch split over the R ranks and %d / R OpenMP threads "
        "each; the anchors run in one process with %d torch threads. Every "
        "run has OMP_WAIT_POLICY=PASSIVE (idle OpenMP threads sleep rather "
        "than spin on the cores that sampling needs)."
        % (d["command"], d["date_utc"], m["cpu"], m["cores"],
           m["git_commit"][:10], "{:,}".format(p["nodes"]), p["avg_degree"],
           p["features"], p["classes"], p["fanouts"], p["batch_size"],
           p["threads"], p["warmup"], p["epochs"], p["threads"], p["threads"]))
    meta = (d.get("dataset_info") or {}).get("meta")
    if meta:
        out += ["", "The graph (its meta.json): %s vertices, %s directed edges, "
                "edge homophily %.3f, power-law exponent %g, in-degrees up to %s "
                "(%s isolated vertices), train / val / test %s / %s / %s "
                "vertices, generated in %.1f s."
                % tuple(["{:,}".format(meta["nodes"]), "{:,}".format(meta["edges"]),
                         float(meta["edge_homophily"]), meta["power_law_exponent"],
                         "{:,}".format(meta["max_in_degree"]),
                         "{:,}".format(meta["isolated_vertices"])]
                        + ["{:,}".format(meta[k]) for k in ("train", "val", "test")]
                        + [meta["seconds"]])]
    out += ["", "![epoch time and memory](%s)" % plot_path, ""]
    best = fastest_anchor(d)
    rows = gnnc_rows(d)
    out.append("| run | epoch (median) | sample | fetch | compute | comm | "
               "optimizer | memory | peak RSS per rank | val / test acc. |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for r, med, s in rows:
        out.append("| gnnc, %d rank%s, %s | %.2f s | %.2f | %.2f | %.2f | %.2f "
                   "| %.2f | %s MiB | %s MiB | %.3f / %.3f |"
                   % (r["ranks"], "s" if r["ranks"] > 1 else "", r["memory"], med,
                      s["sample"], s["fetch"], s["compute"], s["comm"],
                      s["optimizer"], "{:,.0f}".format(r["pss_mib_total"]),
                      ", ".join("%.0f" % x for x in r["peak_mib_per_rank"]),
                      r.get("val", 0), r.get("test", 0)))
    for a in d["anchors"]:
        name = {"pyg": "PyG", "graphbolt": "DGL GraphBolt"}[a["impl"]]
        if "error" in a:
            out.append("| %s | failed: %s | | | | | | | | |"
                       % (name, a["error"].strip().splitlines()[-1][:120]))
            continue
        med = anchor_epoch_s(a)
        sample = statistics.median(e.get("sample_s", 0) for e in a["epochs"])
        comp = statistics.median(e.get("compute_s", 0) for e in a["epochs"])
        acc = a.get("eval") or {}
        out.append("| %s | %.2f s | %.2f (with fetch) | | %.2f (with Adam) | | "
                   "| %s MiB | %s MiB | %s |"
                   % (name, med, sample, comp,
                      "{:,.0f}".format(anchor_peak(a) or 0),
                      "{:,.0f}".format(anchor_peak(a) or 0),
                      "%.3f / %.3f" % (acc.get("val_acc", 0), acc.get("test_acc", 0))
                      if acc else "-"))
    out.append("")
    if best and rows:
        b_s, b_m = anchor_epoch_s(best), anchor_peak(best) or 0
        fast = min(rows, key=lambda x: x[1])
        name = {"pyg": "PyG", "graphbolt": "DGL GraphBolt"}[best["impl"]]
        out.append(
            "Against the fastest anchor (%s, %.2f s per epoch, %s MiB peak): "
            % (name, b_s, "{:,.0f}".format(b_m))
            + "; ".join("gnnc %d rank%s %s: **%.2fx** faster, %.2fx its memory"
                        % (r["ranks"], "s" if r["ranks"] > 1 else "", r["memory"],
                           b_s / med, r["pss_mib_total"] / b_m if b_m else 0)
                        for r, med, _ in rows)
            + ". The target (5x faster at half the memory) is %s by the fastest "
            "gnnc run (%.2fx, %.2fx the memory)."
            % ("met" if b_s / fast[1] >= 5 and fast[0]["pss_mib_total"] <= b_m / 2
               else "not met", b_s / fast[1],
               fast[0]["pss_mib_total"] / b_m if b_m else 0))
        out.append("")
        out.append(
            "What limits gnnc's epoch is in the table: per rank, the sampling, "
            "the gather of the input rows (random rows of the feature table) "
            "and the model, whose largest part is the dropout of the input "
            "rows (one 64-bit hash per element; the AVX2 clone has no 64-bit "
            "multiply to vectorise it); the wait in the gradient all-reduce "
            "is the slower rank's lead. "
            "[training.md](training.md#on-a-generated-graph-of-2m-vertices) "
            "discusses it with the accuracies.")
        out.append(
            "Memory: gnnc's is the proportional set size of its ranks, summed "
            "(each rank's private pages plus its share of the shared-memory "
            "segments: the graph, and the features of the shared types), the "
            "largest seen after loading and after each epoch's training; the "
            "peak resident set of each rank, which counts every shared page it "
            "touched in full and includes the evaluation, is beside it. The anchors' is the peak resident set of their one "
            "process during training (the interpreter and torch included, "
            "%s MiB of it before the dataset loads)."
            % ", ".join("%s %.0f" % ({"pyg": "PyG", "graphbolt": "GraphBolt"}[a["impl"]],
                                     a.get("rss_before_load_mib", 0))
                        for a in d["anchors"] if "error" not in a))
        out.append("")
    # Bytes per step.
    out.append("Bytes per step and rank (gnnc's counters: rows read from other "
               "ranks' memory, at F x 4 bytes plus an 8-byte index each; labels "
               "16 bytes; the gradient all-reduce's payload and what a ring "
               "all-reduce sends, 2 (p - 1) / p of it). The shared types "
               "(continuous, chunked) read other ranks' rows through shared "
               "memory on one node, so they count none. The rows for 8 and 64 "
               "ranks are **simulated** (`--comm threads --ranks p`, the same "
               "global batch, %d steps), not measured on that many processes:"
               % p["simulate_steps"])
    out.append("")
    out.append("| ranks | how | batch per rank | remote feature rows | features "
               "| labels | gradients (ring) | total |")
    out.append("|---|---|---|---|---|---|---|---|")
    for r in [x for x in d["gnnc"] if x["memory"] == "distributed"] + d["simulated"]:
        b = r.get("bytes_per_step")
        if not b:
            continue
        out.append("| %d | %s | %d | %.1f | %s | %s | %s | %s |"
                   % (r["ranks"], "simulated" if r["comm"] == "threads" else
                      "measured (MPI)", r["batch_per_rank"], b["remote_rows"],
                      fmt_b(b["features"]), fmt_b(b["labels"]),
                      fmt_b(b["gradient_ring"]), fmt_b(b["total"])))
    out.append("")
    out.append("Raw numbers: [%s](benchmarks/%s)." % (JSON_NAME, JSON_NAME))
    out.append("")
    return "\n".join(out)


def update_doc(d, doc, assets):
    import report  # noqa: E402  (the splice of a section into benchmarks.md)
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    sec = section(d, plot(d, assets))
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(report.splice_section(text, HEADING, sec))


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the smoke run")
    ap.add_argument("--full", action="store_true", help="the full run (default)")
    ap.add_argument("--gnnc-build", default=str(ROOT / "build"))
    ap.add_argument("--out", help="output folder (default docs/ for the full run, "
                    "build/bench-disttrain-quick for --quick)")
    ap.add_argument("--data-root", default=str(ROOT / "build" /
                                                "bench-disttrain-data"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--no-install", action="store_true",
                    help="(accepted; nothing is installed)")
    args, extra = ap.parse_known_args([a for a in sys.argv[1:] if a != "--disttrain"])
    if args.quick and args.full:
        ap.error("--quick and --full exclude each other")
    if extra:
        ap.error("--disttrain does not take %s" % " ".join(extra))
    out_dir = pathlib.Path(args.out).resolve() if args.out else (
        ROOT / "build" / "bench-disttrain-quick" if args.quick else ROOT / "docs")
    doc = out_dir / "benchmarks.md"
    assets = out_dir / "benchmarks"
    json_path = assets / JSON_NAME
    if args.report_only:
        update_doc(json.loads(json_path.read_text()), doc, assets)
        log("wrote %s" % doc)
        return 0

    t0 = time.time()
    plan = dict(QUICK if args.quick else FULL)
    machine = machine_info()
    train, gen = build(args)
    data, generated = dataset(gen, plan, pathlib.Path(args.data_root))
    summary = (json.loads((data / "meta.json").read_text())
               if (data / "meta.json").exists() else None)
    epochs = ["--epochs", str(plan["warmup"] + plan["epochs"]),
              "--eval-every", "0"]
    gnnc = []
    for memory in plan["memory"]:
        for ranks in plan["ranks"]:
            r = run_gnnc(train, data, plan, ranks, memory, extra=epochs)
            t = timed(r, plan["warmup"])
            log("gnnc %d rank(s) %s: %.2f s per epoch, %s MiB (PSS, all ranks)"
                % (ranks, memory, statistics.median(e["seconds"] for e in t),
                   r.get("pss_mib_total")))
            gnnc.append(r)
    simulated = []
    for ranks in plan["simulate_ranks"]:
        r = run_gnnc(train, data, plan, ranks, "distributed", comm="threads",
                     extra=["--epochs", "1", "--no-eval", "--max-steps",
                            str(plan["simulate_steps"])])
        log("simulated %d ranks: %s per step and rank"
            % (ranks, fmt_b(r["bytes_per_step"]["total"])))
        simulated.append(r)
    anchors = []
    for impl in plan["anchors"]:
        if not VENV_PY.exists():
            log("skipping the anchors: %s is missing (tools/bench --sampling "
                "installs it)" % VENV_PY)
            break
        a = run_anchor(impl, data, plan, pathlib.Path(args.data_root))
        if "error" in a:
            log("%s failed: %s" % (impl, a["error"].strip().splitlines()[-1]))
        else:
            log("%s: %.2f s per epoch, peak %s MiB"
                % (impl, anchor_epoch_s(a), anchor_peak(a)))
        anchors.append(a)
    machine["loadavg_end"] = loadavg()
    d = {
        "schema": 1,
        "kind": "quick" if args.quick else "full",
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"),
        "command": "tools/bench --disttrain" + "".join(
            " " + a for a in sys.argv[1:] if a != "--disttrain"),
        "machine": machine,
        "plan": plan,
        "dataset": str(data),
        "dataset_info": {"generated": generated, "meta": summary,
                         "summary": (generated or {}).get("summary", "")},
        "gnnc": gnnc,
        "simulated": simulated,
        "anchors": anchors,
        "seconds": time.time() - t0,
    }
    assets.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(d, indent=1) + "\n")
    update_doc(d, doc, assets)
    log("wrote %s and %s (%.0f s)" % (json_path, doc, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
