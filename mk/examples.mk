# Examples, Go bindings and packaging (included by the top-level Makefile, which exports
# CARGO_TARGET_DIR and CUZK_FIXTURES_DIR).
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [CUZK_FEATURES=cuda]
#                     header, libcuzk.so.<abi>.<version> (SONAME libcuzk.so.<abi>) and its
#                     symlinks, libcuzk.a (only the C ABI global), cuzk.pc, bin/cuzk-daemon. With the CUDA
#                     backend by default (nvcc 13.0 from PyPI when none is found; the library
#                     proves on the CPU where no GPU is usable); CUZK_FEATURES= for CPU only.
#   make test-examples                            everything below, in order, on one temp prefix:
#     test-install        install into a temp prefix; build the C example (ASan and static)
#                         and the Go module + example against it through pkg-config only
#     test-example-programs  the C example under AddressSanitizer and the Go example prove the
#                         2 KiB fixture; every build verifies both proofs; bad input fails
#     test-go             go test ./... in go-bindings with GOEXPERIMENT=cgocheck2 and -race
#
# The scripts are in tests/scripts (test-examples.sh drives install.sh, examples.sh and
# go-test.sh); each target installs into its own temp prefix, removed afterwards.

CARGO_TARGET_DIR ?= /var/tmp/cuzk-target
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR    ?=
INSTALL    ?= install

# Cargo features of the installed library: the CUDA backend unless told otherwise
# (CUZK_FEATURES= builds the CPU-only library). They change what a static link needs, so they
# key the cached native-library list below.
CUZK_FEATURES    ?= cuda
CUZK_CARGO_FEATURES = $(if $(strip $(CUZK_FEATURES)),--features "$(CUZK_FEATURES)")
# With `cuda`: nvcc from NVCC, CUDA_PATH or PATH, else installed from PyPI (scripts/).
CUZK_NVCC_SETUP = $(if $(findstring cuda,$(CUZK_FEATURES)),if [ -z "$${NVCC:-}$${CUDA_PATH:-}" ] && ! command -v nvcc >/dev/null; then \
  CUDA_PATH="$$(scripts/install-cuda-toolchain.sh)" || exit 1; export CUDA_PATH; fi;)
CUZK_RELEASE_DIR := $(CARGO_TARGET_DIR)/release
CUZK_VERSION     := $(shell sed -n 's/^version *= *"\(.*\)"/\1/p' Cargo.toml | head -n1)
# The C ABI version (src/lib.rs) is the shared library's SONAME number (build.rs sets it).
CUZK_ABI         := $(shell sed -n 's/^pub const ABI_VERSION: u32 = \([0-9]*\);/\1/p' src/lib.rs)
CUZK_SONAME      := libcuzk.so.$(CUZK_ABI)
CUZK_REALNAME    := $(CUZK_SONAME).$(CUZK_VERSION)
# rustc's list of native libraries a program linking libcuzk.a statically also needs. Asking
# rustc for it (--print native-static-libs) changes the cuzk unit's fingerprint (the next
# plain build recompiles the crate once), so the answer is cached next to the build and asked
# again only when the build inputs change.
cuzk_empty :=
cuzk_space := $(cuzk_empty) $(cuzk_empty)
cuzk_comma := ,
cuzk_feature_key := $(or $(subst $(cuzk_space),+,$(strip $(subst $(cuzk_comma), ,$(CUZK_FEATURES)))),default)
CUZK_NATIVE_LIBS := $(CUZK_RELEASE_DIR)/cuzk-native-static-libs.$(cuzk_feature_key).txt

.PHONY: lib daemon install uninstall test-examples test-install test-example-programs test-go

## Build the C library (release; the bins are not needed to install). The SONAME link in the
## build tree lets programs linked against it there (-L target/release) load it.
lib:
	$(CUZK_NVCC_SETUP) $(CARGO) build --release --lib $(CUZK_CARGO_FEATURES)
	ln -sf libcuzk.so $(CUZK_RELEASE_DIR)/$(CUZK_SONAME)

## The gRPC proving daemon (daemon/), on the library built with the same features.
daemon:
	$(CUZK_NVCC_SETUP) $(CARGO) build --release -p cuzk-daemon $(CUZK_CARGO_FEATURES)

