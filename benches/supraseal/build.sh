#!/usr/bin/env bash
# Builds the supraseal-c2 peer binary on a CPU-only machine (benchmarks only).
# Its neptune / rust-gpu-tools dependencies link the CUDA *driver* (-lcuda), which no package
# reachable here ships: we link against a stub defining every cu* symbol cuda-driver-sys names;
# at run time the GPU machine's real libcuda.so.1 is loaded instead (same soname).
# Output: $OUT_DIR/supraseal-c2-bench (default ../../.gpu-carry). Clean build: ~16+ min on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT_DIR:-$here/../../.gpu-carry}"
cuda_root="$("$here/../../scripts/install-cuda-toolchain.sh")"
stub="${TMPDIR:-/tmp}/cuzk-libcuda-stub"
mkdir -p "$stub" "$out"
drv="$(ls -d "$HOME"/.cargo/registry/src/*/cuda-driver-sys-0.3.0 2>/dev/null | head -n1 || true)"
if [ -z "$drv" ]; then (cd "$here" && cargo fetch >/dev/null); drv="$(ls -d "$HOME"/.cargo/registry/src/*/cuda-driver-sys-0.3.0 | head -n1)"; fi
grep -ho 'pub fn cu[A-Za-z0-9_]*' "$drv"/src/*.rs | sort -u | sed 's/pub fn \(.*\)/int \1(void) { return 999; }/' > "$stub/stub.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stub/libcuda.so.1" "$stub/stub.c"
ln -sf libcuda.so.1 "$stub/libcuda.so"
export LIBRARY_PATH="$stub${LIBRARY_PATH:+:$LIBRARY_PATH}"
export PATH="$cuda_root/bin:$PATH" CUDA_PATH="$cuda_root" NVCC="$cuda_root/bin/nvcc"
export NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=sm_90"
export CARGO_TARGET_DIR="${SUPRASEAL_TARGET_DIR:-/var/tmp/supraseal-target}"
(cd "$here" && cargo build --release)
cp "$CARGO_TARGET_DIR/release/supraseal-c2-bench" "$out/"
echo "$out/supraseal-c2-bench"
