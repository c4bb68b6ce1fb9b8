#!/usr/bin/env bash
# gnnc.torch's tests against an installed gnnc (tools/test.sh step 4 runs it
# with the package it installed):
#   1. `pip install ./python` into a virtual environment that sees the
#      system's PyTorch (Debian's python3-torch unless PYTHON says otherwise);
#   2. tests/python (unittest): PyG goldens, gradcheck, modules, bad input;
#   3. PyG's GCN and GAT example scripts with gnnc's layers
#      (dsl-examples/python) against gnnc-train, the C++ training program,
#      on Cora: the mean test accuracies over the same number of seeds must
#      agree within 1 point.
#
#   tools/test-python.sh PREFIX GNNC_TRAIN [--seeds K]
#
# PREFIX: the gnnc installation; GNNC_TRAIN: a gnnc-train built against it.
# K: seeds per program (default 2 under CI=true, else 10). PYTHON: the
# interpreter whose PyTorch to test (default /usr/bin/python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $# -lt 2 ]]; then
  echo "usage: $0 PREFIX GNNC_TRAIN [--seeds K]" >&2
  exit 2
fi
prefix=$(realpath "$1")
train=$(realpath "$2")
shift 2
seeds=10
[[ ${CI:-} == true ]] && seeds=2
while [[ $# -gt 0 ]]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    *) echo "$0: unknown option $1" >&2; exit 2 ;;
  esac
done
python=${PYTHON:-/usr/bin/python3}

work=$(mktemp -d "${TMPDIR:-/tmp}/gnnc-python.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install -q --no-deps --no-build-isolation \
  --no-index ./python
export GNNC_PREFIX=$prefix GNNC_TORCH_CACHE=$work/cache OPENBLAS_NUM_THREADS=1
py=$work/venv/bin/python
"$py" -c 'import torch, gnnc.torch; print("gnnc.torch %s with PyTorch %s from %s" % (gnnc.__version__, torch.__version__, gnnc.torch.__file__))'

# The tests import the installed package, not python/ of this checkout.
(cd "$work" && "$py" -W ignore::UserWarning -m unittest discover \
  -s "$OLDPWD/tests/python" -v) 2>&1 | tee "$work/unittest.log"

accuracy() { sed -nE 's/^== .*test accuracy ([0-9.]+) \+- .*/\1/p' "$1"; }
for model in gcn gat; do
  "$py" "dsl-examples/python/${model}_cora.py" --quiet --seeds "$seeds" \
    | tee "$work/$model-python.log"
  "$train" --model "$model" --dataset cora --seeds "$seeds" --quiet \
    | tee "$work/$model-cpp.log"
  py_acc=$(accuracy "$work/$model-python.log")
  cpp_acc=$(accuracy "$work/$model-cpp.log")
  if ! awk -v a="$py_acc" -v b="$cpp_acc" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1) }'; then
    echo "python: FAILED: ${model} on Cora from PyTorch ${py_acc} %, gnnc-train ${cpp_acc} % (${seeds} seeds): more than 1 point apart" >&2
    exit 1
  fi
  echo "python: ${model} on Cora, ${seeds} seeds: PyG's script with gnnc.torch ${py_acc} %, gnnc-train ${cpp_acc} %"
done
echo "python: $(grep -E '^Ran [0-9]+ tests' "$work/unittest.log"), $(tail -n 1 "$work/unittest.log")"
