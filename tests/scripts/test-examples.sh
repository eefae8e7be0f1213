#!/usr/bin/env bash
# make test-examples: the packaging test, both example programs and the Go tests, on one
# temp install prefix. Stages (default: all, in this order): install examples go-test.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
setup_work
stages=("$@")
[[ ${#stages[@]} -gt 0 ]] || stages=(install examples go-test)
summary=()
for s in "${stages[@]}"; do
    case $s in install | examples | go-test) ;; *) fail "unknown stage $s (install, examples, go-test)" ;; esac
    t0=$(date +%s)
    log "stage $s"
    "$REPO/tests/scripts/$s.sh"
    summary+=("$s: ok ($(since "$t0"))")
done
log "test-examples summary"
printf '  %s\n' "${summary[@]}"
