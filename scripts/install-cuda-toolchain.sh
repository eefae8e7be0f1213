#!/usr/bin/env bash
# Installs the CUDA 13.0 compiler (nvcc, headers, static cudart) on a CPU-only machine from
# PyPI, so the `cuda` feature can be compiled anywhere (CI included). Every package is pinned
# to the 13.0 release: unpinned companions pull 13.5 and ptxas fails ("Unsupported .version").
# Usage: scripts/install-cuda-toolchain.sh [VENV_DIR]   (default .venv-cuda)
# Prints the toolkit root (use it as CUDA_PATH; nvcc is $CUDA_PATH/bin/nvcc).
set -euo pipefail
venv="${1:-$(cd "$(dirname "$0")/.." && pwd)/.venv-cuda}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" 2>/dev/null || {
    # Debian's python3 ships venv separately.
    (apt-get update -qq && apt-get install -y -qq python3-venv) >&2
    python3 -m venv "$venv"
  }
fi
cu() { ls -d "$venv"/lib/python3.*/site-packages/nvidia/cu13 2>/dev/null | head -n1; }
if [ -z "$(cu)" ] || [ ! -x "$(cu)/bin/nvcc" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 \
    nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 >&2
fi
root="$(cu)"
# nvcc's own link step and Rust CUDA build scripts expect the classic toolkit layout.
[ -e "$root/lib64" ] || ln -s lib "$root/lib64"
mkdir -p "$root/targets/x86_64-linux"
[ -e "$root/targets/x86_64-linux/lib" ] || ln -s ../../lib "$root/targets/x86_64-linux/lib"
[ -e "$root/targets/x86_64-linux/include" ] || ln -s ../../include "$root/targets/x86_64-linux/include"
# Some wheels ship only the versioned static cudart name.
[ -e "$root/lib/libcudart_static.a" ] || { echo "libcudart_static.a missing in $root/lib" >&2; exit 1; }
"$root/bin/nvcc" --version >&2
echo "$root"
