#!/usr/bin/env bash
# Everything gnnc generates for the examples and the tests, to compare two
# compilers byte for byte.
#
#   tools/compare-generated.sh GNNC OUT           write every output of GNNC
#   tools/compare-generated.sh GNNC OUT REF       the same, then compare with
#                                                 REF (an earlier OUT)
#   tools/compare-generated.sh --diff REF OUT     compare two folders
#
# The cases: every dsl-examples/*.gnn as written; every layer and model with
# the small hyper-parameters and the PyG golden cases, as tests/Target/Exec
# compiles them; every tests/**/*.gnn (most of tests/Frontend/errors
# fail, and their messages are compared); two generated programs of the
# compile-time benchmark (tools/benchmarks/compile_scaling.py). Each case is
# compiled with --emit=cpp, --emit=cpp --training, --target=cuda --emit=cuda
# (with and without --training), --emit=kernel-ir, mlir, mlir-fused,
# mlir-grad, mlir-grad-unfused and remat-report; OUT/<case>/<emit>/ holds the
# files, the standard error and the exit status. Input paths are relative to
# the repository root (they appear in the output), so run both compilers on
# the same tree. Exits 1 when a comparison finds differences.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

compare() {
  local ref="$1" out="$2"
  local files
  files="$( (cd "$ref" && find . -type f) | wc -l)"
  if diff -r -q "$ref" "$out" >/tmp/compare-generated.$$ 2>&1; then
    echo "compare-generated: $files files, no differences ($ref vs $out)"
    rm -f /tmp/compare-generated.$$
    return 0
  fi
  echo "compare-generated: differences ($ref vs $out):"
  head -50 /tmp/compare-generated.$$
  echo "($(wc -l </tmp/compare-generated.$$) lines of diff -rq; $files files in $ref)"
  rm -f /tmp/compare-generated.$$
  return 1
}

if [[ "${1:-}" == "--diff" ]]; then
  [[ $# -eq 3 ]] || { echo "usage: $0 --diff REF OUT" >&2; exit 2; }
  compare "$2" "$3"
  exit $?
fi
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 GNNC OUT [REF] | $0 --diff REF OUT" >&2
  exit 2
fi

gnnc="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
ref="${3:-}"
jobs="${JOBS:-2}"

cd "$root"
rm -rf "${out:?}"/*
mkdir -p "$out/.inputs"
python3 tools/benchmarks/compile_scaling.py chain 60 -o "$out/.inputs/chain.gnn"
python3 tools/benchmarks/compile_scaling.py plain 40 -o "$out/.inputs/plain.gnn"

# One line per case: <id> <file.gnn> [gnnc arguments...]; @<file> is one of
# OUT/.inputs.
python3 - >"$out/.cases" <<'EOF'
import glob, json, os, re

cases = []
for gnn in sorted(glob.glob("dsl-examples/*.gnn")):
    cases.append(["ex_" + os.path.basename(gnn)[:-4], gnn])
rows = []
for cmake in ["tests/Target/Exec/CMakeLists.txt"]:
    with open(cmake) as f:
        for m in re.finditer(r'"(\w+)\|(\w+)\|([^"]*)"', f.read()):
            if m.groups() not in rows:
                rows.append(m.groups())
for stem, entry, defines in rows:
    args = ["--entry", entry]
    for d in defines.split():
        args += ["-D", d]
    cases.append(["small_%s_%s" % (stem, entry), "dsl-examples/%s.gnn" % stem]
                 + args)
for case_json in sorted(glob.glob("tests/goldens/*/case.json")):
    with open(case_json) as f:
        case = json.load(f)
    definition = case["definition"]
    if "variant" in case and not case["variant"].get("concat", True):
        definition += "Mean"
    args = ["--entry", definition]
    for key, value in case["hparams"].items():
        args += ["-D", "%s=%s" % (key, value)]
    cases.append(["golden_" + os.path.basename(os.path.dirname(case_json)),
                  case["gnn"]] + args)
for gnn in sorted(glob.glob("tests/**/*.gnn", recursive=True)):
    cases.append(["test_" + gnn[len("tests/"):-4].replace("/", "_"), gnn])
cases.append(["scaling_chain60", "@chain.gnn"])
cases.append(["scaling_plain40", "@plain.gnn"])
cases.append(["scaling_appnp50", "dsl-examples/appnp.gnn", "-D", "k=50"])
for c in cases:
    print(" ".join(c))
EOF

run_case() {
  local gnnc="$1" out="$2" id="$3" gnn="$4"
  shift 4
  local emit dir rc
  # @name: a generated input, compiled from its folder under the same name
  # whatever OUT is.
  if [[ "$gnn" == @* ]]; then
    cd "$out/.inputs"
    gnn="${gnn#@}"
  fi
  for emit in cpp cpp-train cuda cuda-train kernel-ir mlir mlir-fused \
    mlir-grad mlir-grad-unfused remat-report; do
    dir="$out/$id/$emit"
    mkdir -p "$dir"
    rc=0
    case "$emit" in
    cpp) "$gnnc" "$gnn" --emit=cpp -o "$dir" "$@" 2>"$dir/stderr" || rc=$? ;;
    cpp-train)
      "$gnnc" "$gnn" --emit=cpp --training -o "$dir" "$@" 2>"$dir/stderr" || rc=$?
      ;;
    cuda)
      "$gnnc" "$gnn" --target=cuda --emit=cuda -o "$dir" "$@" 2>"$dir/stderr" || rc=$?
      ;;
    cuda-train)
      "$gnnc" "$gnn" --target=cuda --emit=cuda --training -o "$dir" "$@" \
        2>"$dir/stderr" || rc=$?
      ;;
    *)
      "$gnnc" "$gnn" "--emit=$emit" -o "$dir/out" "$@" 2>"$dir/stderr" || rc=$?
      ;;
    esac
    echo "$rc" >"$dir/rc"
  done
}
export -f run_case

# xargs splits each line into words (no quoting needed: no spaces in paths).
xargs -P "$jobs" -L 1 bash -c 'run_case "$@"' _ "$gnnc" "$out" <"$out/.cases"

n="$(wc -l <"$out/.cases")"
failed="$(grep -lv '^0$' "$out"/*/*/rc | wc -l)"
echo "compare-generated: $n cases, $((n * 10)) compilations ($failed exited non-zero) in $out"
if [[ -n "$ref" ]]; then
  compare "$ref" "$out"
fi
