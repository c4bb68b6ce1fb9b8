#!/usr/bin/env bash
# Installs gnnc's build and test dependencies (Debian bookworm). Idempotent:
# when every package is already installed, apt is not touched at all.
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
)

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
