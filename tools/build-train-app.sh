#!/usr/bin/env bash
# Installs gnnc from a build tree as a CMake package and builds the
# out-of-tree training program dsl-examples/train (gnnc-train) against the
# installed package, the way any other project would use it:
#
#   tools/build-train-app.sh [BUILD_DIR [PREFIX [APP_BUILD_DIR]]]
#
# Defaults: build/ (configured and built by tools/build.sh), build/install,
# build/train. The program is APP_BUILD_DIR/gnnc-train. Extra flags for the
# app's compiler come from $GNNC_APP_CXXFLAGS (CI sets -Werror).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${1:-build}
prefix=${2:-build/install}
app=${3:-build/train}
jobs=${GNNC_JOBS:-2}

if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "build-train-app.sh: $build is not a configured build tree (run tools/build.sh first)" >&2
  exit 1
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

# 1. Install (every target of the build tree must be built: tools/build.sh does).
mkdir -p "$app"
if ! cmake --install "$build" --prefix "$prefix" >"$app/install.log" 2>&1; then
  cat "$app/install.log" >&2
  echo "build-train-app.sh: cmake --install $build failed" >&2
  exit 1
fi
echo "installed gnnc into $prefix ($(grep -c -E '^-- (Installing|Up-to-date)' "$app/install.log") files; log in $app/install.log)"

# 2. Configure and build the app against the installed package only. A tree
# configured with another generator is started afresh; -Ugnnc_DIR makes
# find_package look in this prefix again.
if [[ -f $app/CMakeCache.txt ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$app/CMakeCache.txt"; then
  rm -rf "$app/CMakeCache.txt" "$app/CMakeFiles"
fi
cmake -S dsl-examples/train -B "$app" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -Ugnnc_DIR \
  -DCMAKE_CXX_FLAGS="${GNNC_APP_CXXFLAGS:-}" >"$app/configure.log" 2>&1 || {
  cat "$app/configure.log" >&2
  echo "build-train-app.sh: configuring dsl-examples/train failed" >&2
  exit 1
}
grep -E '^-- Found (OpenMP|PkgConfig|BLAS)' "$app/configure.log" | sed 's/^/  /' || true
echo "  gnnc package: $(grep -E '^gnnc_DIR:' "$app/CMakeCache.txt" | cut -d= -f2-)"
cmake --build "$app" -j"$jobs"
echo "built $app/gnnc-train"
