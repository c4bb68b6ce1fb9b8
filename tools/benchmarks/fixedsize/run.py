"""Fixed-size (padded) mini-batches: step time and padding waste.

Run through tools/bench:

    tools/bench --fixed-size          the full run (a few minutes on 2 cores,
                                      without the build): writes
                                      docs/benchmarks/fixedsize-results.json,
                                      docs/benchmarks/fixedsize.png and the
                                      section "Fixed-size batches" of
                                      docs/benchmarks.md
    tools/bench --fixed-size --quick  a smoke run of a few seconds into
                                      build/bench-fixedsize-quick/
    tools/bench --fixed-size --report-only
                                      rewrite the section and plot from the JSON

or directly (/usr/bin/python3 tools/benchmarks/fixedsize/run.py ...).

Steps:

  1. Build the target gnnc-fixedsize-bench (tools/benchmarks/fixedsize,
     added by tools/benchmarks/train) in gnnc's build tree (--gnnc-build,
     default build/; configured with -DGNNC_BUILD_TRAIN_DEMO=ON if it is
     not), or take --bench-exe.
  2. Step time: for each model (SAGE, GAT) x batch size x fanouts, one
     process `gnnc-fixedsize-bench step`, which samples the batches once and
     times a training step on each, dynamic and padded to bound and fitted
     capacities (OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=--threads).
  3. Waste: for each dataset x batch size x fanouts, `gnnc-fixedsize-bench
     waste`: real over padded vertices and edges, per level and block.
  4. Write the JSON, the plot and the section.

Everything in the section comes from the JSON of the run.
"""

import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
BENCH = HERE.parent
ROOT = BENCH.parents[1]
sys.path.insert(0, str(BENCH))

HEADING = "## Fixed-size batches"
JSON_NAME = "fixedsize-results.json"
PLOT_NAME = "fixedsize.png"

FULL = {
    "models": ["sage", "gat"],
    "step_batch_sizes": [64, 256],
    "step_fanouts": ["10,5", "25,10"],
    "step_batches": 8, "reps": 5, "warmup": 1,
    "datasets": ["cora", "citeseer"],
    "waste_batch_sizes": [64, 256],
    "waste_fanouts": ["10,5", "25,10"],
    "waste_batches": 200,
}
QUICK = {
    "models": ["sage"],
    "step_batch_sizes": [64],
    "step_fanouts": ["10,5"],
    "step_batches": 2, "reps": 1, "warmup": 0,
    "datasets": ["cora"],
    "waste_batch_sizes": [64],
    "waste_fanouts": ["10,5"],
    "waste_batches": 20,
}
MODEL_NAMES = {"sage": "GraphSAGE2Block", "gat": "GAT2Block"}


def log(msg):
    print("bench --fixed-size: " + msg, flush=True)


def loadavg():
    return open("/proc/loadavg").read().split()[:3]


def capture(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return ""


def machine_info():
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    # --no-optional-locks: reading the state never rewrites the index.
    git = ["git", "--no-optional-locks", "-C", str(ROOT)]
    dirty = capture(git + ["status", "--porcelain"])
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "git_commit": capture(git + ["rev-parse", "HEAD"]),
        "git_dirty_files": len(dirty.splitlines()) if dirty else 0,
        "loadavg_start": loadavg(),
    }


def build(args):
    """Builds gnnc-fixedsize-bench in the gnnc build tree; returns its path."""
    gb = pathlib.Path(args.gnnc_build).resolve()
    cache = gb / "CMakeCache.txt"
    if not cache.exists() or "GNNC_BUILD_TRAIN_DEMO:BOOL=ON" not in cache.read_text():
        log("configuring %s with -DGNNC_BUILD_TRAIN_DEMO=ON" % gb)
        env = dict(os.environ, CC="gcc", CXX="g++")
        cfg = ["cmake", "-S", str(ROOT), "-B", str(gb), "-G", "Ninja",
               "-DGNNC_BUILD_TRAIN_DEMO=ON"]
        if not cache.exists():
            cfg.append("-DCMAKE_BUILD_TYPE=Release")
        subprocess.run(cfg, env=env, check=True, stdout=subprocess.DEVNULL)
    log("building gnnc-fixedsize-bench in %s" % gb)
    subprocess.run(["cmake", "--build", str(gb), "-j%d" % args.jobs, "--target",
                    "gnnc-fixedsize-bench"], check=True, stdout=subprocess.DEVNULL)
    # gnnc's build puts every executable in <build>/bin.
    for exe in (gb / "bin" / "gnnc-fixedsize-bench",
                gb / "tools" / "benchmarks" / "train" / "fixedsize" /
                "gnnc-fixedsize-bench"):
        if exe.exists():
            return exe
    raise SystemExit("gnnc-fixedsize-bench was not built in %s" % gb)


