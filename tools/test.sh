#!/usr/bin/env bash
# gnnc's full test run (what CI runs through .ci/run):
#   1. install dependencies
#   2. Release build (gcc, -Werror) in build/
#   3. unit + lit tests on it, the distributed-memory suites among them
#      (gnnc_dist on threads; over `mpirun -np 4 --oversubscribe`, ctest
#      dist.mpi-4 and dist.mpi-faults.*; across two network-namespace hosts,
#      dist.two-hosts, skipped unless root) (with the training harness tools/benchmarks/train
#      and the minimal program dsl-examples/train built in-tree by
#      gnnc_add_model, and their short training runs, ctest train.* and
#      train-gcn.runs; the HTML view of --emit=html, ctest html.structure
#      and html.browser in headless Chromium)
#   4. the CMake package: install build/ into a temporary prefix, build both
#      training programs out of tree against it (find_package(gnnc)), and
#      train GCN on Cora for 60 epochs with each (the test accuracy must
#      reach 70%); build cxx-app (a layer written in C++, compiled by
#      gnnc-cxx through gnnc_add_cxx_sources) and check its output; then
#      gnnc.torch against it (tools/test-python.sh: pip
#      install ./python, tests/python, PyG's GCN and GAT scripts with gnnc's
#      layers against gnnc-train on Cora)
#   5. clang-19 ASan+UBSan build with the fuzzer in build-asan/, unit + lit
#      tests (+ fuzzer seed replay) on it (all but the CUDA emulation's
#      suite, which step 3 runs: tools/build.sh)
#   6. 40 s of fuzzing the front end, then 10 s each of the --define,
#      .npy, .gnnd, dataset-folder and text-loader fuzzers (tools/fuzz runs
#      them as long as asked: tools/fuzz --seconds N)
#   7. the benchmark harness' smoke run (tools/bench --quick: builds the
#      benchmark programs against build/, runs Cora and a small R-MAT against
#      PyG and DGL, and against PyG on the current PyTorch only where
#      build/bench-torch-venv exists (it installs none), writes
#      build/bench-quick/; no timing thresholds: it must complete and write
#      its JSON)
# and ends with ctest's summary line of each test run (the last line is the
# ASan+UBSan build's "100% tests passed, 0 tests failed out of N").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FUZZ_SECONDS=${GNNC_FUZZ_SECONDS:-40}
export GNNC_JOBS=${GNNC_JOBS:-2}
export GNNC_WERROR=ON
export CTEST_OUTPUT_ON_FAILURE=1
# allow_user_poisoning=0: LLVM's allocators poison memory from inline
# header code, which an uninstrumented libMLIR does not unpoison.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# mpirun refuses root without these (the MPI suites of gnnc_dist).
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# Each section's heading says when it started, and the summary how long
# each took (CI's budget is 45 minutes on 2 cores).
section_names=()
section_starts=()
section() {
  section_names+=("$*")
  section_starts+=("$SECONDS")
  printf '\n======================================================================\n'
  printf '== %s (at %dm%02ds)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60))
  printf '======================================================================\n'
}

section_times() {
  local i end
  for i in "${!section_names[@]}"; do
    end=${section_starts[$((i + 1))]:-$SECONDS}
    printf '  %-70s %4dm%02ds\n' "${section_names[$i]:0:70}" \
      $(((end - section_starts[i]) / 60)) $(((end - section_starts[i]) % 60))
  done
}

# Runs ctest in $1, keeps its log in $1/ctest.log.
run_ctest() {
  local dir=$1
  ctest --test-dir "$dir" --output-on-failure -j"$GNNC_JOBS" 2>&1 | tee "$dir/ctest.log"
}

# ctest's own summary line of a run ("100% tests passed, 0 tests failed out of N").
ctest_summary() {
  grep -E '^[0-9]+% tests passed' "$1/ctest.log" || true
}

section "1/7 Dependencies"
bash tools/install-deps.sh

section "2/7 Release build (gcc, -Werror) in build/"
bash tools/build.sh release -DGNNC_BUILD_TRAIN_DEMO=ON

section "3/7 Tests: Release build"
run_ctest build

section "4/7 CMake package: install, out-of-tree training programs, short training, gnnc.torch"
pkg_tmp=$(mktemp -d "${TMPDIR:-/tmp}/gnnc-package.XXXXXX")
trap 'rm -rf "$pkg_tmp"' EXIT
GNNC_APP_CXXFLAGS="-Wall -Wextra -Werror" \
  bash tools/build-train-app.sh build "$pkg_tmp/prefix" "$pkg_tmp/train"
OPENBLAS_NUM_THREADS=1 "$pkg_tmp/train/gnnc-train" --model gcn --dataset cora --epochs 60 --seeds 1 \
  --log-every 10 --check-min-test-acc 0.70 | tee "$pkg_tmp/train.log"
