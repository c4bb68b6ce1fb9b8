#!/usr/bin/env python3
"""Runs one mode of gnnc-dist-mpi-faults on 4 MPI ranks and checks it.

Checks that every surviving rank printed the error its mode expects (the
exact message, with the rank and the timeout of GNNC_DIST_TIMEOUT), that
the job ended within --limit seconds (and, for the modes that wait for a
missing rank, not before the timeout), that mpirun succeeded (except when
a rank kills itself), and, for `killed`, that no /dev/shm/gnnc-<pid>-*
shared-memory segment of the job's processes is left behind.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import time


def fmt_seconds(value):
    """Formats seconds as gnnc_dist does ({fmt}'s shortest form: 1, 0.5)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def expected_messages(mode, timeout):
    """Per surviving rank, a regular expression its error must match."""
    def prefix(rank):
        return re.escape(f"gnnc dist (mpi, rank {rank} of 4): ")

    timed_out = re.escape(
        f"timed out after {fmt_seconds(timeout)} s waiting for rank 3 "
        "(missing or dead)")
    if mode == "size-mismatch":
        return {r: prefix(r) + re.escape(
            "all-reduce #1: count 12 here, but rank 0 passes 10" if r == 3
            else "all-reduce #1: count 10 here, but rank 3 passes 12")
            for r in range(4)}
    if mode == "wrong-collective":
        return {r: prefix(r) + re.escape(
            "all-gather #1: rank 0 called all-reduce #1" if r == 2
            else "all-reduce #1: rank 2 called all-gather #1")
            for r in range(4)}
    if mode == "missing":
        return {r: prefix(r) + re.escape("barrier #1: ") + timed_out
                for r in range(3)}
    if mode == "killed":
        return {r: prefix(r) + r"barrier #\d+: " + timed_out
                for r in range(3)}
    raise ValueError(mode)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--mode", required=True,
                        choices=["size-mismatch", "wrong-collective",
                                 "missing", "killed"])
    parser.add_argument("--limit", type=float, default=15,
                        help="seconds the whole job may take")
    args = parser.parse_args()

    timeout = float(os.environ.get("GNNC_DIST_TIMEOUT", "60"))
    command = [args.mpiexec, "-np", "4", "--oversubscribe"]
    if args.mode == "killed":
        # Without it mpirun ends the whole job when one rank dies.
        command.append("--enable-recovery")
    command += [args.program, args.mode]

    problems = []
    start = time.monotonic()
    try:
        job = subprocess.run(command, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             timeout=args.limit)
        output, returncode = job.stdout, job.returncode
    except subprocess.TimeoutExpired as e:
        output = e.stdout or ""
        if isinstance(output, bytes):
            output = output.decode(errors="replace")
        returncode = None
        problems.append(f"the job did not end within {args.limit} s")
    elapsed = time.monotonic() - start
    print(output, end="")
    print(f"--- {' '.join(command)}: {elapsed:.2f} s, exit status "
          f"{returncode}")

    pids = {}
    errors = {}
    for line in output.splitlines():
        m = re.match(r"rank (\d+) pid (\d+)$", line)
        if m:
            pids[int(m.group(1))] = int(m.group(2))
        m = re.match(r"rank (\d+): error: (.*)$", line)
        if m:
            errors[int(m.group(1))] = m.group(2)
        if re.match(r"rank \d+: unexpected: ", line):
            problems.append(f"unexpected outcome: {line}")

    for rank, pattern in expected_messages(args.mode, timeout).items():
        if rank not in errors:
            problems.append(f"rank {rank} printed no error")
        elif not re.fullmatch(pattern, errors[rank]):
            problems.append(f"rank {rank}: '{errors[rank]}' does not match "
                            f"'{pattern}'")
    if args.mode in ("missing", "killed") and elapsed < timeout:
        problems.append(f"ended after {elapsed:.2f} s, before the timeout "
                        f"of {timeout} s")
    if args.mode != "killed" and returncode != 0:
        problems.append(f"mpirun exited with status {returncode}")
    if len(pids) != 4:
        problems.append(f"{len(pids)} ranks printed their pid, expected 4")
    if args.mode == "killed":
        for rank, pid in sorted(pids.items()):
            left = glob.glob(f"/dev/shm/gnnc-{pid}-*")
            if left:
                problems.append(f"rank {rank} (pid {pid}) left shared "
                                f"memory behind: {', '.join(left)}")

    if problems:
        for p in problems:
            print(f"FAIL: {p}")
        return 1
    print(f"ok: {args.mode}: every surviving rank reported the fault; "
          f"{elapsed:.2f} s in all (timeout {fmt_seconds(timeout)} s, "
          f"limit {args.limit} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
