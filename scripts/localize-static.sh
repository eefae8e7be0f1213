#!/usr/bin/env bash
# localize-static.sh IN.a SHARED.so OUT.a — libcuzk.a as one relocatable object whose only
# global definitions are the C ABI (exactly what SHARED.so exports). Everything else inside —
# the Rust runtime, blst, sppark, cudart — becomes local, so a program that also links another
# Rust static library carrying its own copies (filecoin-ffi's libfilcrypto carries blst) gets
# neither duplicate-symbol failures nor calls silently bound to the other copy.
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 IN.a SHARED.so OUT.a" >&2; exit 2; }
in=$1 shared=$2 out=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-localize.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$shared" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u > "$tmp/keep"
grep -qx cuzk_abi_version "$tmp/keep" || { echo "$0: $shared exports no cuzk_abi_version" >&2; exit 1; }
ld -r --whole-archive "$in" -o "$tmp/cuzk.o"
# COMDAT groups (.group: e.g. Rust's DW.ref.rust_eh_personality, C++ inline functions) would
# be deduplicated against the other library's copies by name, and ours, now local, would leave
# its references undefined: ungrouped they are ordinary private sections (ld -r has already
# merged our own duplicates). .llvm_addrsig lists symbol indices that objcopy renumbers (it only
# serves lld's ICF); the merged embedded bitcode (.llvmbc, .llvmcmd) is no longer one valid
# module and makes binutils' LLVM plugin abort. None of these is code.
objcopy --remove-section=.group --remove-section=.llvm_addrsig --remove-section=.llvmbc --remove-section=.llvmcmd \
    --keep-global-symbols="$tmp/keep" "$tmp/cuzk.o"
readelf -sW "$tmp/cuzk.o" | awk '($5 == "GLOBAL" || $5 == "WEAK") && $7 != "UND" {print $8}' | sort -u > "$tmp/global"
cmp -s "$tmp/keep" "$tmp/global" || { echo "$0: global symbols left:"; diff "$tmp/keep" "$tmp/global"; exit 1; } >&2
rm -f "$out.tmp"
ar rcs "$out.tmp" "$tmp/cuzk.o"
mv "$out.tmp" "$out"
