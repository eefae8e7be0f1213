#!/usr/bin/env bash
# The Go bindings' tests, built against the installed copy (pkg-config), with the race
# detector and cgocheck2 (every store of a Go pointer into C memory is checked). Proving tests
# need the 2 KiB fixtures; CUZK_REQUIRE_FIXTURES=1 makes their absence a failure, not a skip.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_work
[[ -f $PREFIX/lib/pkgconfig/cuzk.pc ]] || "$REPO/tests/scripts/install.sh"
use_prefix
cd "$REPO/go-bindings"
GOEXPERIMENT=cgocheck2 CUZK_REQUIRE_FIXTURES=1 "$GO" test -race -count=1 -timeout 25m -v ./...
echo "go-test: ok"
