# Shared helpers of the example / packaging tests. Source it; do not run it.
# Environment (all optional): CARGO_TARGET_DIR, CUZK_FIXTURES_DIR, CUZK_FIXTURE_BIN, MAKE, CC,
# GO, and CUZK_TEST_WORK (a work dir shared by the stages of test-examples.sh).

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${CARGO_TARGET_DIR:=/var/tmp/cuzk-target}"
: "${CUZK_FIXTURES_DIR:=/var/tmp/cuzk-fixtures}"
: "${CUZK_FIXTURE_BIN:=$CARGO_TARGET_DIR/release/cuzk-fixture}"
: "${MAKE:=make}"
: "${CC:=cc}"
: "${GO:=go}"
export CARGO_TARGET_DIR CUZK_FIXTURES_DIR CUZK_FIXTURE_BIN

# The loader's answer for a binary, read whole: `ldd x | grep -q` under pipefail fails at
# random when grep exits early and ldd dies of SIGPIPE.
loaded_libs() { local out; out=$(ldd "$1") || fail "ldd $1 failed"; printf '%s\n' "$out"; }

log() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# pkg-config is not on a minimal Debian; install it (CI runs as root with apt reachable).
need_pkg_config() {
    command -v pkg-config >/dev/null 2>&1 && return
    log "installing pkg-config"
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq pkg-config >/dev/null
    fi
    command -v pkg-config >/dev/null 2>&1 || fail "pkg-config is missing (apt-get install pkg-config)"
}

# The work dir: $CUZK_TEST_WORK, or a new temp dir removed on exit. Sets PREFIX (the test
# install prefix) and BIN (built examples).
setup_work() {
    if [[ -z "${CUZK_TEST_WORK:-}" ]]; then
        CUZK_TEST_WORK=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-examples.XXXXXX")
        # shellcheck disable=SC2064
        trap "rm -rf '$CUZK_TEST_WORK'" EXIT
    fi
    export CUZK_TEST_WORK
    PREFIX=$CUZK_TEST_WORK/prefix
    BIN=$CUZK_TEST_WORK/bin
    mkdir -p "$BIN"
}

# Make the installed copy (and only it) what pkg-config and the loader find.
use_prefix() {
    [[ -f $PREFIX/lib/pkgconfig/cuzk.pc ]] || fail "no install in $PREFIX (run the install stage first)"
    export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
    export LD_LIBRARY_PATH=$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    go_cache_key "$PREFIX/lib/pkgconfig/cuzk.pc" "$PREFIX/include/cuzk.h" "$PREFIX/lib/libcuzk.so"
}

# Go's build cache keys a cgo package by its sources and CGO_* variables, not by what
# pkg-config answers nor by headers outside the package: a package compiled against an
# earlier install would be reused, with that install's -L path. Put the identity of the
# files built against into CGO_CFLAGS so a different install recompiles the package.
go_cache_key() {
    local id
    id=$(cat "$@" | sha256sum | cut -c1-16)
    export CGO_CFLAGS="${CUZK_BASE_CGO_CFLAGS:=${CGO_CFLAGS:--O2 -g}} -DCUZK_BUILD_ID=$id"
}

# Fixture facts from cuzk-fixture (one JSON line; it generates missing fixtures).
load_fixture() { # [registered proof name; default StackedDrg2KiBV1_1]
    [[ -x $CUZK_FIXTURE_BIN ]] || fail "cuzk-fixture not built at $CUZK_FIXTURE_BIN (cargo build --release)"
    FIXTURE=$("$CUZK_FIXTURE_BIN" --root "$CUZK_FIXTURES_DIR" "$@" 2>/dev/null) || fail "cuzk-fixture $* failed"
    PARAMS_DIR=$(fixture_str params_dir)
    C1=$(fixture_str c1_path)
    SEAL_PROOF=$(fixture_str registered_proof)
    SECTOR_ID=$(sed -n 's/.*"sector_id":\([0-9]*\).*/\1/p' <<<"$FIXTURE")
    PROVER_ID=$(fixture_hex prover_id)
    COMM_R=$(fixture_hex comm_r)
    COMM_D=$(fixture_hex comm_d)
    TICKET=$(fixture_hex ticket)
    SEED=$(fixture_hex seed)
    [[ -n $SECTOR_ID && ${#PROVER_ID} -eq 64 && ${#SEED} -eq 64 && -f $C1 ]] || fail "cannot parse fixture: $FIXTURE"
}
fixture_str() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" <<<"$FIXTURE"; }
# A JSON array of 32 byte values as 64 hex digits.
fixture_hex() {
    local n hex=""
    for n in $(grep -o "\"$1\":\[[0-9,]*\]" <<<"$FIXTURE" | sed 's/.*\[//; s/\]//; s/,/ /g'); do
        hex+=$(printf '%02x' "$n")
    done
    echo "$hex"
}

# Seconds since $1 (from `date +%s`).
since() { echo $(( $(date +%s) - $1 ))s; }
