#!/usr/bin/env bash
# Configures and builds gnnc.
#
#   tools/build.sh            Release build with gcc in build/ (build/bin/gnnc)
#   tools/build.sh asan       clang-19 ASan+UBSan build with the fuzzer in build-asan/
#
# The ASan+UBSan build compiles at -O1 with line tables only (what the
# sanitizers' reports need, in less time than -O2 -g) and leaves out
# gnnc-cuda-emu-tests (GNNC_EXEC_CUDA_EMU=OFF: the Release build runs the
# generated CUDA on the host emulation; the C++ printer's modules run here).
#
# Extra arguments after the mode go to the CMake configure step. Set
# GNNC_WERROR=ON in the environment to turn warnings into errors (CI does).
# GNNC_BUILD_TESTS=OFF builds gnnc, its tools and runtime libraries only
# (what `cmake --install` installs; tools/demo.sh does this); by default
# the unit tests, the lit suite's tools and everything else the tests need
# are built too, also in a tree configured with OFF before.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode=${1:-release}
[[ $# -gt 0 ]] && shift
jobs=${GNNC_JOBS:-2}
# Only touch GNNC_WERROR when asked, so that e.g. demo.sh after test.sh does
# not flip the flag and rebuild everything.
werror=()
if [[ -n ${GNNC_WERROR:-} ]]; then
  werror=(-DGNNC_WERROR="$GNNC_WERROR")
fi
tests=(-DGNNC_BUILD_TESTS="${GNNC_BUILD_TESTS:-ON}")

# A build tree configured with another generator or compiler cannot be
# reconfigured in place; start it afresh.
fresh_if_mismatch() {
  local dir=$1 compiler=$2 cache=$1/CMakeCache.txt
  [[ -f $cache ]] || return 0
  if ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache" ||
     ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=.*/${compiler}\$" "$cache"; then
    echo "build.sh: $dir was configured differently; recreating it"
    rm -rf "$dir"
  fi
}

case "$mode" in
  release)
    builddir=build
    fresh_if_mismatch "$builddir" g++
    CC=gcc CXX=g++ cmake -S . -B "$builddir" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release \
      "${werror[@]}" "${tests[@]}" \
      "$@" >/dev/null
    ;;
  asan)
    builddir=build-asan
    fresh_if_mismatch "$builddir" clang++-19
    CC=clang-19 CXX=clang++-19 cmake -S . -B "$builddir" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
      -DGNNC_EXEC_CUDA_EMU=OFF \
      -DGNNC_ENABLE_ASSERTIONS=ON \
      -DGNNC_SANITIZERS=address,undefined \
      -DGNNC_BUILD_FUZZER=ON \
      -DGNNC_ENABLE_CUDA=OFF \
      "${werror[@]}" "${tests[@]}" \
      "$@" >/dev/null
    ;;
  *)
    echo "usage: $0 [release|asan] [cmake args...]" >&2
    exit 2
    ;;
esac

cmake --build "$builddir" -j"$jobs"
