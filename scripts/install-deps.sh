#!/usr/bin/env bash
# Installs the Debian 12 packages FastKernels builds, tests and runs with (as root,
# or with sudo). Only missing packages are installed; safe to run again.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libopenmpi-dev openmpi-bin
  slurm-wlm munge libpmix-dev
  libhdf5-dev libhdf5-openmpi-dev hdf5-tools
  libyaml-cpp-dev libboost-dev libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libopenblas-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-16 libclang-rt-16-dev llvm
  python3 python3-h5py python3-numpy
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