def run_bench(exe, argv, threads):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS=str(threads))
    t0 = time.time()
    la0 = loadavg()
    p = subprocess.run([str(exe)] + argv, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit("gnnc-fixedsize-bench %s failed (exit %d):\n%s"
                         % (" ".join(argv), p.returncode, p.stderr[-2000:]))
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    r = json.loads(lines[-1])
    r["wall_s"] = time.time() - t0
    r["loadavg"] = [la0, loadavg()]
    return r


# --------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------


def pct(real, padded):
    return 100.0 * real / padded if padded else 0.0


def fmt_ms(s):
    ms = 1000.0 * s
    return "%.2f" % ms if ms < 10 else "%.1f" % ms


def step_rows(d):
    rows = []
    for r in d["step"]:
        f = r["forms"]
        med = {k: statistics.median(f[k]["step_seconds"]) for k in f}
        rows.append((r, med))
    return rows


def waste_total(w):
    return (sum(w["real_vertices"]), sum(w["padded_vertices"]),
            sum(w["real_edges"]), sum(w["padded_edges"]))


def plot(d, assets):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = step_rows(d)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6))
    ax = axes[0]
    labels = ["%s\nB=%d, %s" % (r["model"], r["batch_size"],
                                ",".join(map(str, r["fanouts"]))) for r, _ in rows]
    x = list(range(len(rows)))
    wdt = 0.27
    for j, (form, colour) in enumerate([("dynamic", "#4c72b0"), ("bound", "#dd8452"),
                                        ("fit", "#55a868")]):
        ax.bar([i + (j - 1) * wdt for i in x], [1000 * m[form] for _, m in rows], wdt,
               label=form, color=colour)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("ms per training step (median)")
    ax.set_title("Step time on Cora (forward-train + backward + Adam, CPU)")
    ax.legend(fontsize=8)
    ax = axes[1]
    wl = ["%s\nB=%d, %s" % (w["dataset"], w["batch_size"],
                            ",".join(map(str, w["fanouts"]))) for w in d["waste"]]
    x = list(range(len(wl)))
    wdt = 0.2
    series = [("bound", 0, "vertices, bound", "#dd8452", None),
              ("bound", 2, "edges, bound", "#dd8452", "//"),
              ("fit", 0, "vertices, fit", "#55a868", None),
              ("fit", 2, "edges, fit", "#55a868", "//")]
    for j, (cap, idx, lab, colour, hatch) in enumerate(series):
        vals = []
        for w in d["waste"]:
            t = waste_total(w[cap])
            vals.append(pct(t[idx], t[idx + 1]))
        ax.bar([i + (j - 1.5) * wdt for i in x], vals, wdt, label=lab, color=colour,
               hatch=hatch, edgecolor="white" if hatch else None)
    ax.set_xticks(x)
    ax.set_xticklabels(wl, fontsize=7)
    ax.set_ylim(0, 100)
    ax.set_ylabel("real / padded (%)")
    ax.set_title("Padding utilisation (all levels and blocks)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    assets.mkdir(parents=True, exist_ok=True)
    fig.savefig(assets / PLOT_NAME, dpi=110)
    plt.close(fig)
    return "benchmarks/" + PLOT_NAME


def section(d, plot_path):
    m = d["machine"]
    out = []
    w = out.append
    w(HEADING + "\n")
    w("<!-- Written by tools/bench --fixed-size (tools/benchmarks/fixedsize/run.py) "
      "from benchmarks/%s; rerun `tools/bench --fixed-size`. -->\n" % JSON_NAME)
    commit = (m.get("git_commit") or "?")[:12]
    if m.get("git_dirty_files"):
        commit += " + %d changed files" % m["git_dirty_files"]
    w("Fixed-size mini-batches (`gnnc/sample/FixedSize.h`, "
      "[sampling.md](sampling.md)) pad every level and block of a sampled batch "
      "to static capacities, so that an ahead-of-time compiled model always sees "
      "the same shapes. This section measures what that costs on the CPU, where "
      "shapes cost nothing to change: the training step time of padded batches "
      "against the same batches unpadded, and how much of a padded batch is "
      "padding. Program: `tools/benchmarks/fixedsize/gnnc_fixedsize_bench.cpp` "
      "(the models `dsl-examples/sage2_block.gnn` and `gat2_block.gnn` compiled "
      "as `gnnc-train` compiles them, for Cora), built in the tree %s at commit "
      "%s, on %s (%s cores). Run %s (`%s`, %.1f minutes; load average %s at the "
      "start and %s at the end).\n"
      % (d["linked_against"], commit, m.get("cpu") or "?", m.get("cores"),
         d["date_utc"], d["command"], d["wall_s"] / 60.0,
         " ".join(m["loadavg_start"]), " ".join(m["loadavg_end"])))
    loads = [float(r["loadavg"][i][0]) for r in d["step"] + d["waste"]
             for i in (0, 1)] + [float(m["loadavg_start"][0]),
                                 float(m["loadavg_end"][0])]
    if m.get("cores") and max(loads) > m["cores"]:
        w("> **A shared machine.** The 1-minute load average reached %.2f on %d "
          "cores during the run (read at the start and end of every benchmark "
          "process): the step times include that interference (see their "
          "spread below). The three forms of each configuration take turns "
          "pass by pass, so their ratios are more robust than the absolute "
          "times. The waste figures are counts and do not depend on the load.\n"
          % (max(loads), m["cores"]))
    rows = step_rows(d)
    if rows:
        rb = [mm["bound"] / mm["dynamic"] for _, mm in rows]
        rf = [mm["fit"] / mm["dynamic"] for _, mm in rows]
        w("**In short**: a padded step takes %.2fx to %.2fx the time of the same "
          "batch unpadded with bound (worst-case) capacities and %.2fx to %.2fx with "
          "fitted ones (medians, %d model x batch size x fanout configurations)."
          % (min(rb), max(rb), min(rf), max(rf), len(rows)))
        tb = [waste_total(x["bound"]) for x in d["waste"]]
        tf = [waste_total(x["fit"]) for x in d["waste"]]
        out[-1] += " " + (
            "Real vertices are %.0f%% to %.0f%% of the padded ones with bound "
          "capacities and %.0f%% to %.0f%% with fitted ones (edges: %.0f%% to "
          "%.0f%% and %.0f%% to %.0f%%).\n"
          % (min(pct(t[0], t[1]) for t in tb), max(pct(t[0], t[1]) for t in tb),
             min(pct(t[0], t[1]) for t in tf), max(pct(t[0], t[1]) for t in tf),
             min(pct(t[2], t[3]) for t in tb), max(pct(t[2], t[3]) for t in tb),
             min(pct(t[2], t[3]) for t in tf), max(pct(t[2], t[3]) for t in tf)))
    w("### Method\n")
    w("- **Batches**: every vertex of the dataset is a seed; an `ItemSampler` "
      "shuffles them into batches of B (the last batch of an epoch is partial, "
      "as in training), a `NeighborSampler` draws two blocks per batch (fanouts "
      "outermost first, without replacement, seed 0). Padding follows sampling "
      "and the feature fetch, as the pipeline's `FixedSize` option does it "
      "(`Padder::pad`).\n"
      "- **Capacities**: *bound* = `boundCapacities` for batches of B seeds "
      "(never overflows; `Oversize::Error`); *fit* = `fitCapacities` (100 batches, "
      "99th percentile + 10%%, clamped to the bound) with `Oversize::Trim`. The "
      "fitted capacities are measured on other epochs than the batches measured "
      "(step time: fit on epochs 1.., timed batches from epoch 0; waste: fit on "
      "epochs 0.., measured batches from epoch 1000 on), so a trimmed batch is "
      "an overflow that training would see.\n"
      "- **Step time**: the first %d batches of epoch 0 on Cora, sampled and "
      "fetched once; each is kept as sampled (*dynamic*) and padded to each "
      "capacity, and its runtime graphs are built before timing. A step is "
      "`F_train` + the softmax cross-entropy over the real seeds "
      "(`MiniBatch::labelMask`) + `F_backward` + one Adam step, each form with "
      "its own parameters (same initialisation) and workspace buffers that "
      "already hold the largest batch. %d untimed pass(es), then %d timed ones "
      "over the batches; the three forms take turns pass by pass (rotating "
      "order). A pass's time / batches is one sample; the table gives the "
      "median. `OPENBLAS_NUM_THREADS=1`, `OMP_NUM_THREADS=%s`. GAT's graph has "
      "one self-loop per vertex (as in `gnnc-train`), SAGE's none.\n"
      "- **Waste**: %d batches per configuration; real vertices (edges) summed "
      "over the batches, over the padded ones (capacity x batches), per level "
      "(0 = input vertices, 2 = seeds; the seed level's capacity has one more "
      "vertex than the batch size, the padding vertex) and per block (0 = "
      "outermost). Graphs without self-loops.\n"
      % (d["plan"]["step_batches"], d["plan"]["warmup"], d["plan"]["reps"],
         d["threads"], d["plan"]["waste_batches"]))
    if rows:
        w("### Step time: fixed-size against dynamic batches (Cora)\n")
        w("| model | batch size | fanouts | dynamic ms | bound ms | bound / dynamic "
          "| fit ms | fit / dynamic | vertices per batch: dynamic / bound / fit "
          "| edges per batch: dynamic / bound / fit | fit: trimmed batches |")
        w("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r, mm in rows:
            k = r["batches"]
            fb, ff = r["forms"]["bound"]["padding"], r["forms"]["fit"]["padding"]
            w("| %s | %d | %s | %s | %s | %.2fx | %s | %.2fx | %s / %s / %s "
              "| %s / %s / %s | %d of %d |"
              % (MODEL_NAMES.get(r["model"], r["model"]), r["batch_size"],
                 ",".join(map(str, r["fanouts"])), fmt_ms(mm["dynamic"]),
                 fmt_ms(mm["bound"]), mm["bound"] / mm["dynamic"], fmt_ms(mm["fit"]),
                 mm["fit"] / mm["dynamic"],
                 "{:,}".format(round(r["dynamic_vertices"] / k)),
                 "{:,}".format(round(sum(fb["padded_vertices"]) / k)),
                 "{:,}".format(round(sum(ff["padded_vertices"]) / k)),
                 "{:,}".format(round(r["dynamic_edges"] / k)),
                 "{:,}".format(round(sum(fb["padded_edges"]) / k)),
                 "{:,}".format(round(sum(ff["padded_edges"]) / k)),
                 ff["trimmed_batches"], k))
        w("")
        w("Spread (fastest to slowest timed pass, ms per step):\n")
        w("| model | batch size | fanouts | dynamic | bound | fit |")
        w("|---|---:|---|---:|---:|---:|")
        for r, _ in rows:
            f = r["forms"]
            w("| %s | %d | %s | %s |" % (
                MODEL_NAMES.get(r["model"], r["model"]), r["batch_size"],
                ",".join(map(str, r["fanouts"])),
                " | ".join("%s to %s" % (fmt_ms(min(f[x]["step_seconds"])),
                                         fmt_ms(max(f[x]["step_seconds"])))
                           for x in ("dynamic", "bound", "fit"))))
        w("")
    w("### Padding waste: real / padded, in all\n")
    w("| dataset | batch size | fanouts | bound: vertices | bound: edges | fit: "
      "vertices | fit: edges | fit: trimmed batches (edges dropped) |")
    w("|---|---:|---|---:|---:|---:|---:|---:|")
    for x in d["waste"]:
        tb, tf = waste_total(x["bound"]), waste_total(x["fit"])
        w("| %s | %d | %s | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %d of %d (%s) |"
          % (x["dataset"], x["batch_size"], ",".join(map(str, x["fanouts"])),
             pct(tb[0], tb[1]), pct(tb[2], tb[3]), pct(tf[0], tf[1]),
             pct(tf[2], tf[3]), x["fit"]["trimmed_batches"], x["batches"],
             "{:,}".format(x["fit"]["trimmed_edges"])))
    w("")
    w("### Padding waste per level and block\n")
    w("Capacities, then real / padded for each level (vertices) and block "
      "(edges).\n")
    w("| dataset | batch size | fanouts | capacities | vertices; edges "
      "| level 0 | level 1 | level 2 | block 0 | block 1 |")
    w("|---|---:|---|---|---|---:|---:|---:|---:|---:|")
    for x in d["waste"]:
        for cap in ("bound", "fit"):
            c = x[cap]
            lv = " | ".join("%.1f%%" % pct(r, p) for r, p in
                            zip(c["real_vertices"], c["padded_vertices"]))
            be = " | ".join("%.1f%%" % pct(r, p) for r, p in
                            zip(c["real_edges"], c["padded_edges"]))
            caps = c["capacities"]
            w("| %s | %d | %s | %s | %s; %s | %s | %s |"
              % (x["dataset"], x["batch_size"], ",".join(map(str, x["fanouts"])),
                 cap, ", ".join("{:,}".format(v) for v in caps["vertices"]),
                 ", ".join("{:,}".format(v) for v in caps["edges"]), lv, be))
    w("")
    w("![fixed-size batches](%s)\n" % plot_path)
    return "\n".join(out) + "\n"


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
    ap.add_argument("--gnnc-build", default=str(ROOT / "build"),
                    help="gnnc build tree to build gnnc-fixedsize-bench in "
                    "(default build/)")
    ap.add_argument("--bench-exe", help="a gnnc-fixedsize-bench already built")
    ap.add_argument("--out", help="output folder (default docs/ for the full run, "
                    "build/bench-fixedsize-quick for --quick)")
    ap.add_argument("--threads", type=int, default=1,
                    help="OpenMP threads of the generated code (default 1)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the section and plot from the JSON")
    ap.add_argument("--no-install", action="store_true", help="(accepted; "
                    "nothing is installed)")
    args, extra = ap.parse_known_args([a for a in sys.argv[1:] if a != "--fixed-size"])
    if args.quick and args.full:
        ap.error("--quick and --full exclude each other")
    if extra:
        ap.error("--fixed-size does not take %s" % " ".join(extra))
    out_dir = pathlib.Path(args.out).resolve() if args.out else (
        ROOT / "build" / "bench-fixedsize-quick" if args.quick else ROOT / "docs")
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
    exe = pathlib.Path(args.bench_exe).resolve() if args.bench_exe else build(args)
    steps = []
    for model in plan["models"]:
        for bs in plan["step_batch_sizes"]:
            for fo in plan["step_fanouts"]:
                argv = ["step", "--model", model, "--batch-size", str(bs),
                        "--fanouts", fo, "--batches", str(plan["step_batches"]),
                        "--reps", str(plan["reps"]), "--warmup", str(plan["warmup"])]
                r = run_bench(exe, argv, args.threads)
                med = {k: statistics.median(v["step_seconds"])
                       for k, v in r["forms"].items()}
                log("step %s B=%d %s: dynamic %.2f ms, bound %.2f ms (%.2fx), "
                    "fit %.2f ms (%.2fx)"
                    % (model, bs, fo, 1000 * med["dynamic"], 1000 * med["bound"],
                       med["bound"] / med["dynamic"], 1000 * med["fit"],
                       med["fit"] / med["dynamic"]))
                steps.append(r)
    wastes = []
    for ds in plan["datasets"]:
        for bs in plan["waste_batch_sizes"]:
            for fo in plan["waste_fanouts"]:
                argv = ["waste", "--dataset", ds, "--batch-size", str(bs),
                        "--fanouts", fo, "--batches", str(plan["waste_batches"])]
                r = run_bench(exe, argv, args.threads)
                tb, tf = waste_total(r["bound"]), waste_total(r["fit"])
                log("waste %s B=%d %s: bound vertices %.1f%% edges %.1f%%; fit "
                    "vertices %.1f%% edges %.1f%%, %d trimmed"
                    % (ds, bs, fo, pct(tb[0], tb[1]), pct(tb[2], tb[3]),
                       pct(tf[0], tf[1]), pct(tf[2], tf[3]),
                       r["fit"]["trimmed_batches"]))
                wastes.append(r)
    machine["loadavg_end"] = loadavg()
    data = {
        "schema": 1,
        "kind": "quick" if args.quick else "full",
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"),
        "command": "tools/bench --fixed-size" + "".join(
            " " + a for a in sys.argv[1:] if a != "--fixed-size"),
        "linked_against": ("binary %s" % args.bench_exe) if args.bench_exe else
                          os.path.relpath(pathlib.Path(args.gnnc_build).resolve(), ROOT),
        "machine": machine,
        "threads": args.threads,
        "plan": plan,
        "step": steps,
        "waste": wastes,
        "wall_s": time.time() - t0,
    }
    assets.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(data, indent=1) + "\n")
    log("wrote %s" % json_path)
    update_doc(data, doc, assets)
    log("wrote %s (%.0f s in all)" % (doc, data["wall_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
