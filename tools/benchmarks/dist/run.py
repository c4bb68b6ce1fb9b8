"""gnnc_dist's gather throughput over MPI ranks.

Run through tools/bench:

    tools/bench --dist          the full run (about 3 to 5 minutes on 2
                                cores): writes docs/benchmarks/dist-results.json,
                                docs/benchmarks/dist_*.png and the section
                                "Distributed memory: gather throughput" of
                                docs/benchmarks.md
    tools/bench --dist --quick  a smoke run of a few seconds into
                                build/bench-dist-quick/
    tools/bench --dist --report-only
                                rewrite the section and plots from the JSON

or directly (/usr/bin/python3 tools/benchmarks/dist/run.py ...). Steps: build
gnnc_dist and gnnc_runtime in gnnc's build tree (default build/), or take an
installed gnnc package (--prefix); configure and build gnnc-dist-bench
(tools/benchmarks/dist/CMakeLists.txt) against it; run it under
`mpirun -np 1`, `-np 2` and `-np 4` (with --oversubscribe where the ranks
outnumber the cores); merge the JSON of the runs; write the plots and the
section (tools/benchmarks/report.py: dist_section, dist_plots).

Everything in the section comes from the JSON of the run. The section is
replaced in place in docs/benchmarks.md, so the other sections stay as the
main harness wrote them; report.write() renders the same section when it
rewrites the whole page.
"""
import argparse
import datetime
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

# The benchmark's options for each kind of run.
FULL = ["--table-mib", "128", "--widths", "64,128,256,512", "--batch", "4096",
        "--rep-mib", "8", "--reps", "21", "--warmup", "2", "--zipf", "1.0",
        "--stream-elements", str(1 << 23), "--stream-reps", "20",
        "--cache-fractions", "0.01,0.1", "--cache-width", "128",
        "--cache-steps", "30", "--cache-warmup", "20"]
QUICK = ["--table-mib", "8", "--widths", "64,512", "--batch", "512",
         "--rep-mib", "0.5", "--reps", "3", "--warmup", "1", "--zipf", "1.0",
         "--stream-elements", str(1 << 18), "--stream-reps", "3",
         "--cache-fractions", "0.1", "--cache-width", "128",
         "--cache-steps", "4", "--cache-warmup", "4"]


def log(msg):
    print("bench --dist: " + msg, flush=True)


sh = benchbuild.sh


def build(args):
    """Builds gnnc-dist-bench; returns its path."""
    return benchbuild.build_program(HERE, args, ["gnnc_dist", "gnnc_runtime"],
                                    "gnnc-dist-bench", log)


def mpi_env():
    env = dict(os.environ)
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


def launch(exe, np_, bench_args, out_json, time_cap):
    """One mpirun; returns the benchmark's JSON with a "launch" record."""
    cores = os.cpu_count() or 1
    cmd = ["mpirun", "-np", str(np_)]
    if np_ > cores:
        cmd.append("--oversubscribe")
    # No pinning: the operating system places the ranks (and other work on
    # the machine) on the cores.
    cmd += ["--bind-to", "none"]
    shown = " ".join(cmd + ["gnnc-dist-bench"])
    cmd += [str(exe)] + bench_args + ["--out", str(out_json)]
    if out_json.exists():
        out_json.unlink()
    load0 = open("/proc/loadavg").read().split()[:3]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=mpi_env(),
                           timeout=time_cap)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "time-cap", e.stdout or "", e.stderr or ""
        if isinstance(out, bytes):
            out, err = out.decode(errors="replace"), (err or b"").decode(errors="replace")
    wall = time.time() - t0
    data = benchbuild.read_result(out_json, out, err, rc)
    data["launch"] = {
        "np": np_, "command": shown,
        "oversubscribed": np_ > cores, "exit": rc, "wall_s": wall,
        "loadavg_start": load0,
        "loadavg_end": open("/proc/loadavg").read().split()[:3],
        "stderr_tail": err.strip()[-1500:],
    }
    return data