$(CUZK_NATIVE_LIBS): Cargo.toml Cargo.lock build.rs
	@mkdir -p $(CUZK_RELEASE_DIR)
	$(CUZK_NVCC_SETUP) $(CARGO) rustc --release --lib $(CUZK_CARGO_FEATURES) -- --print native-static-libs > $@.log 2>&1 \
	  || { cat $@.log >&2; exit 1; }
	sed -n 's/^note: native-static-libs: *//p' $@.log | tail -n1 > $@.tmp
	@test -s $@.tmp || { cat $@.log >&2; echo "rustc printed no native-static-libs" >&2; exit 1; }
	@mv $@.tmp $@
	@echo "native-static-libs: $$(cat $@)"

## Install header, shared and static library and a pkg-config file under $(DESTDIR)$(PREFIX).
## The static library is localised (scripts/localize-static.sh): only the C ABI is global.
install: $(CUZK_NATIVE_LIBS) lib daemon
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 755 $(CUZK_RELEASE_DIR)/cuzk-daemon $(DESTDIR)$(BINDIR)/cuzk-daemon
	$(INSTALL) -m 644 include/cuzk.h $(DESTDIR)$(INCLUDEDIR)/cuzk.h
	$(INSTALL) -m 755 $(CUZK_RELEASE_DIR)/libcuzk.so $(DESTDIR)$(LIBDIR)/$(CUZK_REALNAME)
	ln -sf $(CUZK_REALNAME) $(DESTDIR)$(LIBDIR)/$(CUZK_SONAME)
	ln -sf $(CUZK_SONAME) $(DESTDIR)$(LIBDIR)/libcuzk.so
	scripts/localize-static.sh $(CUZK_RELEASE_DIR)/libcuzk.a $(CUZK_RELEASE_DIR)/libcuzk.so $(DESTDIR)$(LIBDIR)/libcuzk.a.tmp
	mv $(DESTDIR)$(LIBDIR)/libcuzk.a.tmp $(DESTDIR)$(LIBDIR)/libcuzk.a
	chmod 644 $(DESTDIR)$(LIBDIR)/libcuzk.a
	@echo "writing $(DESTDIR)$(PKGCONFIGDIR)/cuzk.pc"
	@{ echo 'prefix=$(PREFIX)'; \
	  echo 'libdir=$(LIBDIR)'; \
	  echo 'includedir=$(INCLUDEDIR)'; \
	  echo; \
	  echo 'Name: cuzk'; \
	  echo 'Description: PoRep C2 (Groth16 over BLS12-381) proving library'; \
	  echo 'Version: $(CUZK_VERSION)'; \
	  echo 'Cflags: -I$${includedir}'; \
	  echo 'Libs: -L$${libdir} -lcuzk'; \
	  echo "Libs.private: $$(cat $(CUZK_NATIVE_LIBS))"; \
	} > $(DESTDIR)$(PKGCONFIGDIR)/cuzk.pc
	@echo "installed cuzk $(CUZK_VERSION) into $(DESTDIR)$(PREFIX)"

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/cuzk.h $(DESTDIR)$(LIBDIR)/libcuzk.so $(DESTDIR)$(LIBDIR)/$(CUZK_SONAME) \
	  $(DESTDIR)$(LIBDIR)/$(CUZK_REALNAME) $(DESTDIR)$(LIBDIR)/libcuzk.a \
	  $(DESTDIR)$(PKGCONFIGDIR)/cuzk.pc $(DESTDIR)$(BINDIR)/cuzk-daemon

# The scripts call `make install` themselves (into a temp prefix) and need the fixture tool.
# They test the CPU-only library unless CUZK_TEST_FEATURES says otherwise (make check-cuda
# installs the CUDA one).
CUZK_TEST_FEATURES ?=
CUZK_TEST_ENV = CARGO="$(CARGO)" MAKE="$(MAKE)" CARGO_TARGET_DIR="$(CARGO_TARGET_DIR)" \
  CUZK_FIXTURES_DIR="$(CUZK_FIXTURES_DIR)" CUZK_FIXTURE_BIN="$(CUZK_RELEASE_DIR)/cuzk-fixture" \
  CUZK_FEATURES="$(CUZK_TEST_FEATURES)"

.PHONY: examples-prereqs
examples-prereqs:
	$(CARGO) build --release --bin cuzk-fixture --features tools

test-examples: examples-prereqs
	$(CUZK_TEST_ENV) tests/scripts/test-examples.sh

test-install: examples-prereqs
	$(CUZK_TEST_ENV) tests/scripts/test-examples.sh install

test-example-programs: examples-prereqs
	$(CUZK_TEST_ENV) tests/scripts/test-examples.sh install examples

test-go: examples-prereqs
	$(CUZK_TEST_ENV) tests/scripts/test-examples.sh install go-test
