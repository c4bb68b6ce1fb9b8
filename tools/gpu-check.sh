#!/usr/bin/env bash
# The checks that need a GPU, in one run: on a machine with an NVIDIA GPU, the
# CUDA toolkit (nvcc, compute-sanitizer) and a CUDA PyTorch, from the
# repository root, with the kit of tools/gpu-kit.sh in gpukit/kit.tar.xz:
#
#   tools/gpu-check.sh [OUTDIR] [--budget SECONDS] [--no-bench | --bench-only]
#                      [--profile [--no-tests]]
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
#   5. (with --profile, after 1-3) where the time goes: the device's copy
#      bandwidth (torch's copy_ of 1 GiB); the aggregation alone (gnnc's
#      tools/benchmarks/aggregate.gnn against cuSPARSE's SpMM through
#      torch.sparse.mm) on rmat-17 and rmat-20; the device time per kernel
#      (torch.profiler, anchor.py --kernels) of GCN, GAT and GraphSAGE
#      training, gnnc and PyG, on rmat-17; Nsight Compute's metrics of every
#      gnnc kernel of one GAT and one GraphSAGE training step. gnnc's cases
#      run twice: as printed, and with -DGNNC_EDGE_UNROLL=1 (one edge's
#      gather at a time; Kernel.cuh). --no-tests: 5 without Nsight Compute,
#      and gnnc-train, alone. --profile-layers "L ..." profiles those
#      training layers (default: gat8 sage_mean gcn); --compare split runs
#      gnnc's second variant with -DGNNC_SPLIT_ROWS=0 (one group per row,
#      however long) instead of -DGNNC_EDGE_UNROLL=1; --no-ncu skips Nsight
#      Compute.
#
# Writes OUTDIR/{env.txt,summary.txt,gpu-bench.jsonl} and logs.tar.gz (the
# logs: tests.log, sanitizer.log, torch.log), and with --profile
# profile.jsonl, copy.json and ncu-*.csv: 8 files at most; `tools/benchmarks/report.py --gpu OUTDIR docs/benchmarks.md
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
profile=0
no_tests=0
profile_layers="gat8 sage_mean gcn"
compare=unroll
ncu_on=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --profile-layers) profile_layers=$2; shift 2 ;;
    --compare)
      [[ ${2:-} == split || ${2:-} == unroll ]] ||
        { echo "gpu-check: --compare takes split or unroll, not '${2:-}'" >&2; exit 2; }
      compare=$2; shift 2 ;;
    --no-ncu) ncu_on=0; shift ;;
    --budget) budget=$2; shift 2 ;;
    --no-bench) bench=0; shift ;;
    --bench-only) only_bench=1; shift ;;
    --profile) profile=1; shift ;;
    --no-tests) no_tests=1; shift ;;
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
torch_pid=
if (( ! no_tests )); then
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
fi

san_cmd=(compute-sanitizer --error-exitcode 99 --print-limit 20)
tests=$out/tests.log
if (( ! no_tests )); then
step runtime-tests 120 "$tests" "$kit/bin/gnnc-cuda-runtime-tests"
step cuda-tests 180 "$tests" "$kit/bin/gnnc-cuda-tests"
step model-tests 60 "$tests" "$kit/bin/gnnc-cuda-model-tests"
step dist-cuda-tests 60 "$tests" "$kit/bin/gnnc-dist-cuda-tests"
fi
# gnnc-train: 30 epochs on Cora on each device print the same losses (to
# 1e-3, relative) and accuracies (to 0.005: 5 of Cora's 1000 test vertices;
# cuBLAS and OpenBLAS sum in different orders).
if [[ -x $kit/bin/gnnc-train ]]; then
  for model in gcn gat; do
    step "gnnc-train $model cuda ~ cpu" 90 "$tests" bash -c '
      for dev in cpu cuda; do
        "$1" --model "$2" --epochs 30 --log-every 10 --device $dev > "$3.$dev" 2>&1 ||
          { cat "$3.$dev"; exit 1; }
        cat "$3.$dev"
      done
      "$4" - "$3.cpu" "$3.cuda" <<"EOF"
import re, sys
pat = re.compile(r"epoch +(\d+) +loss ([\d.]+) +train ([\d.]+) +val ([\d.]+) +test ([\d.]+)")
cpu, cuda = ([m.groups() for m in pat.finditer(open(f).read())] for f in sys.argv[1:3])
ok = len(cpu) == len(cuda) > 0
for a, b in zip(cpu, cuda):
    loss = abs(float(a[1]) - float(b[1])) <= 1e-3 * max(1.0, float(a[1]))
    acc = all(abs(float(x) - float(y)) <= 0.005 for x, y in zip(a[2:], b[2:]))
    ok = ok and loss and acc
    print("epoch %3s  cpu %s  cuda %s  %s" % (a[0], " ".join(a[1:]), " ".join(b[1:]),
                                             "ok" if loss and acc else "DIFFERS"))