def machine_info():
    """The main harness' description of the machine (bench.machine_info),
    or a shorter one where its imports (NumPy) are missing."""
    try:
        import bench  # noqa: E402
        return bench.machine_info()
    except ImportError:
        pass
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_total_bytes": mem,
            "loadavg_start": open("/proc/loadavg").read().split()[:3]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the smoke run")
    ap.add_argument("--full", action="store_true", help="the full run (default)")
    ap.add_argument("--ranks", default="1,2,4",
                    help="world sizes to launch (default 1,2,4)")
    ap.add_argument("--gnnc-build", default=str(ROOT / "build"),
                    help="gnnc's build tree to link gnnc_dist from (default build/)")
    ap.add_argument("--prefix", help="an installed gnnc package (with gnnc::dist) "
                    "instead of a build tree")
    ap.add_argument("--work", help="build folder (default build/bench-dist or "
                    "build/bench-dist-quick)")
    ap.add_argument("--out", help="output folder (default docs/ for the full run, "
                    "build/bench-dist-quick/ for --quick)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--arch-flags", default="-march=native")
    ap.add_argument("--time-cap", type=int, default=None,
                    help="seconds one mpirun may take (default 240, 60 quick)")
    ap.add_argument("--report-only", action="store_true",
                    help="only rewrite the section and plots from the JSON")
    ap.add_argument("--no-install", action="store_true",
                    help="accepted for tools/bench; nothing is installed here")
    args, extra = ap.parse_known_args()
    if args.quick and args.full:
        ap.error("--quick and --full exclude each other")
    if extra:
        ap.error("--dist does not take %s" % " ".join(extra))

    if args.out:
        out_dir = pathlib.Path(args.out).resolve()
    elif args.quick:
        out_dir = ROOT / "build" / "bench-dist-quick"
    else:
        out_dir = ROOT / "docs"
    doc = out_dir / "benchmarks.md"
    assets = out_dir / "benchmarks"
    json_path = assets / "dist-results.json"
    import report  # noqa: E402  (matplotlib is imported lazily there)
    if args.report_only:
        report.update_dist(json.loads(json_path.read_text()), doc, assets)
        log("wrote %s" % doc)
        return 0

    t0 = time.time()
    args.work = pathlib.Path(args.work or (ROOT / "build" / (
        "bench-dist-quick" if args.quick else "bench-dist"))).resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    exe = build(args)
    machine = machine_info()
    bench_args = QUICK if args.quick else FULL
    time_cap = args.time_cap or (60 if args.quick else 240)
    runs = []
    for np_ in [int(x) for x in args.ranks.split(",")]:
        log("mpirun -np %d" % np_)
        r = launch(exe, np_, bench_args, args.work / ("np%d.json" % np_), time_cap)
        log("  %s in %.0f s%s" % ("ok" if r.get("ok") else "FAILED",
                                  r["launch"]["wall_s"],
                                  "" if r.get("ok") else ": " + str(r.get("error"))[:300]))
        runs.append(r)
    machine["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    data = {
        "schema": 1,
        "kind": "quick" if args.quick else "full",
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"),
        "command": "tools/bench --dist" + ("".join(" " + a for a in sys.argv[1:])),
        "bench_args": bench_args,
        "linked_against": ("package %s" % args.prefix) if args.prefix else
                          "build tree %s" % os.path.relpath(
                              pathlib.Path(args.gnnc_build).resolve(), ROOT),
        "arch_flags": args.arch_flags,
        "machine": machine,
        "runs": runs,
        "wall_s": None,
    }
    data["wall_s"] = time.time() - t0
    assets.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(data, indent=1) + "\n")
    log("wrote %s" % json_path)
    report.update_dist(data, doc, assets)
    log("wrote %s (%.0f s in all)" % (doc, data["wall_s"]))
    return 0 if all(r.get("ok") for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
