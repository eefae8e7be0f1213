#!/usr/bin/env bash
# Run the C example (under AddressSanitizer) and the Go example against the 2 KiB fixture:
# each proves the sector's C1 output; each proof is verified by both programs (and the
# statically linked C build); wrong statements, corrupted proofs and bad arguments must fail
# with the documented exit codes. Needs the binaries of install.sh (run first when missing).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_work
[[ -x $BIN/prove-asan && -x $BIN/prove-static && -x $BIN/prove-colink && -x $BIN/prove-go ]] || "$REPO/tests/scripts/install.sh"
need_pkg_config
use_prefix
load_fixture
OUT=$CUZK_TEST_WORK/proofs
mkdir -p "$OUT"

# AddressSanitizer with leak detection on. libcuzk itself is not instrumented (Rust), but
# ASan's allocator serves every malloc/free in the process, Rust's included, so heap misuse
# across the ABI (double free, reading a proof's bytes after cuzk_proof_free) and anything the
# example forgets to free (an error, a proof, a string, the engine) are reported; the sanity
# check below proves the latter. No suppressions are needed: cuzk_engine_free joins the
# threads and frees the engine, and what the Rust runtime keeps in statics stays reachable,
# which LeakSanitizer does not report.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86

log "ASan sanity: a program that forgets cuzk_error_free is reported"
cat >"$OUT/leak.c" <<'C'
#include <cuzk.h>
#include <stdio.h>
int main(void) {
    cuzk_engine *engine = NULL;
    cuzk_error *err = NULL;
    cuzk_status st = cuzk_engine_new("{\"no_such_key\": 1}", &engine, &err);
    printf("status %d: %s\n", (int)st, cuzk_error_message(err));
    cuzk_engine_free(engine);
    err = NULL; /* leaked on purpose */
    return st == CUZK_STATUS_INVALID_ARGUMENT ? 0 : 1;
}
C
# shellcheck disable=SC2046
"$CC" -std=c11 -Wall -Wextra -Werror -g -fsanitize=address $(pkg-config --cflags cuzk) "$OUT/leak.c" \
    -o "$OUT/leak" $(pkg-config --libs cuzk)
rc=0; "$OUT/leak" >"$OUT/leak.log" 2>&1 || rc=$?
if [[ $rc -ne 86 ]] || ! grep -q "LeakSanitizer: detected memory leaks" "$OUT/leak.log"; then
    cat "$OUT/leak.log"; fail "ASan did not report a leaked cuzk_error (exit $rc)"
fi
echo "leak reported, as it should be"

# expect_rc <want> <command...>: run, check the exit status.
expect_rc() {
    local want=$1 rc=0
    shift
    "$@" >"$OUT/last.log" 2>&1 || rc=$?
    if [[ $rc -ne $want ]]; then
        cat "$OUT/last.log" >&2
        fail "exit $rc, want $want: $*"
    fi
}

statement() { # <sector_id> <prover_id> <seed>
    echo "$PARAMS_DIR" "$SEAL_PROOF" "$1" "$2" "$COMM_R" "$COMM_D" "$TICKET" "$3"
}

t0=$(date +%s)
log "C example (ASan): prove sector $SECTOR_ID"
"$BIN/prove-asan" "$PARAMS_DIR" "$C1" "$SECTOR_ID" "$PROVER_ID" "$OUT/c.proof"
echo "C example: $(since "$t0")"

t0=$(date +%s)
log "Go example: prove sector $SECTOR_ID"
"$BIN/prove-go" "$PARAMS_DIR" "$C1" "$SECTOR_ID" "$PROVER_ID" "$OUT/go.proof"
echo "Go example: $(since "$t0")"

t0=$(date +%s)
log "C example linked statically beside another Rust library with its own blst: prove sector $SECTOR_ID"
"$BIN/prove-colink" "$PARAMS_DIR" "$C1" "$SECTOR_ID" "$PROVER_ID" "$OUT/colink.proof"
# shellcheck disable=SC2046
expect_rc 0 "$BIN/prove-asan" verify $(statement "$SECTOR_ID" "$PROVER_ID" "$SEED") "$OUT/colink.proof"
echo "co-linked static example: $(since "$t0"), its proof verifies"

log "both proofs verify, by every build"
[[ $(stat -c %s "$OUT/c.proof") -eq 192 && $(stat -c %s "$OUT/go.proof") -eq 192 ]] || fail "proofs are not 192 bytes"
cmp -s "$OUT/c.proof" "$OUT/go.proof" && fail "two proofs are byte-identical (Groth16 proofs are randomized)"
# shellcheck disable=SC2046
for p in c go; do
    for prog in prove-asan prove-static prove-go; do
        expect_rc 0 "$BIN/$prog" verify $(statement "$SECTOR_ID" "$PROVER_ID" "$SEED") "$OUT/$p.proof"
        echo "$prog verify $p.proof: $(cat "$OUT/last.log")"
    done
