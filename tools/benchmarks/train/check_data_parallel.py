#!/usr/bin/env python3
"""Checks gnnc-train's data-parallel training against one rank.

  check_data_parallel.py --train gnnc-train --work DIR --model sage
      [--embeddings 32] [--fixed-size bound] --ranks 4 --comm threads|mpi
      [--mpiexec mpirun] [--steps 20] [--loss-tol 1e-5] [--param-tol 1e-4]

  check_data_parallel.py --resume ... (see --help): a run stopped by a
      killed rank, resumed from its checkpoint, against an uninterrupted one.

The reference is the same program on one rank with the ranks' global batch
(--batch-size B x ranks), the same seeds, and dropout off (its masks are
keyed by a row's position in a batch, which differs between one batch and
its parts on several ranks). Neighbour draws are keyed by (seed, epoch,
global step, vertex), so both runs see the same blocks; what may differ is
the order of floating-point sums: the all-reduce adds the ranks' partial
gradients, one rank sums all rows at once, and BLAS rounds a row's product
by its position in the batch. The per-step losses must agree within
--loss-tol (absolute) and every final parameter within --param-tol
(absolute, relative to the parameter's largest magnitude, at least 1).

.npy files are read without NumPy (float32 or int64, little-endian, C
order).
"""
import argparse
import ast
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    codes = {"<f4": ("f", 4), "<i8": ("q", 8)}
    if header["descr"] not in codes or header["fortran_order"]:
        raise ValueError(f"{path}: expected little-endian float32 or int64, "
                         "C order")
    code, size = codes[header["descr"]]
    body = data[start + hlen:]
    count = len(body) // size
    return list(struct.unpack(f"<{count}{code}", body[:size * count]))


def read_trace(path):
    losses = []
    with open(path) as f:
        for line in f:
            epoch, step, global_step, loss = line.split()
            losses.append((int(global_step), float(loss)))
    return losses


def compare(ref_dir, ref_trace, run_dir, run_trace, loss_tol, param_tol,
            exact=False):
    """Returns a list of failures (empty: agreement) and prints the figures."""
    failures = []
    a, b = read_trace(ref_trace), read_trace(run_trace)
    if [s for s, _ in a] != [s for s, _ in b]:
        failures.append(f"the runs took different steps: {len(a)} and "
                        f"{len(b)} lines")
    else:
        worst = max((abs(x - y), s) for (s, x), (_, y) in zip(a, b))
        print(f"  losses: {len(a)} steps, max |diff| {worst[0]:.3g} "
              f"(step {worst[1]}), tolerance {loss_tol:g}")
        if exact and any(x != y for (_, x), (_, y) in zip(a, b)):
            failures.append("the losses are not bit-identical")
        elif worst[0] > loss_tol:
            failures.append(f"step {worst[1]}: losses differ by {worst[0]:.3g}")
    names = sorted(n for n in os.listdir(ref_dir) if n.endswith(".npy"))
    if names != sorted(n for n in os.listdir(run_dir) if n.endswith(".npy")):
        failures.append("the runs saved different parameter files")
        return failures
    for name in names:
        x, y = read_npy(os.path.join(ref_dir, name)), read_npy(
            os.path.join(run_dir, name))
        if len(x) != len(y):
            failures.append(f"{name}: {len(x)} and {len(y)} elements")
            continue
        diff = max((abs(p - q) for p, q in zip(x, y)), default=0.0)
        scale = max(1.0, max((abs(p) for p in x), default=0.0))
        print(f"  {name}: {len(x)} values, max |diff| {diff:.3g} "
              f"(relative {diff / scale:.3g})")
        if exact and x != y:
            failures.append(f"{name}: not bit-identical")
        elif diff / scale > param_tol:
            failures.append(f"{name}: differs by {diff:.3g} (relative "
                            f"{diff / scale:.3g} > {param_tol:g})")
    return failures


def run(cmd, env, timeout, expect_ok=True):
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    took = time.monotonic() - start
    if expect_ok and p.returncode != 0:
        sys.stdout.write(p.stdout)
        raise SystemExit(f"FAILED: exit status {p.returncode}: "
                         + " ".join(cmd))
    return p, took


