#!/usr/bin/env bash
# gnnc demo: builds the compiler, runs the front end over every example in
# dsl-examples/, then prints the AST of the GAT example.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== Installing dependencies"
bash tools/install-deps.sh

echo "== Building gnnc (Release, build/)"
bash tools/build.sh release

echo "== Checking dsl-examples/*.gnn"
ok=0
fail=0
shopt -s nullglob
for f in dsl-examples/*.gnn; do
  if build/bin/gnnc "$f" --emit=ast >/dev/null 2>build/demo-stderr.txt; then
    printf '  ok    %s\n' "$f"
    ok=$((ok + 1))
  else
    printf '  FAIL  %s\n' "$f"
    sed 's/^/        /' build/demo-stderr.txt
    fail=$((fail + 1))
  fi
done
rm -f build/demo-stderr.txt
echo "   ${ok} ok, ${fail} failed"

echo
echo "== build/bin/gnnc dsl-examples/gat.gnn --emit=ast"
build/bin/gnnc dsl-examples/gat.gnn --emit=ast

echo
echo "== Lowering dsl-examples/*.gnn to the gnn dialect"
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

echo
echo "== build/bin/gnnc dsl-examples/gcn.gnn --emit=mlir --entry GCNConv -D in_dim=1433 -D out_dim=16"
build/bin/gnnc dsl-examples/gcn.gnn --emit=mlir --entry GCNConv -D in_dim=1433 -D out_dim=16

if ((fail != 0)); then
  exit 1
fi
