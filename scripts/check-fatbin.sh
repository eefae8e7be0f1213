#!/usr/bin/env bash
# Checks that a CUDA build carries SASS for every GPU architecture storage providers run
# (sm_80 A100, sm_86 RTX 30xx, sm_89 RTX 40xx / L40, sm_90 H100 / H200, sm_120 RTX 50xx) plus
# PTX for newer ones, by listing the binary's fat binary with cuobjdump (from PyPI, into the
# toolchain's venv: no GPU needed). Usage: scripts/check-fatbin.sh BINARY [ARCH ...]
set -euo pipefail
bin=$1; shift
want=("$@"); [ ${#want[@]} -eq 0 ] && want=(80 86 89 90 120)
cd "$(dirname "$0")/.."
venv=.venv-cuda
[ -x "$venv/bin/python" ] || scripts/install-cuda-toolchain.sh > /dev/null
# cuobjdump 13.0 is not on PyPI; 13.2 reads 13.0 fat binaries.
obj=$(ls "$venv"/lib/python3.*/site-packages/nvidia/cu13/bin/cuobjdump 2>/dev/null | head -n1 || true)
if [ -z "$obj" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps nvidia-cuda-cuobjdump==13.2.51 >&2
  obj=$(ls "$venv"/lib/python3.*/site-packages/nvidia/cu13/bin/cuobjdump | head -n1)
fi
elf=$("$obj" --list-elf "$bin")
ptx=$("$obj" --list-ptx "$bin")
fail=0
for a in "${want[@]}"; do
  if grep -q "sm_$a\b" <<<"$elf"; then echo "sm_$a: SASS present"; else echo "sm_$a: SASS MISSING"; fail=1; fi
done
newest=$(printf '%s\n' "${want[@]}" | sort -n | tail -1)
if grep -q "sm_$newest\b" <<<"$ptx"; then echo "compute_$newest: PTX present"; else echo "compute_$newest: PTX MISSING"; fail=1; fi
exit $fail
