"""Finding gnnc, compiling a .gnn definition and building it, with a cache.

Three parts, all built on first use:

* the glue (``csrc/torch_glue.cpp``), a PyTorch C++ extension built once per
  PyTorch version and gnnc installation by ``torch.utils.cpp_extension``;
* the bridge (``csrc/bridge.cpp``), a small shared library compiled like
  gnnc's runtime, through which the glue builds graphs and makes calls
  without passing C++ library types between the two (PyTorch may use
  another std::string ABI);
* per model: ``gnnc --emit=cpp --training`` output compiled into a plain
  shared library (no PyTorch headers, so a new model builds in seconds),
  which the glue loads.

All live under the cache folder (``$GNNC_TORCH_CACHE``, else
``~/.cache/gnnc/torch``), keyed by a hash of everything that goes into them.
"""

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading

_lock = threading.Lock()
_glue = {}
_versions = {}


class GnncError(Exception):
    """A .gnn file that gnnc rejects. ``str(e)`` is gnnc's own message:
    ``file:line:col: error: ...`` with the line and a caret."""


class BuildError(RuntimeError):
    """The generated code or the glue did not compile or link."""


def cache_root():
    root = os.environ.get("GNNC_TORCH_CACHE")
    if root:
        return os.path.abspath(root)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gnnc", "torch")


def find_prefix():
    """The gnnc installation: $GNNC_PREFIX, else the folder above the `gnnc`
    on PATH. It must hold bin/gnnc, include/gnnc/runtime and the runtime's
    static libraries (`cmake --install`)."""
    prefix = os.environ.get("GNNC_PREFIX")
    if not prefix:
        exe = shutil.which("gnnc")
        if not exe:
            raise BuildError(
                "gnnc: cannot find gnnc: set GNNC_PREFIX to its installation "
                "(cmake --install build --prefix DIR) or put DIR/bin on PATH")
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
    prefix = os.path.abspath(prefix)
    needed = [os.path.join("bin", "gnnc"),
              os.path.join("include", "gnnc", "runtime", "Abi.h"),
              os.path.join("lib", "libgnnc_ops.a"),
              os.path.join("lib", "libgnnc_runtime.a")]
    for rel in needed:
        if not os.path.exists(os.path.join(prefix, rel)):
            raise BuildError(
                "gnnc: %s is not a gnnc installation (no %s); install one "
                "with `cmake --install build --prefix DIR` and set "
                "GNNC_PREFIX=DIR" % (prefix, rel))
    return prefix


