#!/usr/bin/env bash
# Packs what tools/gpu-check.sh runs on a machine with a GPU that has the CUDA
# toolkit and PyTorch but neither LLVM 19, fmt, OpenBLAS nor a gnnc build:
#
#   tools/gpu-kit.sh [BUILD]        (default BUILD: build; writes gpukit/kit.tar.xz)
#
# The kit holds
#   bin/     the CUDA test programs (gnnc-cuda-tests, gnnc-cuda-runtime-tests,
#            gnnc-cuda-model-tests, gnnc-dist-cuda-tests, and gnnc-train when
#            the build has it). gnnc-cuda-tests
#            is linked again against LLVM's and MLIR's static libraries: the
#            shared libLLVM and libMLIR with their own dependencies are
#            about 200 MB more than the 64 MiB a device call carries;
#   lib/     the shared libraries they need beyond glibc, libstdc++ and CUDA
#            (fmt, OpenBLAS, libgomp, Open MPI ...), with the unversioned
#            names the linker of gnnc.torch's builds looks for;
#   include/ fmt's headers (the runtime's headers include them);
#   prefix/  `cmake --install BUILD`, its gnnc linked statically as above
#            (gnnc.torch's CUDA tests compile modules with it);
#   gen/     the generated CUDA of the execution suite (its tests read the
#            line maps), and shared/datasets/cora (the Cora tests);
#   source-dir  the source folder the programs were built in (they name it).
#
# The build must be a Release build with CUDA enabled (tools/build.sh release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
build=$(realpath "${1:-build}")
llvm=$(llvm-config-19 --libdir)
for t in gnnc-cuda-tests gnnc-cuda-runtime-tests gnnc-cuda-model-tests \
         gnnc-dist-cuda-tests gnnc; do
  [[ -x $build/bin/$t ]] || { echo "gpu-kit: $build/bin/$t is missing (a CUDA build?)" >&2; exit 1; }
done

stage=$(mktemp -d /tmp/gnnc-gpukit.XXXXXX)
trap 'rm -rf "$stage"' EXIT
kit=$stage/kit
mkdir -p "$kit"/{bin,lib,include,gen,shared/datasets}

# Relinks BUILD's target $1 into $2 with the static LLVM and MLIR libraries
# in place of libLLVM.so and libMLIR.so (the linker takes what is used).
relink() {
  (cd "$build" && python3 - "$1" "$2" "$llvm" <<'EOF'
import glob, shlex, subprocess, sys
target, out, libdir = sys.argv[1:4]
line = subprocess.run(["ninja", "-t", "commands", target], check=True,
                      capture_output=True, text=True).stdout.splitlines()[-1]
args = shlex.split(line.removeprefix(": && ").removesuffix(" && :"))
mlir = [p for p in sorted(glob.glob(libdir + "/libMLIR*.a"))
        if not any(k in p for k in ("CAPI", "Python", "ExecutionEngine"))]
static = (["-Wl,--start-group"] + mlir +
          sorted(glob.glob(libdir + "/libLLVM*.a")) +
          ["-Wl,--end-group", "-lz", "-l:libzstd.so.1", "-ltinfo"])
cmd, dropped = [], 0
for i, a in enumerate(args):
    if "libMLIR.so" in a or "libLLVM.so" in a or "libLLVM-19.so" in a:
        dropped += 1
        if dropped == 1:
            cmd += static
        continue
    cmd.append(out if i and args[i - 1] == "-o" else a)
if not dropped:
    sys.exit("gpu-kit: %s does not link libLLVM/libMLIR" % target)
sys.exit(subprocess.run(cmd).returncode)
EOF
  )
}

relink bin/gnnc-cuda-tests "$kit/bin/gnnc-cuda-tests"
cp "$build"/bin/{gnnc-cuda-runtime-tests,gnnc-cuda-model-tests,gnnc-dist-cuda-tests} "$kit/bin/"
# gnnc-train with --device cuda, when the build has it (-DGNNC_BUILD_TRAIN_DEMO=ON).
[[ -x $build/bin/gnnc-train ]] && cp "$build/bin/gnnc-train" "$kit/bin/"
cmake --install "$build" --prefix "$kit/prefix" >/dev/null
relink bin/gnnc "$kit/prefix/bin/gnnc"
rm -f "$kit"/prefix/bin/{gnn-opt,gnn-translate,gnnc-interp}

# Shared libraries beyond the C/C++ runtime and CUDA's.
for b in "$kit"/bin/* "$kit/prefix/bin/gnnc"; do ldd "$b"; done |
  awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt)\.so|/usr/local/cuda' |
  while read -r so; do cp -L "$so" "$kit/lib/"; done
if ldd "$kit/bin/gnnc-cuda-tests" | grep -q -E 'libLLVM|libMLIR'; then
  echo "gpu-kit: gnnc-cuda-tests still links libLLVM/libMLIR" >&2
  exit 1
fi
ln -s libfmt.so.9 "$kit/lib/libfmt.so"
ln -s libopenblas.so.0 "$kit/lib/libopenblas.so"
cp -r /usr/include/fmt "$kit/include/"
cp -r "$build/tests/Target/Exec/gen/cuda" "$kit/gen/"
if [[ -d $root/../shared/datasets/cora ]]; then
  cp -r "$root/../shared/datasets/cora" "$kit/shared/datasets/"
fi
echo "$root" > "$kit/source-dir"
echo "$build" > "$kit/build-dir"

mkdir -p gpukit
tar -C "$stage" -cf - kit | xz -T0 -6 > gpukit/kit.tar.xz.tmp
mv gpukit/kit.tar.xz.tmp gpukit/kit.tar.xz
du -h gpukit/kit.tar.xz
