#!/usr/bin/env bash
# Packaging test: `make install` into a temp prefix, then build every consumer against that
# installed copy through pkg-config only (never the build tree):
#   - the C example with -Wall -Wextra -Werror under AddressSanitizer, linked to libcuzk.so;
#   - the C example linked statically to libcuzk.a with `pkg-config --static` (Libs.private);
#   - the Go module and the Go example (cgo's `#cgo pkg-config: cuzk`);
#   - packaging: SONAME libcuzk.so.<abi> with its symlinks, a static library whose only global
#     symbols are the C ABI, and the static C example linked together with a second Rust static
#     library that carries its own blst (tests/colink, a stand-in for filecoin-ffi's libfilcrypto).
# The binaries are left in $CUZK_TEST_WORK/bin for examples.sh.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_work
need_pkg_config

log "make install PREFIX=$PREFIX"
"$MAKE" -C "$REPO" --no-print-directory install PREFIX="$PREFIX"
abi=$(sed -n 's/^#define CUZK_ABI_VERSION \([0-9]*\).*/\1/p' "$REPO/include/cuzk.h")
version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$REPO/Cargo.toml" | head -n1)
[[ -n $abi && -n $version ]] || fail "cannot read CUZK_ABI_VERSION or the crate version"
SONAME=libcuzk.so.$abi
for f in include/cuzk.h lib/libcuzk.so lib/$SONAME lib/$SONAME.$version lib/libcuzk.a lib/pkgconfig/cuzk.pc; do
    [[ -s $PREFIX/$f ]] || fail "make install did not install $f"
done
[[ $(readlink "$PREFIX/lib/libcuzk.so") == "$SONAME" && $(readlink "$PREFIX/lib/$SONAME") == "$SONAME.$version" ]] \
    || fail "symlinks: libcuzk.so -> $(readlink "$PREFIX/lib/libcuzk.so"), $SONAME -> $(readlink "$PREFIX/lib/$SONAME")"
