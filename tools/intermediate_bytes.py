#!/usr/bin/env python3
"""Bytes of intermediate tensors before and after fusion, per function.

For every dsl-examples/*.gnn, lowers the file with `gnnc --emit=mlir`
(unfused) and `gnnc --emit=mlir-fused`, and runs both through
`gnn-opt --gnn-report-intermediates` for each graph size. Prints one
Markdown table per graph size: for each function of each example, the bytes
of the tensors it computes (arguments excluded, views such as attach,
collect and reshape free), the bytes of per-edge tensors among them, and
the ratio before / after fusion. A bold row per example sums its functions
(each instance function runs once per call of the model).

Then the same for training, where the dense work is: the fused training
module (`--emit=mlir-grad`: each function, its saving forward and its
backward) against its kernel IR (`--emit=kernel-ir --training`), whose
host plan reads broadcasts and transposes in place and sums products
without storing them (the host fusions; the C++ printer's, which also
fuses gather-dots).

Sizes: a vertex tensor or a `?` vertex axis counts N rows, an edge tensor E
rows (see --gnn-report-intermediates); on a bipartite block both sides
count N. Only the standard library is used.

Usage:
  tools/intermediate_bytes.py [--build DIR] [--examples DIR]
                              [--graph NAME:N:E ...]
The default graphs are Cora (N=2708, E=10556) and a 1M-edge graph
(N=65536, E=1048576). Tools are looked up in DIR/bin, then build/bin of the
repository, then PATH.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_GRAPHS = ["Cora:2708:10556", "1M edges:65536:1048576"]
LINE = re.compile(
    r"^@(?P<func>\S+): (?P<total>\d+) bytes of intermediates "
    r"\(N=\d+, E=\d+\)(?P<rest>.*)$")


def find_tool(name, build):
    candidates = []
    if build:
        candidates.append(os.path.join(build, "bin", name))
    candidates.append(os.path.join(REPO, "build", "bin", name))
    for path in candidates:
        if os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if not found:
        sys.exit("intermediate_bytes: cannot find %s (use --build DIR)" % name)
    return found


def run(cmd, stdin=None):
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("intermediate_bytes: %s failed:\n%s" %
                 (" ".join(cmd), proc.stderr))
    return proc.stdout


def try_run(cmd):
    """Standard output, or None when the command fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else None


def report(gnn_opt, ir, n, e):
    """{function: (total bytes, edge bytes)} in the order printed."""
    out = run([gnn_opt,
               "--gnn-report-intermediates=vertices=%d edges=%d" % (n, e),
               "-o", os.devnull], stdin=ir)
    result = {}
    for line in out.splitlines():
        m = LINE.match(line.strip())
        if not m:
            continue
        edge = 0
        for part in m.group("rest").split(";"):
            words = part.split()
            if len(words) == 2 and words[0] == "edge":
                edge = int(words[1])
        result[m.group("func")] = (int(m.group("total")), edge)
    return result


def mib(x):
    return "%.2f" % (x / 2.0 ** 20)


def ratio(before, after):
    if after == 0:
        return "-" if before == 0 else "inf"
    return "%.2f" % (before / after)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", help="build directory holding bin/gnnc")
    parser.add_argument("--examples", default=os.path.join(REPO, "dsl-examples"))
    parser.add_argument("--graph", action="append", metavar="NAME:N:E",
                        help="graph size (repeatable)")
    args = parser.parse_args()
    gnnc = find_tool("gnnc", args.build)
    gnn_opt = find_tool("gnn-opt", args.build)
    graphs = []
    for spec in args.graph or DEFAULT_GRAPHS:
        name, n, e = spec.rsplit(":", 2)
        graphs.append((name, int(n), int(e)))

    files = sorted(glob.glob(os.path.join(args.examples, "*.gnn")))
    if not files:
        sys.exit("intermediate_bytes: no .gnn files in " + args.examples)
    lowered = []
    training = []
    for path in files:
        unfused = run([gnnc, path, "--emit=mlir"])
        fused = run([gnnc, path, "--emit=mlir-fused"])
        lowered.append((os.path.basename(path), unfused, fused))
        grad = try_run([gnnc, path, "--emit=mlir-grad"])
        planned = try_run([gnnc, path, "--emit=kernel-ir", "--training"])
        if grad is not None and planned is not None:
            training.append((os.path.basename(path), grad, planned))

    for name, n, e in graphs:
        print("### %s (N = %d, E = %d)" % (name, n, e))
        print()
        print("Bytes of intermediate tensors per function, in MiB "
              "(2^20 bytes); *edge* is the part held in per-edge tensors; "
              "*ratio* is before / after.")
        print()
        print("| example | function | before | edge before | after "
              "| edge after | ratio |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for example, unfused, fused in lowered:
            before = report(gnn_opt, unfused, n, e)
            after = report(gnn_opt, fused, n, e)
            if list(before) != list(after):
                sys.exit("intermediate_bytes: %s: functions differ before "
                         "and after fusion" % example)
            sums = [0, 0, 0, 0]
            for func in before:
                b, be = before[func]
                a, ae = after[func]
                for i, x in enumerate((b, be, a, ae)):
                    sums[i] += x
                print("| %s | `@%s` | %s | %s | %s | %s | %s |" %
                      (example, func, mib(b), mib(be), mib(a), mib(ae),
                       ratio(b, a)))
            print("| **%s** | **all functions** | **%s** | **%s** | **%s** "
                  "| **%s** | **%s** |" %
                  (example, mib(sums[0]), mib(sums[1]), mib(sums[2]),
                   mib(sums[3]), ratio(sums[0], sums[2])))
        print()

    for name, n, e in graphs:
        print("### Training, %s (N = %d, E = %d)" % (name, n, e))
        print()
        print("Bytes of intermediate tensors of the training functions, in "
              "MiB: *fused* is the fused training module, *host plan* its "
              "kernel IR after the host fusions; *ratio* is fused / host "
              "plan.")
        print()
        print("| example | function | fused | host plan | ratio |")
        print("|---|---|---:|---:|---:|")
        for example, grad, planned in training:
            before = report(gnn_opt, grad, n, e)
            after = report(gnn_opt, planned, n, e)
            sums = [0, 0]
            for func in before:
                if func not in after:
                    sys.exit("intermediate_bytes: %s: @%s is missing from "
                             "the kernel IR" % (example, func))
                b, a = before[func][0], after[func][0]
                sums[0] += b
                sums[1] += a
                if b != a:
                    print("| %s | `@%s` | %s | %s | %s |" %
                          (example, func, mib(b), mib(a), ratio(b, a)))
            print("| **%s** | **all functions** | **%s** | **%s** | **%s** |"
                  % (example, mib(sums[0]), mib(sums[1]),
                     ratio(sums[0], sums[1])))
        print()


if __name__ == "__main__":
    main()
