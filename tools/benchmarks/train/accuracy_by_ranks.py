#!/usr/bin/env python3
"""Test accuracy of data-parallel training on 1 rank against R ranks.

  accuracy_by_ranks.py --train build/bin/gnnc-train [--ranks 2]
      [--seeds 5] [--epochs 100] [--global-batch 256]
      [--datasets cora,citeseer] [--models sage,gat] [--comm threads]

For every dataset, model and seed: gnnc-train --comm with 1 rank and the
global batch, then with R ranks and global batch / R each (dropout on, as in
normal training), and the test accuracy at the epoch of best validation
accuracy. Prints one line per run and, per dataset and model, the mean and
(population) standard deviation over the seeds and the difference of the
means, which docs/training.md quotes.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

DONE = re.compile(r"test (\S+) at the best val (\S+) \(epoch (\d+)\)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", required=True)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--global-batch", type=int, default=256)
    ap.add_argument("--datasets", default="cora,citeseer")
    ap.add_argument("--models", default="sage,gat")
    ap.add_argument("--comm", default="threads", choices=["threads", "mpi"])
    args = ap.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    results = {}
    for ds in args.datasets.split(","):
        for model in args.models.split(","):
            for seed in range(args.seeds):
                for ranks in (1, args.ranks):
                    cmd = [args.train, "--comm", args.comm, "--model", model,
                           "--dataset", ds, "--batch-size",
                           str(args.global_batch // ranks), "--epochs",
                           str(args.epochs), "--seed", str(seed), "--quiet"]
                    if args.comm == "threads":
                        cmd += ["--ranks", str(ranks)]
                    else:
                        cmd = ["mpirun", "-np", str(ranks),
                               "--oversubscribe"] + cmd
                    p = subprocess.run(cmd, capture_output=True, text=True,
                                       env=env)
                    m = DONE.search(p.stdout)
                    if p.returncode != 0 or not m:
                        sys.stdout.write(p.stdout + p.stderr)
                        raise SystemExit("failed: " + " ".join(cmd))
                    test = 100 * float(m.group(1))
                    print(f"{ds} {model} seed {seed} ranks {ranks}: test "
                          f"{test:.1f} at the best val {float(m.group(2)):.3f}"
                          f" (epoch {m.group(3)})", flush=True)
                    results.setdefault((ds, model, ranks), []).append(test)
    print()
    print(f"| dataset | model | 1 rank | {args.ranks} ranks | difference |")
    print("|---|---|---|---|---|")
    for ds in args.datasets.split(","):
        for model in args.models.split(","):
            one = results[(ds, model, 1)]
            many = results[(ds, model, args.ranks)]
            print(f"| {ds} | {model} | {statistics.mean(one):.2f} +- "
                  f"{statistics.pstdev(one):.2f} | {statistics.mean(many):.2f}"
                  f" +- {statistics.pstdev(many):.2f} | "
                  f"{statistics.mean(many) - statistics.mean(one):+.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
