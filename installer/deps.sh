#!/usr/bin/env bash
# Installs the Debian 12 packages Kairos needs to build, test and run.
# Idempotent and quick when everything is present: dpkg-query decides what is
# missing, and apt-get runs only for those packages.
#   installer/deps.sh            install what is missing
#   installer/deps.sh --list     print the package list and exit
#   installer/deps.sh --check    exit 1 (listing them) if any are missing
#   installer/deps.sh --gpu      only what the gpu preset needs on a GPU machine that
#                                has CUDA and PyTorch (README, "On an NVIDIA GPU")
set -euo pipefail

# One line per need, so a later room adds its packages in one place.
PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config git
  # core: JSON, CLI, least squares (Eigen), TOML (a RunSpec's and a sweep's files), and
  # simdjson (reading large native workloads)
  nlohmann-json3-dev libcli11-dev libeigen3-dev libtomlplusplus-dev libsimdjson-dev
  # the store (SQLite, with its shell for inspecting a database)
  libsqlite3-dev sqlite3
  # fitted models: bounded nonlinear least squares (Ceres) and XGBoost (its CMake config
  # needs the xgboost binary package)
  libceres-dev libxgboost-dev xgboost
  # the live engine (gpu/): libtorch on the CPU (CUDA builds use PyTorch's own libtorch)
  libtorch-dev
  # Qt 6 (Qt Test runs every suite; the GUI uses widgets and SVG)
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libgl-dev
  # charts (KV memory, CDFs, TUF curves) in views/
  libqcustomplot-dev
  # benchmarks (tests/benchmarks) and the fuzz preset (clang's libFuzzer runtime)
  libbenchmark-dev clang libclang-rt-14-dev
  # offscreen rendering and headless runs of the GUI
  fonts-dejavu-core xvfb xauth
  # packaging checks: the .desktop file and the AppStream metainfo validate
  desktop-file-utils appstream
  # sweeps beyond one machine (mpirun / srun kairos-cli sweep); optional at build time
  libopenmpi-dev openmpi-bin
  # looking at exported PDF reports (pdftoppm, pdfinfo)
  poppler-utils
  # the format gate (make format-check, in CI) and the tidy preset
  clang-format clang-tidy
)

# The gpu preset: a compiler, CMake, Ninja and the header-only libraries of the core.
GPU_PACKAGES=(
  build-essential cmake ninja-build
  nlohmann-json3-dev libcli11-dev libeigen3-dev libtomlplusplus-dev
)

case "${1:-}" in
  --list) printf '%s\n' "${PACKAGES[@]}"; exit 0 ;;
  --gpu) PACKAGES=("${GPU_PACKAGES[@]}"); shift ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "deps: missing: ${missing[*]}" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists only if they are absent or older than a day.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -1)" ]; then
  $SUDO apt-get update -qq
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "deps: done"
