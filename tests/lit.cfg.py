# -*- Python -*-
#
# lit configuration for the gnnc test suite. It is loaded through the
# per-build-directory lit.site.cfg.py (generated from lit.site.cfg.py.in),
# which records where that build's gnnc lives. Run it with
#   ctest --test-dir build -R '^lit$' --output-on-failure
#   cmake --build build -t check-gnnc-lit
#   build/bin/gnnc-lit -v tests/Frontend          # any subset, by source path
#
# Substitutions:
#   %gnnc      absolute path of this build's gnnc
#   %gnn-translate  absolute path of this build's gnn-translate
#   %examples  absolute path of the repository's dsl-examples/ directory
#   %gnnc-cxx  absolute path of this build's gnnc-cxx
#   %cxxflags  the compile flags of a C++ layer: -std=c++17, -I runtime/include
#   %cxxjson   the same, as JSON strings for a compile_commands.json
#   %nvcc      nvcc, when CUDA is enabled (feature "nvcc")
# FileCheck, not and count come from LLVM 19 (PATH is set up below).

import glob
import os
import sys

import lit.formats
import lit.Test
import lit.TestRunner
import lit.util

if not hasattr(config, "gnnc_obj_root"):
    lit_config.fatal(
        "gnnc's lit.cfg.py must be loaded through a build directory's "
        "lit.site.cfg.py: run lit on build/tests, or use build/bin/gnnc-lit")

config.name = "gnnc"
config.suffixes = [".gnn", ".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "unit", "lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.gnnc_obj_root, "tests")

# This build's tools first, then LLVM 19's FileCheck/not/count, then the rest.
config.environment["PATH"] = os.pathsep.join(
    [config.gnnc_tools_dir, config.llvm_tools_dir,
     config.environment.get("PATH", "")])

gnnc_path = os.path.join(config.gnnc_tools_dir, "gnnc")
examples_dir = os.path.join(config.gnnc_src_root, "dsl-examples")
config.substitutions.append(("%gnnc", gnnc_path))
config.substitutions.append(
    ("%gnn-translate", os.path.join(config.gnnc_tools_dir, "gnn-translate")))
config.substitutions.append(("%examples", examples_dir))
# gnnc-cxx (before %gnnc, its prefix) and the flags that find
# gnnc/cxx/NodeCentric.h (tests/cxx/lit).
config.substitutions.insert(
    0, ("%gnnc-cxx", os.path.join(config.gnnc_tools_dir, "gnnc-cxx")))
_cxx_include = os.path.join(config.gnnc_src_root, "runtime", "include")
config.substitutions.append(("%cxxflags", "-std=c++17 -I" + _cxx_include))
# The same flags as the entries of a compile_commands.json "arguments".
config.substitutions.append(
    ("%cxxjson", '"-std=c++17", "-I%s"' % _cxx_include))

if config.gnnc_sanitized:
    config.available_features.add("sanitizer")
    for san in config.gnnc_sanitizers.split(","):
        if san.strip():
            config.available_features.add(san.strip() + "-sanitizer")
if config.gnnc_build_type.lower() == "release":
    config.available_features.add("release")
# %nvcc: the CUDA compiler of this build, when CUDA is enabled (feature
# "nvcc"); tests that compile generated CUDA say `REQUIRES: nvcc`.
if getattr(config, "gnnc_nvcc", ""):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", config.gnnc_nvcc))

_SANITIZER_OPTION_VARS = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")


class GnncShTest(lit.formats.ShTest):
    """ShTest that does not let sanitizer reports slip through.

    lit's `not` turns *any* non-zero exit into success, so under a sanitizer
    a memory error in `not %gnnc bad.gnn` would go unnoticed. In sanitized
    builds every test therefore runs with the sanitizers' log_path pointing
    into the test's Output/ directory; a test that leaves a report there
    fails, and the report is attached to its output.
    """

    def __init__(self, sanitized):
        super().__init__(execute_external=False)
        self.sanitized = sanitized

    def execute(self, test, litConfig):
        if not self.sanitized:
            return super().execute(test, litConfig)

        tmp_dir, tmp_base = lit.TestRunner.getTempPaths(test)
        log_prefix = tmp_base + ".sanitizer-log"
        lit.util.mkdir_p(tmp_dir)
        for stale in glob.glob(glob.escape(log_prefix) + "*"):
            os.remove(stale)

        # Tests run one at a time per worker process, so editing the shared
        # config environment around a single test is safe.
        env = test.config.environment
        saved = {var: env.get(var) for var in _SANITIZER_OPTION_VARS}
        for var in _SANITIZER_OPTION_VARS:
            opts = [o for o in (saved[var] or "").split(":") if o]
            if var == "UBSAN_OPTIONS":
                opts.append("print_stacktrace=1")
            if var == "ASAN_OPTIONS":
                # LLVM's BumpPtrAllocator poisons its slabs from inline
                # header code; with an uninstrumented libMLIR that reports
                # false use-after-poison errors in MLIR's uniquers.
                opts.append("allow_user_poisoning=0")
            opts.append("log_path=" + log_prefix)
            env[var] = ":".join(opts)
        try:
            result = super().execute(test, litConfig)
        finally:
            for var, value in saved.items():
                if value is None:
                    env.pop(var, None)
                else:
                    env[var] = value

        logs = sorted(glob.glob(glob.escape(log_prefix) + "*"))
        if logs and isinstance(result, lit.Test.Result) \
                and result.code != lit.Test.UNSUPPORTED:
            reports = []
            for path in logs:
                with open(path, errors="replace") as f:
                    reports.append("--- %s ---\n%s" % (path, f.read()))
            result.code = lit.Test.FAIL
            result.output = (result.output or "") + \
                "\n*** sanitizer report(s) ***\n" + "\n".join(reports)
        return result


# lit pickles tests (and their format) to hand them to worker processes, so
# the class must be reachable by name in the module it claims to live in.
sys.modules[GnncShTest.__module__].GnncShTest = GnncShTest

config.test_format = GnncShTest(config.gnnc_sanitized)