def run_killed(cmd, env, ranks, limit):
    """Runs a job in which rank 1 kills itself; returns (output, seconds
    until every survivor had reported its error, notes). Open MPI's mpirun
    sometimes never exits after a rank died, though every survivor has
    reported and ended; it then gets 3 s of grace before its process group
    is killed, with a note."""
    job = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(job.stdout),
                              daemon=True)
    reader.start()
    start = time.monotonic()
    reported_at, notes = None, []
    survivors = {str(r) for r in range(ranks) if r != 1}
    while job.poll() is None:
        now = time.monotonic()
        if now - start > limit + 60:
            notes.append("the job did not end; killed")
            break
        text = "".join(lines)
        reported = set(re.findall(r"^gnnc-train: error: rank (\d+): ", text,
                                  re.M))
        if survivors <= reported and reported_at is None:
            reported_at = now
        if reported_at is not None and now - reported_at > 3.0:
            notes.append("mpirun had not exited 3 s after every surviving "
                         "rank reported; its process group was killed")
            break
        time.sleep(0.05)
    if job.poll() is None:
        os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    reader.join(timeout=5)
    end = reported_at if reported_at is not None else time.monotonic()
    return "".join(lines), end - start, notes


def shm_segments():
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("gnnc")}
    except OSError:
        return set()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", default="sage")
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--embeddings", type=int, default=0)
    ap.add_argument("--fixed-size", default="")
    ap.add_argument("--memory", default="distributed")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--comm", default="threads")
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--mpi-args", default="",
                    help="extra mpirun arguments (space-separated)")
    ap.add_argument("--batch-size", type=int, default=32,
                    help="per rank; the reference takes B x ranks")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--loss-tol", type=float, default=1e-5)
    ap.add_argument("--param-tol", type=float, default=1e-4)
    ap.add_argument("--resume", action="store_true",
                    help="kill rank 1 in epoch 3, resume, compare bit-exact "
                    "with an uninterrupted run of as many ranks")
    ap.add_argument("--two-hosts", metavar="TOOL",
                    help="tools/dist/two-hosts.sh: 2 hosts x 2 ranks against "
                    "4 ranks on one host, bit for bit (exit 77: no hosts)")
    ap.add_argument("--ogb-from", metavar="BUNDLE",
                    help="a .gnnd bundle against the same data written as an "
                    "OGB folder, bit for bit")
    ap.add_argument("--folder-from", metavar="BUNDLE",
                    help="a .gnnd bundle against the same data written as a "
                    ".npy folder, bit for bit")
    ap.add_argument("--kill-limit", type=float, default=30.0,
                    help="seconds the survivors may take to fail (--resume)")
    args = ap.parse_args()

    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")

    def command(ranks, comm, batch, tag, extra=()):
        cmd = [args.train, "--comm", comm, "--model", args.model,
               "--dataset", args.dataset, "--batch-size", str(batch),
               "--epochs", "1000", "--no-dropout", "--quiet",
               "--memory", args.memory, "--eval-every", "0",
               "--trace", os.path.join(work, tag + ".trace"),
               "--save-params", os.path.join(work, tag)]
        if args.embeddings:
            cmd += ["--embeddings", str(args.embeddings)]
        if args.fixed_size:
            cmd += ["--fixed-size", args.fixed_size]
        cmd += list(extra)
        if comm == "threads":
            return cmd + ["--ranks", str(ranks)]
        return ([args.mpiexec, "-np", str(ranks), "--oversubscribe"]
                + args.mpi_args.split() + cmd)

    if args.resume:
        return check_resume(args, work, env, command)
    if args.two_hosts:
        return check_two_hosts(args, work, env, command)
    if args.ogb_from:
        return check_same_data(args, work, env, command, write_ogb,
                               args.ogb_from, "OGB folder")
    if args.folder_from:
        return check_same_data(args, work, env, command, write_npy_folder,
                               args.folder_from, ".npy folder")

    print(f"reference: 1 rank, batch size {args.batch_size * args.ranks}")
    run(command(1, "threads", args.batch_size * args.ranks, "one",
                ["--max-steps", str(args.steps)]), env, 600)
    print(f"run: {args.ranks} ranks ({args.comm}), batch size "
          f"{args.batch_size} each")
    _, took = run(command(args.ranks, args.comm, args.batch_size, "many",
                          ["--max-steps", str(args.steps)]), env, 600)
    print(f"  ({took:.1f} s)")
    failures = compare(os.path.join(work, "one"),
                       os.path.join(work, "one.trace"),
                       os.path.join(work, "many"),
                       os.path.join(work, "many.trace"), args.loss_tol,
                       args.param_tol)
    return finish(failures)