def gnnc_version(prefix):
    if prefix not in _versions:
        exe = os.path.join(prefix, "bin", "gnnc")
        out = subprocess.run([exe, "--version"], capture_output=True,
                             text=True, check=False)
        if out.returncode != 0:
            raise BuildError("gnnc: `%s --version` failed: %s" %
                             (exe, out.stderr.strip()))
        # Rebuilt binaries of one version differ too: hash the executable.
        with open(exe, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
        _versions[prefix] = out.stdout.strip() + " " + digest
    return _versions[prefix]


def _hash(*parts):
    h = hashlib.sha256()
    for p in parts:
        data = p if isinstance(p, bytes) else str(p).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _run(cmd, what):
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise BuildError("gnnc: %s failed (exit %d):\n$ %s\n%s%s" % (
            what, out.returncode, " ".join(cmd), out.stdout, out.stderr))
    return out


def glue(verbose=False):
    """The PyTorch extension of csrc/torch_glue.cpp, built on first use."""
    import torch
    from torch.utils import cpp_extension

    prefix = find_prefix()
    with _lock:
        if prefix in _glue:
            return _glue[prefix]
        src = os.path.join(os.path.dirname(__file__), "csrc",
                           "torch_glue.cpp")
        with open(src, "rb") as f:
            key = _hash(f.read(), torch.__version__, sys.version,
                        gnnc_version(prefix), prefix)[:16]
        build_dir = os.path.join(cache_root(), "glue-" + key)
        os.makedirs(build_dir, exist_ok=True)
        ext = cpp_extension.load(
            name="gnnc_torch_glue_" + key,
            sources=[src],
            extra_include_paths=[os.path.join(prefix, "include")],
            extra_cflags=["-O2"] + _std_flag(torch.__version__),
            extra_ldflags=["-ldl"],
            build_directory=build_dir,
            verbose=verbose)
        ext.load_bridge(_bridge(prefix, verbose))
        _glue[prefix] = ext
        return ext


def _std_flag(version):
    """The glue needs C++17. PyTorch's extension flags give C++14 before
    2.1 (so ask for 17) and C++17 or 20 since (keep theirs: the headers of
    2.10 and later need 20)."""
    m = re.match(r"(\d+)\.(\d+)", version)
    if m and (int(m.group(1)), int(m.group(2))) < (2, 1):
        return ["-std=c++17"]
    return []


def _compiler():
    return os.environ.get("CXX", "c++")


# What the bridge and the modules are compiled with: the runtime's own
# settings (and its C++ library ABI), not PyTorch's.
_FLAGS = ["-std=c++17", "-O3", "-DNDEBUG", "-fopenmp", "-fPIC"]


def _link(prefix):
    lib = os.path.join(prefix, "lib")
    return ["-Wl,-z,defs", os.path.join(lib, "libgnnc_ops.a"),
            os.path.join(lib, "libgnnc_runtime.a"), "-lfmt", "-lopenblas",
            "-fopenmp"]


def _bridge(prefix, verbose):
    """csrc/bridge.cpp as a shared library: the C interface between the
    extension and gnnc's runtime (see that file)."""
    src = os.path.join(os.path.dirname(__file__), "csrc", "bridge.cpp")
    with open(src, "rb") as f:
        key = _hash(f.read(), gnnc_version(prefix), prefix, _compiler(),
                    " ".join(_FLAGS))[:16]
    library = os.path.join(cache_root(), "bridge-" + key + ".so")
    if os.path.exists(library):
        return library
    os.makedirs(cache_root(), exist_ok=True)
    tmp = "%s.%d.tmp" % (library, os.getpid())
    cmd = [_compiler()] + _FLAGS + ["-shared", "-I",
                                    os.path.join(prefix, "include"), src,
                                    "-o", tmp] + _link(prefix)
    if verbose:
        print("gnnc.torch: " + " ".join(cmd), file=sys.stderr)
    try:
        _run(cmd, "compiling the bridge")
        os.replace(tmp, library)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return library


def _define_text(value):
    if isinstance(value, bool):
        raise TypeError("gnnc: hyper-parameters are numbers, not bool")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    raise TypeError("gnnc: a hyper-parameter must be an int or a float, "
                    "not %s" % type(value).__name__)


_SHIM = """// Written by gnnc.torch: the entry point the glue looks up.
#include "{header}"
extern "C" const gnnc::rt::ModuleInfo *gnnc_torch_module_info() {{
  return &gnnc_torch_model::gnnc_module;
}}
"""


def build_module(path, entry, defines, verbose=False):
    """Compiles `entry` of the .gnn file `path` with the given -D values;
    returns the path of the shared library (cached)."""
    prefix = find_prefix()
    path = os.path.abspath(path)
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise FileNotFoundError("gnnc: cannot read %s: %s" %
                                (path, e.strerror)) from None
    define_args = []
    for name in sorted(defines):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError("gnnc: %r is not a hyper-parameter name" % name)
        define_args += ["-D", "%s=%s" % (name, _define_text(defines[name]))]
    # $GNNC_TORCH_CXXFLAGS adds flags of the user's (-march=native).
    flags = _FLAGS + shlex.split(os.environ.get("GNNC_TORCH_CXXFLAGS", ""))
    key = _hash(source, path, entry or "", " ".join(define_args),
                gnnc_version(prefix), prefix, _compiler(),
                " ".join(flags))[:24]
    folder = os.path.join(cache_root(), "modules", key)
    library = os.path.join(folder, "module.so")
    if os.path.exists(library):
        return library

    os.makedirs(os.path.dirname(folder), exist_ok=True)
    work = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(folder))
    try:
        gen = os.path.join(work, "gen")
        cmd = [os.path.join(prefix, "bin", "gnnc"), path, "--emit=cpp",
               "--training", "--cpp-namespace=gnnc_torch_model", "-o", gen]
        if entry:
            cmd.append("--entry=" + entry)
        cmd += define_args
        out = subprocess.run(cmd, capture_output=True, text=True,
                             check=False)
        if out.returncode != 0:
            raise GnncError(out.stderr.rstrip() or out.stdout.rstrip())
        stem = os.path.splitext(os.path.basename(path))[0]
        shim = os.path.join(work, "module_info.cpp")
        with open(shim, "w") as f:
            f.write(_SHIM.format(header=os.path.join(gen, stem + ".h")))
        cmd = [_compiler()] + flags + [
            "-shared", "-I", os.path.join(prefix, "include"),
            os.path.join(gen, stem + ".cpp"), shim,
            "-o", os.path.join(work, "module.so")] + _link(prefix)
        if verbose:
            print("gnnc.torch: " + " ".join(cmd), file=sys.stderr)
        _run(cmd, "compiling the generated C++")
        # Keep the generated code beside the library: users read it.
        try:
            os.rename(work, folder)
        except OSError:
            # Another process finished the same build first.
            if not os.path.exists(library):
                raise
        return library
    finally:
        if os.path.exists(work):
            shutil.rmtree(work, ignore_errors=True)
