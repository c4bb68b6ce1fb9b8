#!/usr/bin/env bash
# The checks that need a GPU, in one run: on a machine with an NVIDIA GPU, the
# CUDA toolkit (nvcc, compute-sanitizer) and a CUDA PyTorch, from the
# repository root, with the kit of tools/gpu-kit.sh in gpukit/kit.tar.xz:
#
#   tools/gpu-check.sh [OUTDIR] [--budget SECONDS] [--no-bench | --bench-only]
#
#   1. the CUDA test programs: gnnc-cuda-runtime-tests (every device
#      operation against the C++ runtime), gnnc-cuda-tests (every generated
#      CUDA entry point against the reference interpreter and the PyG
#      goldens, training steps as CUDA graphs), gnnc-cuda-model-tests,
#      gnnc-dist-cuda-tests; gnnc-train's GCN and GAT on Cora, --device cuda
#      against --device cpu (when the kit has gnnc-train);
#   2. compute-sanitizer: memcheck over the three CUDA suites, racecheck
#      and synccheck over the runtime's and the kernel-shape tests, initcheck
#      over the model tests;
#   3. gnnc.torch's CUDA tests (tests/python: Cuda, CudaBuild), beside 1-2;
#   4. (unless --no-bench) gnnc.torch against PyG on the GPU:
#      tools/benchmarks/anchor.py --device cuda, GCN, GAT (8 heads) and
#      GraphSAGE-mean at F = 64 on rmat-17 and rmat-20, inference and
#      forward + backward, alone on the machine. --bench-only: 4 alone.
#
# Writes OUTDIR/{env.txt,tests.log,sanitizer.log,torch.log,gpu-bench.jsonl,
# summary.txt}; `tools/benchmarks/report.py --gpu OUTDIR docs/benchmarks.md
# docs/benchmarks` puts them into docs/benchmarks.md, "GPU" (with OUTDIR's
# note.md and reading.md, if any, as its text). Each step has a time limit,
# and steps are skipped once the budget (default 400 s) would be overrun.
# Exit status: 0 when every step that ran passed.
set -uo pipefail
py=${PYTHON:-python3}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
out=${OUT:-$root/gpu-out}
budget=400
bench=1
only_bench=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --budget) budget=$2; shift 2 ;;
    --no-bench) bench=0; shift ;;
    --bench-only) only_bench=1; shift ;;
    -*) echo "gpu-check: unknown option $1" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

kit=/tmp/gnnc-gpukit
cache=/tmp/gnnc-torch-cache
rm -rf "$kit" && mkdir -p "$kit"
tar -C "$kit" --strip-components=1 -xJf gpukit/kit.tar.xz || { note "kit: cannot unpack gpukit/kit.tar.xz"; exit 1; }
# The programs name the folders they were built in (the source tree for the
# goldens and datasets, the build tree for the generated code's line maps).
src=$(cat "$kit/source-dir")
bld=$(cat "$kit/build-dir")
if [[ $src != "$root" ]]; then
  mkdir -p "$(dirname "$src")"
  [[ -e $src ]] || ln -s "$root" "$src"
fi
# ../shared beside the source tree, as a path and as the kernel resolves it.
for d in "$(dirname "$src")" "$(dirname "$(realpath "$src")")"; do
  [[ -e $d/shared ]] || ln -s "$kit/shared" "$d/shared"
done
mkdir -p "$bld/tests/Target/Exec"
[[ -e $bld/tests/Target/Exec/gen ]] || ln -s "$kit/gen" "$bld/tests/Target/Exec/gen"

