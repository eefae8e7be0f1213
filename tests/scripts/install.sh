#!/usr/bin/env bash
# Packaging test: `make install` into a temp prefix, then build every consumer against that
# installed copy through pkg-config only (never the build tree):
#   - the C example with -Wall -Wextra -Werror under AddressSanitizer, linked to libcuzk.so;
#   - the C example linked statically to libcuzk.a with `pkg-config --static` (Libs.private);
#   - the Go module and the Go example (cgo's `#cgo pkg-config: cuzk`).
# The binaries are left in $CUZK_TEST_WORK/bin for examples.sh.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_work
need_pkg_config

log "make install PREFIX=$PREFIX"
"$MAKE" -C "$REPO" --no-print-directory install PREFIX="$PREFIX"
for f in include/cuzk.h lib/libcuzk.so lib/libcuzk.a lib/pkgconfig/cuzk.pc; do
    [[ -s $PREFIX/$f ]] || fail "make install did not install $f"
done
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
[[ $libs == *"libcuzk.so => $PREFIX/lib/libcuzk.so "* ]] || { echo "$libs"; fail "prove-asan does not load the installed libcuzk.so"; }

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

log "Go module and Go example against the installed copy"
(cd "$REPO/go-bindings" && "$GO" vet ./... && "$GO" build ./...)
(cd "$REPO/examples/go" && "$GO" vet ./... && "$GO" build -o "$BIN/prove-go" ./prove)
libs=$(loaded_libs "$BIN/prove-go")
[[ $libs == *"libcuzk.so => $PREFIX/lib/libcuzk.so "* ]] || { echo "$libs"; fail "prove-go does not load the installed libcuzk.so"; }

log "Go module against the build tree (tag cuzk_buildtree, no pkg-config): link and check the ABI"
(
    go_cache_key "$REPO/include/cuzk.h" "$CARGO_TARGET_DIR/release/libcuzk.so"
    cd "$REPO/go-bindings" && env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH PKG_CONFIG=/bin/false \
        CGO_LDFLAGS="-L$CARGO_TARGET_DIR/release -Wl,-rpath,$CARGO_TARGET_DIR/release" \
        "$GO" test -tags cuzk_buildtree -count=1 -run 'TestVersionAndABI|TestErrorMatching' .
)

echo "install: ok"