[[ ! -L $PREFIX/lib/$SONAME.$version ]] || fail "$SONAME.$version is a link, not the library"
soname=$(readelf -dW "$PREFIX/lib/$SONAME.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == "$SONAME" ]] || fail "SONAME is '$soname', want $SONAME (CUZK_ABI_VERSION $abi)"
# The static library exposes exactly what the shared one exports (the C ABI); nothing of the
# Rust runtime, blst or the CUDA runtime can clash with another library's copy.
exports=$(nm -D --defined-only "$PREFIX/lib/libcuzk.so" | awk '{print $3}' | sort -u)
globals=$(readelf -sW "$PREFIX/lib/libcuzk.a" | awk '($5 == "GLOBAL" || $5 == "WEAK") && $7 != "UND" {print $8}' | sort -u)
[[ $exports == "$globals" ]] || { diff <(echo "$exports") <(echo "$globals") >&2; fail "libcuzk.a defines global symbols beyond the C ABI"; }
[[ $(grep -c . <<<"$exports") -ge 20 && $exports != *blst* ]] || fail "unexpected exports: $exports"
echo "SONAME $SONAME, symlinks, $(grep -c . <<<"$exports") global symbols (the C ABI) in both libraries"
# The shipped library is the prover only: the development tools and the upstream reference
# paths of the tests (feature `tools`) stay out.
contents=$(nm -C "$PREFIX/lib/libcuzk.a") || fail "nm libcuzk.a failed"
if grep -E 'cuzk::(fixtures|synth::toy|synth::upstream|prover::cuda::synthetic)::' <<<"$contents" | head -3 | grep .; then
    fail "the installed library contains development tools (feature tools)"
fi
# Nor the daemon's async runtime and gRPC stack: they live in bin/cuzk-daemon alone.
if grep -E '\b(tokio|tonic|hyper|prost|axum|h2)::' <<<"$contents" | head -3 | grep .; then
    fail "the installed library links the daemon's async runtime or gRPC stack"
fi
[[ -x $PREFIX/bin/cuzk-daemon ]] || fail "make install did not install bin/cuzk-daemon"
"$PREFIX/bin/cuzk-daemon" --version || fail "the installed cuzk-daemon does not run"
grep -q 'cuzk::engine::' <<<"$contents" || fail "nm -C libcuzk.a shows no cuzk::engine code (the check above would prove nothing)"
cmp -s "$REPO/include/cuzk.h" "$PREFIX/include/cuzk.h" || fail "installed header differs from include/cuzk.h"
cat "$PREFIX/lib/pkgconfig/cuzk.pc"

use_prefix
want_version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$REPO/Cargo.toml" | head -n1)
[[ $(pkg-config --modversion cuzk) == "$want_version" ]] || fail "pkg-config version $(pkg-config --modversion cuzk), want $want_version"
# (echo $(...) drops the trailing blank pkg-config prints)
# shellcheck disable=SC2046,SC2116
[[ $(echo $(pkg-config --cflags cuzk)) == "-I$PREFIX/include" ]] || fail "cflags: $(pkg-config --cflags cuzk)"
# shellcheck disable=SC2046,SC2116
[[ $(echo $(pkg-config --libs cuzk)) == "-L$PREFIX/lib -lcuzk" ]] || fail "libs: $(pkg-config --libs cuzk)"
[[ $(pkg-config --static --libs cuzk) == *-lpthread* ]] || fail "static libs lack the native libraries: $(pkg-config --static --libs cuzk)"

CFLAGS_STRICT=(-std=c11 -Wall -Wextra -Werror -pedantic -g)
SRC=$REPO/examples/c/prove.c

log "C example, AddressSanitizer, shared library"
# shellcheck disable=SC2046
"$CC" "${CFLAGS_STRICT[@]}" -fsanitize=address -fno-omit-frame-pointer $(pkg-config --cflags cuzk) \
    "$SRC" -o "$BIN/prove-asan" $(pkg-config --libs cuzk)
libs=$(loaded_libs "$BIN/prove-asan")
[[ $libs == *"$SONAME => $PREFIX/lib/$SONAME "* ]] || { echo "$libs"; fail "prove-asan does not load the installed $SONAME"; }

log "C example, static library (pkg-config --static)"
# -l:libcuzk.a picks the archive although libcuzk.so sits next to it; everything else it needs
# must come from Libs.private.
# shellcheck disable=SC2046
"$CC" "${CFLAGS_STRICT[@]}" $(pkg-config --cflags cuzk) "$SRC" -o "$BIN/prove-static" \
    $(pkg-config --static --libs cuzk | sed 's/-lcuzk\b/-l:libcuzk.a/')
libs=$(loaded_libs "$BIN/prove-static")
if [[ $libs == *libcuzk* ]]; then echo "$libs"; fail "prove-static links libcuzk dynamically"; fi
set +e; "$BIN/prove-static" >/dev/null 2>&1; rc=$?; set -e
[[ $rc -eq 2 ]] || fail "prove-static without arguments: exit $rc, want 2 (usage)"

log "C example, static, in one program with another Rust static library carrying blst"
# tests/colink: its own Rust runtime and blst, like filecoin-ffi's libfilcrypto. Linked after
# libcuzk.a it must still bind to its own blst (its BLS signature check runs first), and cuzk
# must prove (examples.sh runs it).
"$CARGO" build --release --quiet --manifest-path "$REPO/tests/colink/Cargo.toml" --target-dir "$CUZK_TEST_WORK/colink-target"
colink=$CUZK_TEST_WORK/colink-target/release/libcuzk_colink.a
"$CC" "${CFLAGS_STRICT[@]}" -Dmain=cuzk_example_main $(pkg-config --cflags cuzk) -c "$SRC" -o "$CUZK_TEST_WORK/prove-example.o"
"$CC" "${CFLAGS_STRICT[@]}" -c "$REPO/tests/colink/main.c" -o "$CUZK_TEST_WORK/colink-main.o"
# shellcheck disable=SC2046
"$CC" "$CUZK_TEST_WORK/colink-main.o" "$CUZK_TEST_WORK/prove-example.o" -o "$BIN/prove-colink" \
    $(pkg-config --static --libs cuzk | sed 's/-lcuzk\b/-l:libcuzk.a/') "$colink"
syms=$(nm "$BIN/prove-colink") || fail "nm prove-colink failed"
grep -q ' T blst_core_verify_pk_in_g1$' <<<"$syms" || fail "prove-colink lacks the other library's (global) blst"
set +e; "$BIN/prove-colink" >/dev/null 2>&1; rc=$?; set -e
[[ $rc -eq 2 ]] || fail "prove-colink without arguments: exit $rc, want 2 (usage; 1 = the other library's blst failed)"

log "Go module and Go example against the installed copy"
(cd "$REPO/go-bindings" && "$GO" vet ./... && "$GO" build ./...)
(cd "$REPO/examples/go" && "$GO" vet ./... && "$GO" build -o "$BIN/prove-go" ./prove)
libs=$(loaded_libs "$BIN/prove-go")
[[ $libs == *"$SONAME => $PREFIX/lib/$SONAME "* ]] || { echo "$libs"; fail "prove-go does not load the installed $SONAME"; }

log "Go module against the build tree (tag cuzk_buildtree, no pkg-config): link and check the ABI"
(
    go_cache_key "$REPO/include/cuzk.h" "$CARGO_TARGET_DIR/release/libcuzk.so"
    cd "$REPO/go-bindings" && env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH PKG_CONFIG=/bin/false \
        CGO_LDFLAGS="-L$CARGO_TARGET_DIR/release -Wl,-rpath,$CARGO_TARGET_DIR/release" \
        "$GO" test -tags cuzk_buildtree -count=1 -run 'TestVersionAndABI|TestErrorMatching' .
)

echo "install: ok"