package_summary=$(grep -E '^check passed' "$pkg_tmp/train.log")
OPENBLAS_NUM_THREADS=1 "$pkg_tmp/train-gcn/train-gcn" 60 | tee "$pkg_tmp/train-gcn.log"
example_summary=$(grep -E '^test accuracy after 60 epochs: 0\.[7-9]' "$pkg_tmp/train-gcn.log")
"$pkg_tmp/cxx-app/cxx-app" | tee "$pkg_tmp/cxx-app.log"
cxx_summary=$(grep -E '^cxx-app: check passed' "$pkg_tmp/cxx-app.log")
# gnnc.torch against the same installation (pip install ./python).
bash tools/test-python.sh "$pkg_tmp/prefix" "$pkg_tmp/train/gnnc-train" | tee "$pkg_tmp/python.log"
python_summary=$(grep -E '^python: ' "$pkg_tmp/python.log")
rm -rf "$pkg_tmp"
trap - EXIT

section "5/7 ASan+UBSan build (clang-19, fuzzer) in build-asan/ and its tests"
bash tools/build.sh asan
run_ctest build-asan

section "6/7 Fuzzing: the front end for ${FUZZ_SECONDS}s, then the other fuzzers"
corpus=build-asan/fuzz-corpus
artifacts=build-asan/fuzz-artifacts
rm -rf "$corpus" "$artifacts"
mkdir -p "$corpus" "$artifacts"
# Seed with every example and lit test; name by path so equal basenames
# do not overwrite each other.
nseeds=0
while IFS= read -r -d '' f; do
  cp "$f" "$corpus/$(printf '%s' "$f" | tr '/' '_')"
  nseeds=$((nseeds + 1))
done < <(find dsl-examples tests -type f -name '*.gnn' -print0 2>/dev/null)
echo "fuzz: ${nseeds} seed inputs, log in build-asan/fuzz.log"

fuzz_status=0
build-asan/bin/gnnc-frontend-fuzzer "$corpus" \
  -max_total_time="$FUZZ_SECONDS" -max_len=8192 -timeout=5 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" \
  >build-asan/fuzz.log 2>&1 </dev/null || fuzz_status=$?
if ((fuzz_status != 0)); then
  tail -n 80 build-asan/fuzz.log
  echo
  echo "fuzz: FAILED (exit ${fuzz_status}); reproducer(s):"
  ls -l "$artifacts"
  echo "reproduce with: build-asan/bin/gnnc-frontend-fuzzer $artifacts/<file>"
  exit 1
fi
grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs)|stat::number_of_executed_units|stat::peak_rss_mb' \
  build-asan/fuzz.log || true
echo "fuzz: OK, corpus now has $(find "$corpus" -type f | wc -l) inputs"

# --define values through the lowering, and the runtime's readers (.npy
# files, .gnnd bundles, .npy dataset folders, SNAP / Matrix Market / OGB
# files), briefly; tools/fuzz runs them longer.
tools/fuzz --seconds "${GNNC_MORE_FUZZ_SECONDS:-10}" gnnc-define-fuzzer \
  gnnc-npy-fuzzer gnnc-gnnd-fuzzer gnnc-dataset-dir-fuzzer gnnc-loaders-fuzzer

section "7/7 Benchmark harness smoke run (tools/bench --quick)"
bash tools/bench --quick
bench_json=build/bench-quick/benchmarks/results.json
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); ok = sum(c["status"] == "ok" for c in d["cases"]); print("bench: %d of %d smoke cases ran, JSON in %s" % (ok, len(d["cases"]), sys.argv[1])); sys.exit(0 if any(c["status"] == "ok" and c["impl"] == "gnnc" for c in d["cases"]) else 1)' "$bench_json"

section "Summary"
echo "time per section:"
section_times
echo "fuzz: the front end ${FUZZ_SECONDS}s without a crash, leak or timeout"
echo "fuzz: --define values and the runtime's readers ${GNNC_MORE_FUZZ_SECONDS:-10}s each without a crash"
echo "bench: the smoke run completed (${bench_json})"
echo "package: installed, out-of-tree gnnc-train built and trained: ${package_summary}"
echo "package: out-of-tree train-gcn built and trained: ${example_summary}"
echo "package: out-of-tree cxx-app (a C++ layer, gnnc_add_cxx_sources) built and run: ${cxx_summary}"
echo "${python_summary}"
echo "distributed memory (build/): $(grep -cE 'Test +#[0-9]+: dist[.-].* Passed' build/ctest.log) dist tests passed, $(grep -cE 'Test +#[0-9]+: dist[.-].*Skipped' build/ctest.log) skipped (the CUDA ones without a GPU, dist.two-hosts unless root, the no-MPI check with MPI)"
echo "data-parallel training (build/): $(grep -cE 'Test +#[0-9]+: train\.data-parallel\..* Passed' build/ctest.log) tests passed, $(grep -cE 'Test +#[0-9]+: train\.data-parallel\..*Skipped' build/ctest.log) skipped (two-hosts unless root)"
echo "HTML view (build/): $(grep -cE 'Test +#[0-9]+: html\..* Passed' build/ctest.log) of 2 tests passed (html.structure, html.browser in headless Chromium)"
grep -E 'Test +#[0-9]+: dist\.(mpi-4|two-hosts) ' build/ctest.log | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: /  /; s/ \.{2,}/:/' || true
echo "Release build (build/):"
ctest_summary build
echo "ASan+UBSan build (build-asan/):"
ctest_summary build-asan