done

log "wrong statements and corrupted proofs fail"
other_prover=$(printf '%02x' 7)${PROVER_ID:2}
other_seed=${SEED:0:62}$(printf '%02x' $(( (16#${SEED:62:2} + 1) % 64 )))
# shellcheck disable=SC2046
for prog in prove-asan prove-go; do
    expect_rc 3 "$BIN/$prog" verify $(statement $((SECTOR_ID + 1)) "$PROVER_ID" "$SEED") "$OUT/c.proof"
    expect_rc 3 "$BIN/$prog" verify $(statement "$SECTOR_ID" "$other_prover" "$SEED") "$OUT/go.proof"
    expect_rc 3 "$BIN/$prog" verify $(statement "$SECTOR_ID" "$PROVER_ID" "$other_seed") "$OUT/c.proof"
done
# A changed byte inside the proof: not a valid proof of the statement (either a point that
# does not decode, exit 1, or one that does not verify, exit 3).
cp "$OUT/c.proof" "$OUT/bad.proof"
b=$(od -An -tu1 -j100 -N1 "$OUT/bad.proof" | tr -d ' ')
printf "\\x$(printf %02x $(( b ^ 1 )))" | dd of="$OUT/bad.proof" bs=1 seek=100 conv=notrunc status=none
cmp -s "$OUT/c.proof" "$OUT/bad.proof" && fail "could not corrupt the proof"
# shellcheck disable=SC2046
for prog in prove-asan prove-go; do
    rc=0; "$BIN/$prog" verify $(statement "$SECTOR_ID" "$PROVER_ID" "$SEED") "$OUT/bad.proof" >"$OUT/last.log" 2>&1 || rc=$?
    [[ $rc -eq 1 || $rc -eq 3 ]] || { cat "$OUT/last.log"; fail "$prog accepted a corrupted proof (exit $rc)"; }
    echo "$prog on a corrupted proof: exit $rc: $(cat "$OUT/last.log")"
    head -c 191 "$OUT/c.proof" >"$OUT/short.proof"
    expect_rc 1 "$BIN/$prog" verify $(statement "$SECTOR_ID" "$PROVER_ID" "$SEED") "$OUT/short.proof"
done

log "bad arguments and inputs"
for prog in prove-asan prove-go; do
    expect_rc 2 "$BIN/$prog"
    expect_rc 2 "$BIN/$prog" "$PARAMS_DIR" "$C1" "$SECTOR_ID" "xyz" "$OUT/x.proof"
    expect_rc 2 "$BIN/$prog" "$PARAMS_DIR" "$C1" "-1" "$PROVER_ID" "$OUT/x.proof"
    expect_rc 1 "$BIN/$prog" "$PARAMS_DIR" /nonexistent/c1.json "$SECTOR_ID" "$PROVER_ID" "$OUT/x.proof"
    # A params dir without the SRS: the load fails, naming the expected file.
    expect_rc 1 "$BIN/$prog" "$OUT" "$C1" "$SECTOR_ID" "$PROVER_ID" "$OUT/x.proof"
    grep -q "v28-" "$OUT/last.log" || { cat "$OUT/last.log"; fail "$prog: SRS error does not name the params file"; }
    echo "$prog without params: $(cat "$OUT/last.log")"
    [[ ! -e $OUT/x.proof ]] || fail "$prog wrote a proof on failure"
done

log "SyntheticPoRep (Curio's UseSyntheticPoRep, registered proof 10): C and Go prove, the other verifies"
load_fixture StackedDrg2KiBV1_1_Feat_SyntheticPoRep
[[ $SEAL_PROOF == StackedDrg2KiBV1_1_Feat_SyntheticPoRep ]] || fail "synthetic fixture is $SEAL_PROOF"
"$BIN/prove-asan" "$PARAMS_DIR" "$C1" "$SECTOR_ID" "$PROVER_ID" "$OUT/synth-c.proof"
"$BIN/prove-go" "$PARAMS_DIR" "$C1" "$SECTOR_ID" "$PROVER_ID" "$OUT/synth-go.proof"
# shellcheck disable=SC2046
expect_rc 0 "$BIN/prove-go" verify $(statement "$SECTOR_ID" "$PROVER_ID" "$SEED") "$OUT/synth-c.proof"
# shellcheck disable=SC2046
expect_rc 0 "$BIN/prove-asan" verify $(statement "$SECTOR_ID" "$PROVER_ID" "$SEED") "$OUT/synth-go.proof"
echo "SyntheticPoRep proofs verify, by both programs"

echo "examples: ok"
