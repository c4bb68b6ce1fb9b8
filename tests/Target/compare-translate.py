#!/usr/bin/env python3
"""Prints every .gnn file given with gnnc and through gnn-translate.

    compare-translate.py GNNC GNN_TRANSLATE OUT FILE.gnn...

For each file, each printer (cpp, cuda) and each mode (inference,
--training), compiles FILE.gnn directly (`gnnc --emit=cpp|cuda`), writes its
kernel IR (`gnnc --emit=kernel-ir --mlir-print-debuginfo`) and prints that
with `gnn-translate --gnnk-to-cpp|--gnnk-to-cuda`, then compares the two
output folders file by file, byte for byte. Prints one line per difference
and a summary; exits 1 when anything differs or a command fails.
"""

import filecmp
import os
import subprocess
import sys


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result.returncode != 0:
        sys.stdout.write("command failed (%d): %s\n%s" % (
            result.returncode, " ".join(cmd), result.stderr.decode()))
    return result.returncode == 0


def main():
    gnnc, translate, out = sys.argv[1:4]
    sources = sys.argv[4:]
    failures = 0
    compared = 0
    for source in sources:
        stem = os.path.splitext(os.path.basename(source))[0]
        for target in ["cpp", "cuda"]:
            for training in [[], ["--training"]]:
                case = os.path.join(out, "%s.%s%s" % (
                    stem, target, ".training" if training else ""))
                direct = os.path.join(case, "gnnc")
                translated = os.path.join(case, "gnn-translate")
                kernel_ir = os.path.join(case, stem + ".mlir")
                os.makedirs(case, exist_ok=True)
                ok = run([gnnc, source, "--emit=" + target, "-o", direct] +
                         training)
                ok = ok and run([gnnc, source, "--emit=kernel-ir",
                                 "--mlir-print-debuginfo", "-o", kernel_ir] +
                                training)
                ok = ok and run([translate, "--gnnk-to-" + target, kernel_ir,
                                 "-o", translated] + training)
                if not ok:
                    failures += 1
                    continue
                names = sorted(os.listdir(direct))
                if names != sorted(os.listdir(translated)):
                    sys.stdout.write("%s: gnnc wrote %s, gnn-translate %s\n" % (
                        case, names, sorted(os.listdir(translated))))
                    failures += 1
                    continue
                for name in names:
                    compared += 1
                    if not filecmp.cmp(os.path.join(direct, name),
                                       os.path.join(translated, name),
                                       shallow=False):
                        sys.stdout.write("%s: %s differs\n" % (case, name))
                        failures += 1
    sys.stdout.write("%d sources, %d files compared, %d differences\n" % (
        len(sources), compared, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