def read_gnnd(path):
    """The arrays of a .gnnd bundle (docs/runtime.md, version 1): n, f,
    features (lists of nonzero columns), edges (src, dst), labels, masks."""
    with open(path, "rb") as fh:
        blob = fh.read()
    if blob[:8] != b"GNNCDATA":
        raise ValueError(f"{path}: not a gnnc dataset bundle")
    n, f, e, c = struct.unpack("<4I", blob[16:32])
    nnz, size = struct.unpack("<2Q", blob[32:48])
    pos = 48

    def varint():
        nonlocal pos
        value = shift = 0
        while True:
            byte = blob[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    rows = []
    for _ in range(n):
        cols, col = [], -1
        for _ in range(varint()):
            col += varint() + 1
            cols.append(col)
        rows.append(cols)
    code, width = ("H", 2) if n <= 65536 else ("I", 4)
    src = struct.unpack(f"<{e}{code}", blob[pos:pos + width * e])
    pos += width * e
    dst = struct.unpack(f"<{e}{code}", blob[pos:pos + width * e])
    pos += width * e
    labels = list(blob[pos:pos + n])
    pos += n
    masks = []
    for _ in range(3):
        bits = blob[pos:pos + (n + 7) // 8]
        pos += (n + 7) // 8
        masks.append([v for v in range(n) if bits[v // 8] >> (v % 8) & 1])
    return n, f, rows, src, dst, labels, masks


def write_ogb(bundle, root):
    """The bundle as an OGB node-property dataset folder (raw/, split/)."""
    n, f, rows, src, dst, labels, masks = read_gnnd(bundle)
    os.makedirs(os.path.join(root, "raw"))
    os.makedirs(os.path.join(root, "split", "random"))

    def write(name, lines):
        with open(os.path.join(root, name), "w") as fh:
            fh.writelines(line + "\n" for line in lines)

    write("raw/num-node-list.csv", [str(n)])
    write("raw/num-edge-list.csv", [str(len(src))])
    write("raw/edge.csv", [f"{s},{d}" for s, d in zip(src, dst)])
    write("raw/node-label.csv", [str(y) for y in labels])
    write("raw/node-feat.csv",
          [",".join("1.0" if c in set(cols) else "0.0" for c in range(f))
           for cols in rows])
    for name, ids in zip(("train", "valid", "test"), masks):
        write(f"split/random/{name}.csv", [str(v) for v in ids])


def write_npy(path, descr, shape, values, code):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape) if len(shape) == 1
        else ", ".join(str(d) for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as fh:
        fh.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header))
                 + header.encode("latin1"))
        fh.write(struct.pack(f"<{len(values)}{code}", *values))


def write_npy_folder(bundle, root):
    """The bundle as a .npy dataset folder (edge_index.npy, x.npy, ...)."""
    n, f, rows, src, dst, labels, masks = read_gnnd(bundle)
    os.makedirs(root)
    write_npy(os.path.join(root, "edge_index.npy"), "<i8", (2, len(src)),
              list(src) + list(dst), "q")
    x = [0.0] * (n * f)
    for v, cols in enumerate(rows):
        for c in cols:
            x[v * f + c] = 1.0
    write_npy(os.path.join(root, "x.npy"), "<f4", (n, f), x, "f")
    write_npy(os.path.join(root, "y.npy"), "<i8", (n,), labels, "q")
    for name, ids in zip(("train", "val", "test"), masks):
        bits = [0] * n
        for v in ids:
            bits[v] = 1
        write_npy(os.path.join(root, f"{name}_mask.npy"), "|b1", (n,), bits,
                  "B")


def check_same_data(args, work, env, command, writer, bundle, kind):
    """The bundled dataset against the same data written as `kind` (a .npy
    folder, whose edge list gnnc-train streams into the CSR, a GAT adding
    one self-loop per vertex; or an OGB folder, read by the runtime's OGB
    loader): the same rows, edges, split and CSR order, so the same bits."""
    root = os.path.join(work, "dataset")
    writer(bundle, root)
    steps = ["--max-steps", str(args.steps), "--normalize"]
    print(f"bundle: {bundle}")
    run(command(args.ranks, args.comm, args.batch_size, "bundle",
                steps + ["--data", bundle]), env, 600)
    print(f"{kind}: {root}")
    run(command(args.ranks, args.comm, args.batch_size, "other",
                steps + ["--data", root]), env, 600)
    return finish(compare(os.path.join(work, "bundle"),
                          os.path.join(work, "bundle.trace"),
                          os.path.join(work, "other"),
                          os.path.join(work, "other.trace"), 0.0, 0.0,
                          exact=True))


def finish(failures):
    """Prints the failures (or "passed"); the exit status."""
    for f in failures:
        print("FAILED: " + f)
    if not failures:
        print("passed")
    return 1 if failures else 0


def check_two_hosts(args, work, env, command):
    """4 ranks on 2 network-namespace hosts (tools/dist/two-hosts.sh) against
    4 ranks on this host: the same ranks, partitions and sums, so the
    losses and parameters must be the same bits."""
    steps = ["--max-steps", str(args.steps)]
    print("one host: mpirun -np 4")
    p, _ = run(command(4, "mpi", args.batch_size, "one-host", steps), env, 600)
    cmd = command(4, "mpi", args.batch_size, "two-hosts", steps)
    # Past "mpirun -np 4 --oversubscribe": the program and its arguments.
    program = cmd[cmd.index(args.train):]
    print("two hosts: tools/dist/two-hosts.sh run (2 ranks per host)")
    p, _ = run(["bash", args.two_hosts, "run", "-x", "OMP_NUM_THREADS", "-x",
                "OPENBLAS_NUM_THREADS"] + program, env, 600, expect_ok=False)
    if p.returncode == 77:
        print(p.stdout.strip().splitlines()[-1])
        return 77
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        print(f"FAILED: exit status {p.returncode}")
        return 1
    failures = []
    if "2 node(s)" not in p.stdout:
        failures.append("the two-host run did not see 2 nodes")
    failures += compare(os.path.join(work, "one-host"),
                        os.path.join(work, "one-host.trace"),
                        os.path.join(work, "two-hosts"),
                        os.path.join(work, "two-hosts.trace"), 0.0, 0.0,
                        exact=True)
    return finish(failures)


def check_resume(args, work, env, command):
    """Uninterrupted run of E epochs against: run with checkpoints, rank 1
    killed before step 1 of epoch 3; the survivors must fail within the
    limit, naming the dead rank, leaving no shared memory; then --resume
    finishes the E epochs. Parameters and losses must be bit-identical."""
    epochs = ["--epochs", "4"]
    ckpt = os.path.join(work, "ckpt")
    before = shm_segments()
    print(f"uninterrupted: {args.ranks} ranks, 4 epochs")
    run([c for c in command(args.ranks, args.comm, args.batch_size, "full")
         if c] + epochs, env, 600)
    print("killed: rank 1 before step 1 of epoch 3")
    cmd = command(args.ranks, args.comm, args.batch_size, "resumed",
                  ["--checkpoint", ckpt, "--kill-at", "1:3:1"]) + epochs
    # Without --enable-recovery mpirun ends the whole job when a rank dies;
    # with it, the survivors must notice on their own.
    cmd.insert(1, "--enable-recovery")
    text, took, notes = run_killed(cmd, env, args.ranks, args.kill_limit)
    failures = []
    survivors = [r for r in range(args.ranks) if r != 1]
    pattern = re.compile(r"^gnnc-train: error: rank (\d+): .*rank 1\b.*"
                         r"(missing or dead|has left)", re.M)
    named = {int(m.group(1)) for m in pattern.finditer(text)}
    for line in text.splitlines():
        if line.startswith("gnnc-train: error: rank"):
            print("  | " + line)
    for n in notes:
        print("  note: " + n)
    missing = [r for r in survivors if r not in named]
    if missing:
        failures.append(f"surviving rank(s) {missing} printed no error "
                        "naming rank 1")
    print(f"  every survivor failed after {took:.1f} s (limit "
          f"{args.kill_limit:g} s)")
    if took > args.kill_limit:
        failures.append(f"the survivors took {took:.1f} s to fail")
    left = shm_segments() - before
    if left:
        failures.append(f"shared memory left behind: {sorted(left)}")
    print("resumed from the checkpoint of epoch 2")
    run(command(args.ranks, args.comm, args.batch_size, "resumed",
                ["--checkpoint", ckpt, "--resume"]) + epochs, env, 600)
    # The trace of the killed run holds epochs 1-2 and part of 3; the
    # resumed run appended epochs 3-4. Keep each step's last line.
    lines = {}
    with open(os.path.join(work, "resumed.trace")) as f:
        for line in f:
            lines[int(line.split()[2])] = line
    with open(os.path.join(work, "resumed.trace"), "w") as f:
        f.writelines(lines[k] for k in sorted(lines))
    failures += compare(os.path.join(work, "full"),
                        os.path.join(work, "full.trace"),
                        os.path.join(work, "resumed"),
                        os.path.join(work, "resumed.trace"), 0.0, 0.0,
                        exact=True)
    return finish(failures)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(main())
