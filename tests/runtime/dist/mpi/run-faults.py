#!/usr/bin/env python3
"""Runs one mode of gnnc-dist-mpi-faults on 4 MPI ranks and checks it.

Checks that every surviving rank printed the error its mode expects (the
exact message, with the rank and the timeout of GNNC_DIST_TIMEOUT), that
the job ended within --limit seconds (and, for the modes that wait for a
missing rank, not before the timeout), that mpirun succeeded (except when
a rank kills itself or never finalises), and, for `killed`, that no
/dev/shm/gnnc-<pid>-* shared-memory segment of the job's processes is left
behind. For `stuck` (rank 3 alive but never finalising), every survivor
must give up its MPI_Finalize after the timeout + 5 s and say so. With a
rank killed, an mpirun that outlives its surviving ranks by 3 s is killed
(see run_job), with a note in the output. A job that overruns the limit
prints the state of each rank still alive.
"""

import argparse
import glob
import os
import re
import signal
import subprocess
import sys
import threading
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
    if mode in ("missing", "stuck"):
        return {r: prefix(r) + re.escape("barrier #1: ") + timed_out
                for r in range(3)}
    if mode == "killed":
        return {r: prefix(r) + r"barrier #\d+: " + timed_out
                for r in range(3)}
    raise ValueError(mode)


def alive(pid):
    """Whether process `pid` exists (and is not a zombie of ours)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def process_state(pid):
    """What /proc says of a live process: its state and where it sleeps."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().split(") ")[-1][:1]
        with open(f"/proc/{pid}/wchan") as f:
            wchan = f.read().strip() or "-"
        return f"state {state}, waiting in {wchan}"
    except OSError:
        return "gone"


def run_job(command, mode, limit, problems, notes):
    """Runs the job, returns (output, exit status or None).

    With a rank killed, Open MPI's mpirun sometimes never exits after the
    surviving ranks have reported and ended (its runtime logs
    "PMIX ERROR: BAD-PARAM" tearing the job down). What is checked is the
    ranks' behaviour: once every survivor has printed its error and exited,
    mpirun gets a grace period, then its process group is killed and a note
    says so.
    """
    job = subprocess.Popen(command, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(job.stdout),
                              daemon=True)
    reader.start()
    deadline = time.monotonic() + limit
    survivors_done_at = None
    grace = 3.0
    while job.poll() is None:
        now = time.monotonic()
        if now > deadline:
            problems.append(f"the job did not end within {limit} s")
            text = "".join(lines)
            for rank, pid in re.findall(r"^rank (\d+) pid (\d+)$", text,
                                        re.M):
                if alive(int(pid)):
                    problems.append(f"rank {rank} (pid {pid}) still alive: "
                                    f"{process_state(pid)}")
            break
        if mode == "killed":
            text = "".join(lines)
            pids = dict(re.findall(r"^rank (\d+) pid (\d+)$", text, re.M))
            reported = set(re.findall(r"^rank (\d+): error: ", text, re.M))
            survivors = {"0", "1", "2"}
            done = (survivors <= reported and survivors <= pids.keys() and
                    not any(alive(int(pids[r])) for r in survivors))
            if done and survivors_done_at is None:
                survivors_done_at = now
            if survivors_done_at is not None and now - survivors_done_at > grace:
                notes.append(f"mpirun had not exited {grace} s after every "
                             "surviving rank reported and ended; its process "
                             "group was killed")
                break
        time.sleep(0.05)
    if job.poll() is None:
        os.killpg(job.pid, signal.SIGKILL)
    returncode = job.wait()
    reader.join(timeout=5)
    if notes or problems:
        returncode = None
    return "".join(lines), returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--mode", required=True,
                        choices=["size-mismatch", "wrong-collective",
                                 "missing", "stuck", "killed"])
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
    notes = []
    start = time.monotonic()
    output, returncode = run_job(command, args.mode, args.limit, problems,
                                 notes)
    elapsed = time.monotonic() - start
    print(output, end="")
    print(f"--- {' '.join(command)}: {elapsed:.2f} s, exit status "
          f"{returncode}")
    for n in notes:
        print(f"note: {n}")

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
    if args.mode not in ("killed", "stuck") and returncode != 0:
        problems.append(f"mpirun exited with status {returncode}")
    if args.mode == "stuck":
        bound = timeout + 5
        gave_up = re.findall(
            "^" + re.escape(f"gnnc dist (mpi): MPI_Finalize had not returned "
                            f"{fmt_seconds(bound)} s after a failed "
                            "collective") + ".*$", output, re.M)
        if len(gave_up) != 3:
            problems.append(f"{len(gave_up)} ranks gave up MPI_Finalize "
                            "after a failure, expected 3")
        if elapsed < bound:
            problems.append(f"ended after {elapsed:.2f} s, before the "
                            f"finalisation bound of {bound} s")
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