cudalib=$(dirname "$(find /usr/local/cuda*/ /opt -name 'libcublas.so.13' 2>/dev/null | head -1)")
nccllib=$(dirname "$(find /usr/local/cuda*/ /usr/lib /opt -name 'libnccl.so.2' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$kit/lib:$cudalib:$nccllib:${LD_LIBRARY_PATH:-}
export LIBRARY_PATH=$kit/lib:${LIBRARY_PATH:-}
export CPATH=$kit/include:${CPATH:-}
export PATH=$PATH:/usr/local/cuda/bin

{
  date -u
  nvidia-smi
  nvcc --version
  compute-sanitizer --version
  c++ --version | head -1
  $py -c 'import torch; print("torch", torch.__version__, torch.version.cuda, torch.cuda.get_device_name())'
  $py -c 'import torch_geometric; print("torch_geometric", torch_geometric.__version__)'
  echo "cuBLAS from $cudalib"
  for b in "$kit"/bin/* "$kit/prefix/bin/gnnc"; do
    echo "== ldd $(basename "$b")"; ldd "$b" | grep -E 'not found|cuda|cublas|nccl|mpi' || true
  done
} > "$out/env.txt" 2>&1

# step NAME LIMIT LOG CMD...: runs CMD with a time limit, appending to LOG.
failed=0
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local left=$((budget - SECONDS))
  if (( left < 20 )); then
    note "SKIPPED  $name (budget spent)"
    return
  fi
  (( limit > left )) && limit=$left
  echo "===== $name (limit ${limit}s)" >> "$log"
  local t0=$SECONDS
  local tmp=$out/.step.log
  timeout "$limit" "$@" > "$tmp" 2>&1
  local rc=$?
  cat "$tmp" >> "$log"
  local took=$((SECONDS - t0))
  # GoogleTest's counts: a test that skipped did not run on the GPU.
  local counts
  counts=$(awk '/^\[       OK \].*ms\)$/ {ok++} /^\[  SKIPPED \].*ms\)$/ {sk++}
                /^\[  FAILED  \].*ms\)$/ {f++}
                END {if (ok + sk + f) printf ", %d ok, %d skipped, %d failed", ok, sk, f}' "$tmp")
  rm -f "$tmp"
  if (( rc == 0 )); then
    note "PASSED   $name (${took}s$counts)"
  else
    failed=1
    note "FAILED   $name (exit $rc, ${took}s$counts)"
  fi
}

if (( ! only_bench )); then
# 3, in the background: nvcc and the C++ compiler of PyTorch's extension
# take most of it.
(
  export GNNC_PREFIX=$kit/prefix GNNC_TORCH_CACHE=$cache PYTHONPATH=$root/python
  t0=$SECONDS
  timeout 360 $py -m unittest -v tests.python.test_torch.CudaBuild \
    tests.python.test_torch.Cuda > "$out/torch.log" 2>&1
  echo "exit $? after $((SECONDS - t0))s" >> "$out/torch.log"
) &
torch_pid=$!

san_cmd=(compute-sanitizer --error-exitcode 99 --print-limit 20)
tests=$out/tests.log
step runtime-tests 120 "$tests" "$kit/bin/gnnc-cuda-runtime-tests"
step cuda-tests 180 "$tests" "$kit/bin/gnnc-cuda-tests"
step model-tests 60 "$tests" "$kit/bin/gnnc-cuda-model-tests"
step dist-cuda-tests 60 "$tests" "$kit/bin/gnnc-dist-cuda-tests"
# gnnc-train: 30 epochs on Cora on each device print the same losses and
# accuracies (4 decimals).
if [[ -x $kit/bin/gnnc-train ]]; then
  for model in gcn gat; do
    step "gnnc-train $model cuda = cpu" 90 "$tests" bash -c '
      for dev in cpu cuda; do
        "$1" --model "$2" --epochs 30 --log-every 10 --device $dev > "$3.$dev" 2>&1 ||
          { cat "$3.$dev"; exit 1; }
        cat "$3.$dev"
      done
      diff <(grep -o "epoch .*test [0-9.]*" "$3.cpu") <(grep -o "epoch .*test [0-9.]*" "$3.cuda")' \
      _ "$kit/bin/gnnc-train" "$model" "$out/.train"
  done
  rm -f "$out"/.train.*
fi
san=$out/sanitizer.log
step memcheck-runtime 120 "$san" "${san_cmd[@]}" --tool memcheck "$kit/bin/gnnc-cuda-runtime-tests"
step memcheck-model 60 "$san" "${san_cmd[@]}" --tool memcheck "$kit/bin/gnnc-cuda-model-tests"
# Four StepGraph tests make CUDA API calls fail on purpose (an allocation,
# a blocking copy and a synchronisation inside a capture) and check that the
# failure is reported: memcheck runs them without reporting API errors.
misuse='StepGraph.CaptureOf*:StepGraph.MisuseFailsClearly:StepGraph.AssignRejectsOtherSizes'
step memcheck-cuda-tests 180 "$san" "${san_cmd[@]}" --tool memcheck "$kit/bin/gnnc-cuda-tests" "--gtest_filter=-*Cora*:$misuse"
step memcheck-capture-misuse 60 "$san" "${san_cmd[@]}" --tool memcheck --report-api-errors no "$kit/bin/gnnc-cuda-tests" "--gtest_filter=$misuse"
# racecheck is slow on cuBLAS's kernels: the runtime's own kernels only.
step racecheck-runtime 90 "$san" "${san_cmd[@]}" --tool racecheck "$kit/bin/gnnc-cuda-runtime-tests" '--gtest_filter=-*Matmul*'
step racecheck-kernel-shapes 90 "$san" "${san_cmd[@]}" --tool racecheck "$kit/bin/gnnc-cuda-tests" '--gtest_filter=*kernel_shapes*:*softmax_limits*'
step synccheck-kernel-shapes 60 "$san" "${san_cmd[@]}" --tool synccheck "$kit/bin/gnnc-cuda-tests" '--gtest_filter=*kernel_shapes*'
step initcheck-model 60 "$san" "${san_cmd[@]}" --tool initcheck "$kit/bin/gnnc-cuda-model-tests"

wait "$torch_pid"
if grep -q -E '^OK' "$out/torch.log"; then
  note "PASSED   gnnc.torch CUDA tests ($(tail -1 "$out/torch.log"), $(grep -E '^OK' "$out/torch.log"))"
else
  failed=1
  note "FAILED   gnnc.torch CUDA tests ($(tail -1 "$out/torch.log"))"
fi

fi

if (( bench )); then
  export GNNC_PREFIX=$kit/prefix GNNC_TORCH_CACHE=$cache PYTHONPATH=$root/python
  data=/tmp/gnnc-bench-data
  jsonl=$out/gpu-bench.jsonl
  : > "$jsonl"
  for g in rmat-17 rmat-20; do
    step "graph $g" 120 "$out/tests.log" $py tools/benchmarks/graphs.py "$data" "$g"
    [[ -f $data/$g/meta.json ]] || continue
    n=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['N'])" "$data/$g/meta.json")
    for layer in gcn gat8 sage_mean; do
      for mode in infer train; do
        for impl in gnnc-torch pyg; do
          left=$((budget - SECONDS))
          (( left < 15 )) && { note "SKIPPED  bench $g $layer $mode $impl"; continue; }
          timeout $((left < 90 ? left : 90)) $py tools/benchmarks/anchor.py \
            --device cuda --impl "$impl" --layer "$layer" --graph "$data/$g" \
            --nodes "$n" --mode "$mode" --warmup 3 --min-reps 20 \
            --min-time 0.5 --max-time 5 2>/dev/null |
            $py -c "import json,sys; r=json.loads(sys.stdin.read() or '{}'); r['graph']='$g'; print(json.dumps(r))" >> "$jsonl"
        done
      done
    done
  done
  $py - "$jsonl" <<'EOF' | tee -a "$summary"
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r.get("graph"), r.get("layer"), r.get("mode"))
    rows.setdefault(key, {})[r.get("impl")] = (
        statistics.median(r["times_s"]) if r.get("ok") else None)
print("graph    layer      mode   gnnc-torch  pyg  (ms, medians)  pyg/gnnc")
for (g, l, m), v in rows.items():
    a, b = v.get("gnnc-torch"), v.get("pyg")
    f = lambda t: "%.3f" % (t * 1e3) if t else "-"
    print("%-8s %-10s %-6s %10s %8s %8s" % (g, l, m, f(a), f(b),
          "%.2f" % (b / a) if a and b else "-"))
EOF
fi
note "total ${SECONDS}s"
exit $failed
