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

For CUDA tensors, on first use: the CUDA bridge (``csrc/bridge_cuda.cpp``,
gnnc's CUDA runtime behind C functions) and per model and GPU architecture
``gnnc --target=cuda --emit=cuda --training`` output compiled by nvcc.

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


def cuda_glue(verbose=False):
    """The glue with the CUDA bridge loaded (built on first use; loading it
    again does nothing)."""
    ext = glue(verbose)
    prefix = find_prefix()
    with _lock:
        ext.load_cuda_bridge(_cuda_bridge(prefix, verbose))
    return ext


def find_nvcc():
    """nvcc: $GNNC_TORCH_NVCC, else on PATH, else under $CUDA_HOME or
    /usr/local/cuda."""
    candidates = [os.environ.get("GNNC_TORCH_NVCC"), shutil.which("nvcc")]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 "/usr/local/cuda"):
        if home:
            candidates.append(os.path.join(home, "bin", "nvcc"))
    for c in candidates:
        if c and os.path.exists(c):
            return os.path.realpath(c)
    raise BuildError("gnnc: CUDA tensors need nvcc (the CUDA toolkit): put it "
                     "on PATH or set CUDA_HOME or GNNC_TORCH_NVCC")


def _cuda_paths(prefix):
    """(nvcc, the toolkit's include folder, its library folder); checks that
    the gnnc installation has its CUDA runtime."""
    if not os.path.exists(os.path.join(prefix, "lib", "libgnnc_cuda.a")):
        raise BuildError("gnnc: %s was built without CUDA (no lib/"
                         "libgnnc_cuda.a): CUDA tensors need a gnnc built "
                         "with the CUDA toolkit" % prefix)
    nvcc = find_nvcc()
    home = os.path.dirname(os.path.dirname(nvcc))
    libdir = next((d for d in (os.path.join(home, "lib64"),
                               os.path.join(home, "lib"))
                   if os.path.isdir(d)), os.path.join(home, "lib64"))
    return nvcc, os.path.join(home, "include"), libdir


def _cuda_link(prefix, libdir, nvcc=False):
    lib = os.path.join(prefix, "lib")
    rpath = (["-Xlinker", "-rpath," + libdir] if nvcc
             else ["-Wl,-rpath," + libdir])
    return [os.path.join(lib, "libgnnc_cuda.a"),
            os.path.join(lib, "libgnnc_runtime.a"), "-L" + libdir] + rpath + [
                "-lcublas", "-lcudart", "-lfmt"]


def _cuda_bridge(prefix, verbose):
    """csrc/bridge_cuda.cpp as a shared library (see that file)."""
    nvcc, include, libdir = _cuda_paths(prefix)
    src = os.path.join(os.path.dirname(__file__), "csrc", "bridge_cuda.cpp")
    key = _hash(_sources(src), gnnc_version(prefix), prefix, _compiler(),
                " ".join(_FLAGS), nvcc)[:16]
    library = os.path.join(cache_root(), "bridge-cuda-" + key + ".so")
    cmd = [_compiler()] + _FLAGS + [
        "-shared", "-I", os.path.join(prefix, "include"), "-I", include, src,
        "-o", "{out}"] + _cuda_link(prefix, libdir)
    return _build_once(library, cmd, "compiling the CUDA bridge", verbose)


def _build_once(library, cmd, what, verbose):
    """Runs `cmd` (its "{out}" is a temporary name) unless `library` exists,
    then moves the result into place."""
    if os.path.exists(library):
        return library
    os.makedirs(os.path.dirname(library), exist_ok=True)
    tmp = "%s.%d.tmp" % (library, os.getpid())
    cmd = [tmp if c == "{out}" else c for c in cmd]
    if verbose:
        print("gnnc.torch: " + " ".join(cmd), file=sys.stderr)
    try:
        _run(cmd, what)
        os.replace(tmp, library)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return library


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


def _sources(src):
    """The bytes of a bridge's source and of the header the bridges share."""
    parts = []
    for path in (src, os.path.join(os.path.dirname(src), "bridge_util.h")):
        with open(path, "rb") as f:
            parts.append(f.read())
    return b"\0".join(parts)


def _bridge(prefix, verbose):
    """csrc/bridge.cpp as a shared library: the C interface between the
    extension and gnnc's runtime (see that file)."""
    src = os.path.join(os.path.dirname(__file__), "csrc", "bridge.cpp")
    key = _hash(_sources(src), gnnc_version(prefix), prefix, _compiler(),
                " ".join(_FLAGS))[:16]
    library = os.path.join(cache_root(), "bridge-" + key + ".so")
    cmd = [_compiler()] + _FLAGS + ["-shared", "-I",
                                    os.path.join(prefix, "include"), src,
                                    "-o", "{out}"] + _link(prefix)
    return _build_once(library, cmd, "compiling the bridge", verbose)


