#!/usr/bin/env bash
# Installs gnnc's build and test dependencies (Debian bookworm). Idempotent:
# when every package is already installed, apt is not touched at all.
#
#   tools/install-deps.sh          the build and test dependencies
#   tools/install-deps.sh bench    those, and what tools/bench needs besides:
#                                  Debian's PyTorch (CPU) with NumPy/SciPy,
#                                  matplotlib for the plots, the Python
#                                  dependencies of PyG and DGL (which tools/bench
#                                  installs from PyPI into build/bench-pydeps),
#                                  and perf for the profiles
set -euo pipefail

PACKAGES=(
  g++
  cmake
  ninja-build
  python3
  git
  llvm-19-dev
  llvm-19-tools
  libmlir-19-dev
  mlir-19-tools
  clang-19
  libclang-19-dev
  libclang-rt-19-dev
  libfmt-dev
  libgtest-dev
  libopenblas-dev
  zlib1g-dev
  libopenmpi-dev
  openmpi-bin
  iproute2
  util-linux
  # ctest html.browser and tools/html-screenshot.sh: gnnc's HTML view in
  # headless Chromium through Selenium (for /usr/bin/python3)
  chromium
  chromium-driver
  python3-selenium
  # gnnc.torch (python/, tools/test-python.sh): Debian's PyTorch, its C++
  # headers and pybind11 for the extension, a venv to pip-install into
  python3-torch
  python3-numpy
  libtorch-dev
  pybind11-dev
  python3-dev
  python3-venv
  python3-setuptools
  python3-pip
)

if [[ ${1:-} == bench ]]; then
  PACKAGES+=(
    python3-torch
    python3-numpy
    python3-scipy
    python3-matplotlib
    python3-jinja2
    python3-tqdm
    python3-pyparsing
    python3-requests
    python3-psutil
    python3-networkx
    python3-packaging
    python3-pip
    linux-perf
  )
elif [[ $# -gt 0 ]]; then
  echo "usage: $0 [bench]" >&2
  exit 2
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null |
      grep -q '^install ok installed$'; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  SUDO=(sudo)
fi
APT=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq -o=Dpkg::Use-Pty=0)
"${APT[@]}" update
"${APT[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
