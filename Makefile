# cuzk — the two commands that matter: `make demo` (the main job) and `make test` (everything).
# Builds share one target dir outside the repo by default (release builds of filecoin-proofs
# take minutes; keep them). Fixtures are cached in $(CUZK_FIXTURES_DIR).

CARGO             ?= cargo
CARGO_TARGET_DIR  ?= /var/tmp/cuzk-target
CUZK_FIXTURES_DIR ?= /var/tmp/cuzk-fixtures
export CARGO_TARGET_DIR CUZK_FIXTURES_DIR

.PHONY: demo test header fixtures bench-p1 bench-p6 bench-synth bench-soak build clean-fixtures check-cuda

## Prove a real 2 KiB PoRep C2 (fixtures generated on first use) and print proof + timings.
demo:
	$(CARGO) run --release --features tools --bin cuzk-demo

## Every test: unit, ABI contract, header freshness, real 2 KiB C2 (CPU), bad input.
test: test-rust test-examples

.PHONY: test-rust test-512mib check-cc-sectors check-cc-witness check-cc-proofs check-kind-shapes
## Generated 8 MiB and 512 MiB sectors proved through the engine under generated test SRSes
## (made once under the fixtures dir), verified by filecoin-proofs' verify_seal (minutes each).
check-cc-proofs:
	$(CARGO) test --release --test cc_sector_proofs -- --ignored --nocapture
## At 32 and 64 GiB, one partition of a generated sector: its native witness satisfies every
## constraint of the recorded circuit; at 32 GiB the witness, a, b, c and densities equal
## upstream's synthesis (~4 min and up to ~18 GB on 2 cores; 64 GiB ~13 GB).
check-cc-witness:
	$(CARGO) test --release --test cc_sector_witness -- --ignored --nocapture --test-threads 1
## Committed-capacity C1 outputs and SnapDeals updates generated at 32 GiB and 64 GiB
## (`cuzk-fixture cc-sector`, `cc-update`), each checked by filecoin-proofs' vanilla verifier;
## prints the times (not in `make test`).
check-cc-sectors:
	$(CARGO) build --release --features tools --bin cuzk-fixture
	for p in StackedDrg32GiBV1_1 StackedDrg64GiBV1_1; do \
	  $(CARGO_TARGET_DIR)/release/cuzk-fixture cc-sector --proof $$p --seed 1 --out $${CC_SECTORS_DIR:-/var/tmp/cuzk-fixtures/cc-sectors}/$$p --verify || exit 1; \
	done
	for p in UpdateStackedDrg32GiBV1 UpdateStackedDrg64GiBV1; do \
	  $(CARGO_TARGET_DIR)/release/cuzk-fixture cc-update --proof $$p --seed 1 --out $${CC_SECTORS_DIR:-/var/tmp/cuzk-fixtures/cc-sectors}/$$p --verify || exit 1; \
	done
## The params-shape table's 32/64 GiB SnapDeals and 32 GiB WindowPoSt rows recounted from
## upstream's blank circuits (~4 min on 2 cores; the small rows are in `make test`).
check-kind-shapes:
	$(CARGO) test --release --test srs_shape -- --ignored --nocapture
## A real 512 MiB C2 (seal + params: ~30 min on 2 cores the first time, cached; not in `make test`).
test-512mib:
	$(CARGO) test --release --test porep_512mib -- --ignored --nocapture

test-rust:
	$(CARGO) test --release --no-fail-fast
	$(CARGO) test --release --no-fail-fast -p cuzk-daemon
	$(CARGO) test --release --manifest-path tools/cuzk-timeline/Cargo.toml

build:
	$(CARGO) build --release

## Compile the CUDA backend without a GPU (nvcc 13.0 from PyPI when none is found): `make
## install`'s default (CUDA) library into a temp prefix, checked to carry SASS for
## sm_80/86/89/90/120 and PTX, then the GPU tools and tests (which skip cleanly without a device).
## CI runs this so cuda/ cannot rot. Every distinct feature set recompiles cuda/ (its build
## script defines the tools and fault-injection code), so the tools and tests share one feature
## set, compiled for one architecture (sm_90; the library above proves every architecture builds).
CUDA_CHECK_FEATURES = cuda-fault-injection,tools
check-cuda:
	export CUDA_PATH="$${CUDA_PATH:-$$(scripts/install-cuda-toolchain.sh)}" && \
	prefix=$$(mktemp -d) && trap 'rm -rf "$$prefix"' EXIT && \
	$(MAKE) --no-print-directory install PREFIX="$$prefix" && \
	scripts/check-fatbin.sh "$$prefix"/lib/libcuzk.so && \
	scripts/check-exports.sh "$$prefix"/lib/libcuzk.so && \
	export CUZK_CUDA_ARCHS=90 && \
	$(CARGO) build --release --features $(CUDA_CHECK_FEATURES) --bins && \
	scripts/check-fatbin.sh $(CARGO_TARGET_DIR)/release/cuzk-gpu 90 && \
	$(CARGO) test --release --features $(CUDA_CHECK_FEATURES) --lib prover::cuda && \
	$(CARGO) test --release --features $(CUDA_CHECK_FEATURES) --test gpu_identity --test gpu_faults

## Regenerate include/cuzk.h from src/ffi.
header:
	CUZK_UPDATE_HEADER=1 $(CARGO) test --release --test header

## Generate (or find) the 2 KiB fixtures.
fixtures:
	$(CARGO) run --release --features tools --bin cuzk-fixture

## P1/P6: 2 KiB warm latency vs filecoin-proofs seal_commit_phase2, SRS load vs stock decode.
bench-p1:
	$(CARGO) run --release --features tools --bin cuzk-bench -- p1 --runs $${RUNS:-3}

## P6 alone: stock decode vs cuzk decode vs cuzk's decoded-SRS cache.
bench-p6:
	$(CARGO) run --release --features tools --bin cuzk-bench -- p6 --runs $${RUNS:-3}

## One 2 KiB partition's synthesis: upstream sequential vs challenges on all threads.
bench-synth:
	$(CARGO) run --release --features tools --bin cuzk-bench -- synth --runs $${RUNS:-3}

## Soak: 1000 small proofs through one engine; RSS, threads, fds and the memory budget stay flat.
bench-soak:
	$(CARGO) run --release --features tools --bin cuzk-bench -- soak --jobs $${JOBS:-1000}

clean-fixtures:
	rm -rf $(CUZK_FIXTURES_DIR)

# Examples, Go bindings and packaging (install, pkg-config) live in their own makefile.
include mk/examples.mk
