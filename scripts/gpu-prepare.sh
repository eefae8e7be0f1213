#!/usr/bin/env bash
# Builds the CUDA-enabled `cuzk-gpu` binary (and the GPU test binaries) here (CPU-only machine)
# and stages what the GPU machine needs in .gpu-carry/ (git-ignored through .git/info/exclude): the stripped binary and
# the 2 KiB sector fixture's C1 (the 1.1 GB params are regenerated there by scripts/gpu-run.sh).
# Then: device run with carry [".gpu-carry"] and command "scripts/gpu-run.sh".
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${NVCC:-}" ] && [ -z "${CUDA_PATH:-}" ] && ! command -v nvcc >/dev/null; then
  export CUDA_PATH="$(scripts/install-cuda-toolchain.sh)"
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/var/tmp/cuzk-target}
cargo build --release --features cuda,tools --bin cuzk-gpu --bin cuzk-bench
# (git-path: .git is a file in a linked worktree)
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")" .gpu-carry/fixtures
grep -qx '/.gpu-carry/' "$exclude" 2>/dev/null || echo '/.gpu-carry/' >> "$exclude"
strip -o .gpu-carry/cuzk-gpu "$CARGO_TARGET_DIR/release/cuzk-gpu"
# The ballast that stands in for a smaller card (stage vram-P-B).
"${NVCC:-$CUDA_PATH/bin/nvcc}" -O2 -arch=sm_90 -cudart static tools/ballast.cu -o .gpu-carry/ballast
# cuzk-bench with the CUDA backend (stages kinds, synth-shaped-P).
strip -o .gpu-carry/cuzk-bench "$CARGO_TARGET_DIR/release/cuzk-bench"
# A test binary's path: test_exe FEATURES TEST.
test_exe() {
  cargo test --release --features "$1" --test "$2" --no-run --message-format=json | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"): print(m["executable"])' "$2"
}
# The GPU fault-injection test (feature cuda-fault-injection: never in a release build) and the
# identity test (stage identity-test).
strip -o .gpu-carry/gpu-faults "$(test_exe cuda-fault-injection gpu_faults)"
strip -o .gpu-carry/gpu-identity "$(test_exe cuda gpu_identity)"
# The real 512 MiB C2 (stage porep-512mib), when its sector fixture exists here.
strip -o .gpu-carry/porep-512mib "$(test_exe cuda porep_512mib)"
# Stage `installed`: the library `make install` builds (all architectures: minutes) and the C
# example linked against it. Only with GPU_PREPARE_INSTALL=1.
if [ "${GPU_PREPARE_INSTALL:-0}" = 1 ]; then
  prefix=$(mktemp -d)
  make --no-print-directory install PREFIX="$prefix"
  mkdir -p .gpu-carry/install/lib
  strip -o .gpu-carry/install/lib/libcuzk.so.1 "$(readlink -f "$prefix/lib/libcuzk.so.1")"
  cc -std=c11 -O2 -I"$prefix/include" examples/c/prove.c -o .gpu-carry/install/prove -L"$prefix/lib" -lcuzk
  rm -rf "$prefix"
fi
fix=${CUZK_FIXTURES_DIR:-/var/tmp/cuzk-fixtures}
# Each finished sector fixture's C1 and description (not a seal in progress).
for d in "$fix"/sectors/*/; do
  [ -f "$d/sector.json" ] || continue
  mkdir -p ".gpu-carry/fixtures/sectors/$(basename "$d")"
  cp "$d/sector.json" "$d/c1.json" ".gpu-carry/fixtures/sectors/$(basename "$d")/"
done
# The kind fixtures (sealed 2 KiB sectors, vanilla proofs: stages kinds*), when made here.
if [ -d "$fix/kinds" ]; then cp -r "$fix/kinds" .gpu-carry/fixtures/; fi
.gpu-carry/cuzk-gpu probe
# The carry limit is 64 MiB: CUZK_GPU_GZIP=1 gzips the binaries (gpu-run.sh unpacks them).
if [ "${CUZK_GPU_GZIP:-0}" = 1 ]; then
  for b in .gpu-carry/*; do case $b in *.gz) continue ;; esac; [ -f "$b" ] && [ -x "$b" ] && gzip -9f "$b"; done
fi
du -sh .gpu-carry
