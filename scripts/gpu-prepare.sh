#!/usr/bin/env bash
# Builds the CUDA-enabled `cuzk-gpu` binary here (CPU-only machine) and stages what the GPU
# machine needs in .gpu-carry/ (git-ignored through .git/info/exclude): the stripped binary and
# the 2 KiB sector fixture's C1 (the 1.1 GB params are regenerated there by scripts/gpu-run.sh).
# Then: device run with carry [".gpu-carry"] and command "scripts/gpu-run.sh".
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${NVCC:-}" ] && [ -z "${CUDA_PATH:-}" ] && ! command -v nvcc >/dev/null; then
  export CUDA_PATH="$(scripts/install-cuda-toolchain.sh)"
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/var/tmp/cuzk-target}
cargo build --release --features cuda,tools --bin cuzk-gpu
# (git-path: .git is a file in a linked worktree)
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")" .gpu-carry/fixtures
grep -qx '/.gpu-carry/' "$exclude" 2>/dev/null || echo '/.gpu-carry/' >> "$exclude"
strip -o .gpu-carry/cuzk-gpu "$CARGO_TARGET_DIR/release/cuzk-gpu"
# The GPU fault-injection test (feature cuda-fault-injection: never in a release build).
faults=$(cargo test --release --features cuda-fault-injection --test gpu_faults --no-run --message-format=json \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "gpu_faults" and m.get("executable"): print(m["executable"])')
strip -o .gpu-carry/gpu-faults "$faults"
fix=${CUZK_FIXTURES_DIR:-/var/tmp/cuzk-fixtures}
if [ -d "$fix/sectors" ]; then cp -r "$fix/sectors" .gpu-carry/fixtures/; fi
.gpu-carry/cuzk-gpu probe
du -sh .gpu-carry
