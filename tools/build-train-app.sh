#!/usr/bin/env bash
# Installs gnnc from a build tree as a CMake package and builds the two
# out-of-tree training programs against the installed package, the way any
# other project would use it:
#
#   tools/build-train-app.sh [BUILD_DIR [PREFIX [APP_BUILD_DIR [EXAMPLE_BUILD_DIR]]]]
#
#   tools/benchmarks/train  gnnc-train, the training harness (GCN and GAT on
#                           Cora and Citeseer, seeds, CUDA): APP_BUILD_DIR
#   dsl-examples/train      train-gcn, the minimal program (GCN on Cora):
#                           EXAMPLE_BUILD_DIR
#   dsl-examples/cxx/app    cxx-app, a layer written in C++ and compiled by
#                           gnnc-cxx (gnnc_add_cxx_sources): cxx-app next
#                           to EXAMPLE_BUILD_DIR
#
# Defaults: build/ (configured and built by tools/build.sh), build/install,
# build/train, and train-gcn next to APP_BUILD_DIR (build/train-gcn). The
# programs are APP_BUILD_DIR/gnnc-train and EXAMPLE_BUILD_DIR/train-gcn.
# Extra flags for the programs' compiler come from $GNNC_APP_CXXFLAGS (CI
# sets -Werror). GNNC_TRAIN_APPS=example (or harness, or cxx) builds only
# that one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${1:-build}
prefix=${2:-build/install}
app=${3:-build/train}
example=${4:-$(dirname "$app")/train-gcn}
jobs=${GNNC_JOBS:-2}

if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "build-train-app.sh: $build is not a configured build tree (run tools/build.sh first)" >&2
  exit 1
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

# 1. Install (every installed target of the build tree must be built:
# tools/build.sh does).
mkdir -p "$app"
if ! cmake --install "$build" --prefix "$prefix" >"$app/install.log" 2>&1; then
  cat "$app/install.log" >&2
  echo "build-train-app.sh: cmake --install $build failed" >&2
  exit 1
fi
echo "installed gnnc into $prefix ($(grep -c -E '^-- (Installing|Up-to-date)' "$app/install.log") files; log in $app/install.log)"

# 2. Configure and build each program against the installed package only. A
# tree configured with another generator or from another source folder is
# started afresh; -Ugnnc_DIR makes find_package look in this prefix again.
build_app() {
  local src=$1 dir=$2 program=$3 cache=$2/CMakeCache.txt
  if [[ -f $cache ]] &&
     { ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache" ||
       ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$(pwd -P)/$src" "$cache"; }; then
    rm -rf "$cache" "$dir/CMakeFiles"
  fi
  mkdir -p "$dir"
  cmake -S "$src" -B "$dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" -Ugnnc_DIR \
    -DCMAKE_CXX_FLAGS="${GNNC_APP_CXXFLAGS:-}" >"$dir/configure.log" 2>&1 || {
    cat "$dir/configure.log" >&2
    echo "build-train-app.sh: configuring $src failed" >&2
    exit 1
  }
  grep -E '^-- Found (OpenMP|PkgConfig|BLAS)' "$dir/configure.log" | sed 's/^/  /' || true
  echo "  gnnc package: $(grep -E '^gnnc_DIR:' "$cache" | cut -d= -f2-)"
  cmake --build "$dir" -j"$jobs"
  echo "built $dir/$program"
}
apps=${GNNC_TRAIN_APPS:-harness example cxx}
if [[ " $apps " == *" harness "* ]]; then
  build_app tools/benchmarks/train "$app" gnnc-train
fi
if [[ " $apps " == *" example "* ]]; then
  build_app dsl-examples/train "$example" train-gcn
fi
if [[ " $apps " == *" cxx "* ]]; then
  build_app dsl-examples/cxx/app "$(dirname "$example")/cxx-app" cxx-app
fi