sys.exit(0 if ok else 1)
EOF' _ "$kit/bin/gnnc-train" "$model" "$out/.train" "$py"
  done
  rm -f "$out"/.train.*
fi
if (( ! no_tests )); then
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

fi

if (( profile )); then
  export GNNC_PREFIX=$kit/prefix GNNC_TORCH_CACHE=$cache PYTHONPATH=$root/python
  data=/tmp/gnnc-bench-data
  prof=$out/profile.jsonl
  : > "$prof"
  step "copy bandwidth" 60 "$out/tests.log" $py -c '
import json, sys, torch
x = torch.empty(1 << 28, device="cuda")  # 1 GiB
y = torch.empty_like(x)
for _ in range(3):
    y.copy_(x)
torch.cuda.synchronize()
ts = []
for _ in range(20):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); y.copy_(x); b.record(); b.synchronize()
    ts.append(a.elapsed_time(b) / 1e3)
ts.sort()
t = ts[len(ts) // 2]
r = {"bytes": 2 * x.numel() * 4, "median_s": t, "GBps": 2 * x.numel() * 4 / t / 1e9,
     "device": torch.cuda.get_device_name()}
json.dump(r, open(sys.argv[1], "w")); print(r)' "$out/copy.json"
  # profile_case GRAPH LAYER MODE IMPL [VARIANT NVCCFLAGS]: anchor.py with
  # the kernel table.
  profile_case() {
    local g=$1 layer=$2 mode=$3 impl=$4 variant=${5:-} flags=${6:-}
    local left=$((budget - SECONDS))
    (( left < 15 )) && { note "SKIPPED  profile $*"; return; }
    [[ -f $data/$g/meta.json ]] || return
    local n
    n=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['N'])" "$data/$g/meta.json")
    GNNC_TORCH_NVCCFLAGS=$flags timeout $((left < 90 ? left : 90)) $py tools/benchmarks/anchor.py \
      --device cuda --impl "$impl" --layer "$layer" --graph "$data/$g" \
      --nodes "$n" --mode "$mode" --warmup 3 --min-reps 10 --min-time 0.3 \
      --max-time 3 --kernels 3 2>>"$out/profile.err" |
      $py -c "import json,sys; r=json.loads(sys.stdin.read() or '{}'); r['graph']='$g'; r['variant']='$variant'; print(json.dumps(r))" >> "$prof"
  }
  # gnnc as printed, and with one edge's gather at a time (or one group
  # per row: --compare split).
  profile_gnnc() {
    profile_case "$@" gnnc-torch
    if [[ $compare == split ]]; then
      profile_case "$@" gnnc-torch "one group per row" -DGNNC_SPLIT_ROWS=0
    else
      profile_case "$@" gnnc-torch unroll-1 -DGNNC_EDGE_UNROLL=1
    fi
  }
  for g in rmat-17 rmat-20; do
    step "graph $g" 120 "$out/tests.log" $py tools/benchmarks/graphs.py "$data" "$g"
  done
  for g in rmat-17 rmat-20; do
    profile_gnnc $g gcn_agg infer
    profile_case $g gcn_agg infer pyg-sparse
  done
  for layer in $profile_layers; do
    profile_gnnc rmat-17 $layer train
    profile_case rmat-17 $layer train pyg
  done
  note "profiled $(wc -l < "$prof") cases"
  ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  if (( ! no_tests && ncu_on )) && [[ -n $ncu && -f $data/rmat-17/meta.json ]]; then
    n=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['N'])" "$data/rmat-17/meta.json")
    metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
    metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
    metrics+=,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct
    metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
    metrics+=,launch__grid_size,launch__block_size,smsp__inst_executed.sum
    metrics+=,sm__inst_executed_pipe_xu.sum,launch__occupancy_limit_registers
    for layer in gat8 sage_mean; do
      step "ncu $layer train" 100 "$out/tests.log" "$ncu" --profile-from-start off \
        --target-processes all --metrics "$metrics" --csv --page raw \
        --log-file "$out/ncu-$layer.csv" $py tools/benchmarks/anchor.py \
        --device cuda --impl gnnc-torch --layer $layer --graph "$data/rmat-17" \
        --nodes "$n" --mode train --warmup 2 --min-reps 1 --max-reps 1 --kernels 1
    done
  elif (( ! no_tests && ncu_on )); then
    note "SKIPPED  ncu (not found)"
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
# A device call brings back at most 8 files: the logs travel as one.
logs=()
for f in tests.log sanitizer.log torch.log profile.err; do
  [[ -f $out/$f ]] && logs+=("$f")
done
if (( ${#logs[@]} )); then
  tar -C "$out" -czf "$out/logs.tar.gz" "${logs[@]}" && (cd "$out" && rm -f "${logs[@]}")
fi
exit $failed
