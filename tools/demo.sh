#!/usr/bin/env bash
# gnnc demo: builds the compiler and its runtime libraries (not the tests:
# tools/test.sh builds those), checks every example, installs gnnc as a
# CMake package into build/install, and builds two out-of-tree programs
# against it (find_package(gnnc) + gnnc_add_model):
#
#   dsl-examples/train      train-gcn, the minimal training program: GCN on
#                           Cora, GNNC_DEMO_EXAMPLE_EPOCHS epochs (200)
#   tools/benchmarks/train  gnnc-train, the training harness: GCN and GAT on
#                           Cora and Citeseer, 200 epochs, 5 seeds each, with
#                           the mean test accuracy, its standard deviation
#                           and the time per epoch
#
#   GNNC_DEMO_SEEDS=5 GNNC_DEMO_EPOCHS=200 bash tools/demo.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# OpenBLAS' own thread pool and the OpenMP threads of the generated code
# otherwise compete for the same cores (docs/training.md: about 2.5x slower
# steps on 2 cores); the matmuls run inside the OpenMP program anyway.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

SEEDS=${GNNC_DEMO_SEEDS:-5}
EPOCHS=${GNNC_DEMO_EPOCHS:-200}
LOG_EVERY=${GNNC_DEMO_LOG_EVERY:-50}
EXAMPLE_EPOCHS=${GNNC_DEMO_EXAMPLE_EPOCHS:-200}

echo "== Installing dependencies"
bash tools/install-deps.sh

echo
echo "== Building gnnc and its runtime libraries (Release, build/; the tests are built by tools/test.sh)"
# Only what `cmake --install` installs; tools/build.sh without
# GNNC_BUILD_TESTS=OFF (tools/test.sh) builds the rest in the same tree.
GNNC_BUILD_TESTS=OFF bash tools/build.sh release -DGNNC_BUILD_TRAIN_DEMO=OFF

echo
echo "== Checking and lowering dsl-examples/*.gnn"
fail=0
shopt -s nullglob
for f in dsl-examples/*.gnn; do
  if build/bin/gnnc "$f" --emit=mlir >/dev/null 2>build/demo-stderr.txt; then
    printf '  ok    %s\n' "$f"
  else
    printf '  FAIL  %s\n' "$f"
    sed 's/^/        /' build/demo-stderr.txt
    fail=$((fail + 1))
  fi
done
rm -f build/demo-stderr.txt
if ((fail != 0)); then
  echo "demo: ${fail} example(s) failed" >&2
  exit 1
fi

echo
echo "== The C++ that gnnc writes for GCN (--emit=cpp --training): its entry points"
rm -rf build/demo-gcn-cpp
build/bin/gnnc dsl-examples/gcn.gnn --emit=cpp --training --entry=GCN -o build/demo-gcn-cpp
grep -E '^gnnc::rt::Status GCN(_train|_backward)?\(' build/demo-gcn-cpp/gcn.h | sed 's/^/  /'

echo
echo "== Installing gnnc into build/install and building dsl-examples/train (train-gcn) against it"
GNNC_TRAIN_APPS=example bash tools/build-train-app.sh build build/install build/train build/train-gcn

echo
echo "== The minimal program: GCN on Cora, ${EXAMPLE_EPOCHS} epochs (dsl-examples/train/main.cpp; every 20th epoch shown)"
build/train-gcn/train-gcn "$EXAMPLE_EPOCHS" | tee build/train-gcn/demo.log |
  awk '!/^epoch/ || $2 <= 3 || $2 % 20 == 0' | sed 's/^/  /'

echo
echo "== Building the training harness tools/benchmarks/train (gnnc-train) against build/install"
GNNC_TRAIN_APPS=harness bash tools/build-train-app.sh build build/install build/train build/train-gcn

echo
echo "== Training: ${EPOCHS} epochs, ${SEEDS} seeds per model and dataset"
echo "   (machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS};"
echo "    test accuracy taken at the epoch of best validation accuracy)"
summary=()
for model in gcn gat; do
  for dataset in cora citeseer; do
    echo
    log=build/train/demo-${model}-${dataset}.log
    build/train/gnnc-train --model "$model" --dataset "$dataset" \
      --epochs "$EPOCHS" --seeds "$SEEDS" --log-every "$LOG_EVERY" | tee "$log"
    summary+=("$(grep '^== .* seed(s), ' "$log")")
  done
done

echo
echo "== Summary (mean +- std over ${SEEDS} seeds)"
printf '  %s\n' "${summary[@]}"