def _define_text(value):
    if isinstance(value, bool):
        raise TypeError("gnnc: hyper-parameters are numbers, not bool")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    raise TypeError("gnnc: a hyper-parameter must be an int or a float, "
                    "not %s" % type(value).__name__)


_SHIM = """// Written by gnnc.torch: the entry point the glue looks up (the module's
// gnnc::rt::ModuleInfo, or gnnc::rt::cuda::ModuleInfo for CUDA).
#include "{header}"
extern "C" const void *gnnc_torch_module_info() {{
  return &gnnc_torch_model::gnnc_module;
}}
"""


def cuda_arch(device):
    """The GPU architectures a CUDA module is built for: $GNNC_TORCH_CUDA_ARCH
    ("90", or "80;90"), else the compute capability of `device`."""
    env = os.environ.get("GNNC_TORCH_CUDA_ARCH")
    if env:
        archs = [a.strip() for a in env.replace(",", ";").split(";")
                 if a.strip()]
        for a in archs:
            if not re.fullmatch(r"\d+[a-z]?", a):
                raise ValueError("gnnc: GNNC_TORCH_CUDA_ARCH=%r: expected "
                                 "compute capabilities such as 90 or 80;90"
                                 % env)
        return archs
    import torch
    major, minor = torch.cuda.get_device_capability(device)
    return ["%d%d" % (major, minor)]


def build_module(path, entry, defines, verbose=False, cuda_archs=None):
    """Compiles `entry` of the .gnn file `path` with the given -D values;
    returns the path of the shared library (cached). With `cuda_archs` (a
    list of compute capabilities), a CUDA module built by nvcc for them."""
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
    # $GNNC_TORCH_CXXFLAGS adds flags of the user's (-march=native);
    # $GNNC_TORCH_NVCCFLAGS those of nvcc.
    if cuda_archs:
        nvcc, include, libdir = _cuda_paths(prefix)
        flags = ["-std=c++17", "-O3", "-DNDEBUG", "-Xcompiler", "-fPIC"]
        for a in cuda_archs:
            flags += ["-gencode", "arch=compute_%s,code=sm_%s" % (a, a)]
        flags += shlex.split(os.environ.get("GNNC_TORCH_NVCCFLAGS", ""))
        compiler = nvcc
    else:
        flags = _FLAGS + shlex.split(os.environ.get("GNNC_TORCH_CXXFLAGS", ""))
        compiler = _compiler()
    key = _hash(source, path, entry or "", " ".join(define_args),
                gnnc_version(prefix), prefix, compiler,
                " ".join(flags))[:24]
    folder = os.path.join(cache_root(), "modules", key)
    library = os.path.join(folder, "module.so")
    if os.path.exists(library):
        return library

    os.makedirs(os.path.dirname(folder), exist_ok=True)
    work = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(folder))
    try:
        gen = os.path.join(work, "gen")
        emit = (["--target=cuda", "--emit=cuda"] if cuda_archs
                else ["--emit=cpp"])
        cmd = [os.path.join(prefix, "bin", "gnnc"), path] + emit + [
            "--training", "--cpp-namespace=gnnc_torch_model", "-o", gen]
        if entry:
            cmd.append("--entry=" + entry)
        cmd += define_args
        out = subprocess.run(cmd, capture_output=True, text=True,
                             check=False)
        if out.returncode != 0:
            raise GnncError(out.stderr.rstrip() or out.stdout.rstrip())
        stem = os.path.splitext(os.path.basename(path))[0]
        ext = ".cu" if cuda_archs else ".cpp"
        shim = os.path.join(work, "module_info" + ext)
        with open(shim, "w") as f:
            f.write(_SHIM.format(header=os.path.join(gen, stem + ".h")))
        cmd = [compiler] + flags + [
            "-shared", "-I", os.path.join(prefix, "include"),
            os.path.join(gen, stem + ext), shim,
            "-o", os.path.join(work, "module.so")]
        if cuda_archs:
            cmd += ["-Xlinker", "-z,defs"] + _cuda_link(prefix, libdir, True)
            what = "compiling the generated CUDA"
        else:
            cmd += _link(prefix)
            what = "compiling the generated C++"
        if verbose:
            print("gnnc.torch: " + " ".join(cmd), file=sys.stderr)
        _run(cmd, what)
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
