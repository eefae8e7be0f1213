#!/usr/bin/env bash
# Checks what an installed libcuzk.so exports: the C ABI of include/cuzk.h and nothing else
# (no CUDA-side `cuzk_cuda_*` entry point, no Rust-internal symbol), and that the development
# tools' kernels (benchmarks, device ceiling, test-SRS generation: feature `tools`) are not in
# the library at all. Usage: scripts/check-exports.sh LIBRARY
set -euo pipefail
lib=$1
cd "$(dirname "$0")/.."
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u)
declared=$(grep -oE '\bcuzk_[a-z0-9_]+\(' include/cuzk.h | tr -d '(' | sort -u)
fail=0
while read -r sym; do
  [ -z "$sym" ] && continue
  if ! grep -qx "$sym" <<<"$declared"; then echo "exported but not in include/cuzk.h: $sym"; fail=1; fi
done < <(grep -E '^cuzk' <<<"$exported")
if grep -E '^cuzk_cuda_' <<<"$exported"; then echo "the CUDA backend's internal entry points are exported (above)"; fail=1; fi
# A tool's symbol anywhere in the binary (its dynamic or, unless stripped, its full symbol table).
tools='cuzk_cuda_(ceiling|msm_bench|ones_bench|fixed_base_g1)'
if { nm -D "$lib"; nm "$lib" 2>/dev/null || true; } | grep -E "$tools"; then
  echo "development tools are compiled into $lib (above)"; fail=1
fi
missing=$(comm -13 <(grep -E '^cuzk' <<<"$exported") <(echo "$declared"))
if [ -n "$missing" ]; then echo "declared in include/cuzk.h but not exported:"; echo "$missing"; fail=1; fi
[ $fail = 0 ] && echo "$lib: exports the $(wc -l <<<"$declared") functions of include/cuzk.h, no tool"
exit $fail
