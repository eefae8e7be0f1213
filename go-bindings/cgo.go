package cuzk

// Every #cgo directive of the package lives in this file.
//
// Default: find the installed library through pkg-config (`make install PREFIX=...` writes
// <prefix>/lib/pkgconfig/cuzk.pc; point PKG_CONFIG_PATH at it when the prefix is not a system
// one). The .pc names the shared library; at run time the loader must find libcuzk.so
// (system prefix, LD_LIBRARY_PATH, or an rpath added through CGO_LDFLAGS).
//
// Build tag `cuzk_buildtree`: skip pkg-config and use the header of this checkout and the
// library of a cargo build tree. The default cargo location (<repo>/target/release) is built
// in; for another target dir (the Makefile uses /var/tmp/cuzk-target) add it through the
// environment, e.g.
//
//	CGO_LDFLAGS="-L/var/tmp/cuzk-target/release -Wl,-rpath,/var/tmp/cuzk-target/release" \
//	    go build -tags cuzk_buildtree ./...
//
// Go's build cache does not notice a changed cuzk.h or a different pkg-config answer (it
// keys cgo packages by their own files and the CGO_* variables): after installing another
// libcuzk, run `go clean -cache` or change CGO_CFLAGS (tests/scripts/lib.sh adds a
// -DCUZK_BUILD_ID=<hash of the installed files>).

/*
#cgo !cuzk_buildtree pkg-config: cuzk
#cgo cuzk_buildtree CFLAGS: -I${SRCDIR}/../include
#cgo cuzk_buildtree LDFLAGS: -L${SRCDIR}/../target/release -Wl,-rpath,${SRCDIR}/../target/release -lcuzk
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"
