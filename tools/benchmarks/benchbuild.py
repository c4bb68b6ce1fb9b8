"""Building a benchmark program of tools/benchmarks/<name>/ against gnnc.

tools/benchmarks/dist/ and tools/benchmarks/sampling/ each hold one C++
program that is not part of gnnc's own build. Their drivers (run.py) build
it here, linking the libraries either from a gnnc build tree (configured
with gcc if it is not yet, and only the named targets built) or from an
installed gnnc package (--prefix).
"""

import json
import os
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def sh(cmd, **kw):
    """Runs a command; a non-zero exit raises."""
    kw.setdefault("check", True)
    return subprocess.run(cmd, **kw)


def build_program(source_dir, args, targets, program, log):
    """Configures and builds the CMake project in `source_dir` into
    args.work/build and returns the path of `program` there.

    With args.prefix the project finds the installed package; otherwise it
    links `targets` of the build tree args.gnnc_build, which is configured
    (Release, gcc) when it has no CMakeCache.txt and built for those targets
    only. args.arch_flags and args.jobs are passed on.
    """
    bdir = args.work / "build"
    cfg = ["cmake", "-S", str(source_dir), "-B", str(bdir), "-G", "Ninja",
           "-DCMAKE_BUILD_TYPE=Release",
           "-DGNNC_BENCH_ARCH_FLAGS=%s" % args.arch_flags]
    if args.prefix:
        cfg += ["-DCMAKE_PREFIX_PATH=%s" % pathlib.Path(args.prefix).resolve(),
                "-DGNNC_BUILD_DIR="]
    else:
        gb = pathlib.Path(args.gnnc_build).resolve()
        if not (gb / "CMakeCache.txt").exists():
            log("configuring gnnc in %s" % gb)
            env = dict(os.environ, CC="gcc", CXX="g++")
            sh(["cmake", "-S", str(ROOT), "-B", str(gb), "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=Release"], env=env, stdout=subprocess.DEVNULL)
        log("building %s in %s" % (" and ".join(targets), gb))
        sh(["cmake", "--build", str(gb), "-j%d" % args.jobs, "--target"]
           + list(targets), stdout=subprocess.DEVNULL)
        cfg.append("-DGNNC_BUILD_DIR=%s" % gb)
    log("configuring and building %s in %s" % (program, bdir))
    env = dict(os.environ)
    env.setdefault("CC", "gcc")
    env.setdefault("CXX", "g++")
    sh(cfg, env=env, stdout=subprocess.DEVNULL)
    sh(["cmake", "--build", str(bdir), "-j%d" % args.jobs],
       stdout=subprocess.DEVNULL)
    return bdir / program


def read_result(out_json, out, err, rc):
    """The JSON a benchmark program wrote: the file `out_json` if it holds
    JSON, else the last line of its standard output that starts with "{",
    else a record {"ok": False, "error": ...} with the exit status `rc` and
    the end of its output."""
    if out_json.exists():
        try:
            return json.loads(out_json.read_text())
        except ValueError:
            pass
    lines = [l for l in out.strip().splitlines() if l.startswith("{")]
    try:
        return json.loads(lines[-1])
    except (ValueError, IndexError):
        return {"ok": False, "error": "no result (exit %s): %s"
                % (rc, (err or out).strip()[-800:])}
