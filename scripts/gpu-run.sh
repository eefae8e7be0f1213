#!/usr/bin/env bash
# Runs the CUDA backend's checks and benchmarks on the GPU machine, within one device call.
# Expects the stripped `cuzk-gpu` binary and the 2 KiB sector fixture (C1) in .gpu-carry/ (see
# scripts/gpu-prepare.sh); generates the 2 KiB params there (a test SRS, G1 on the GPU; bellperson's
# generator took ~2 min on 16 cores), in the background while the synthetic checks run. Logs go
# to $OUT (default /tmp/gpu-out).
#
#   scripts/gpu-run.sh [STAGE ...]      default: selftest selftest-2kib bench-2kib synth-24 synth-26
#   stages: selftest (synthetic sizes + memory loop; SELFTEST_CAP seconds), selftest-2kib, bench-2kib, supraseal (the
#           peer on the same C1), supraseal-stream (STREAM_JOBS peer C2 calls shared by each of
#           STREAM_THREADS thread counts of one process; pair with e2e and E2E_JOBS), e2e / e2e-W / e2e-lL (engine latency and 16 jobs; W synthesis workers; L GPU lanes), synth-N (2^N
#           PoRep-like partition), synth-32g (130,278,869 constraints: a 32 GiB partition's shape;
#           then STREAM_32G copies on two threads)
#           peer-synth-N (cuzk, then supraseal-c2, on one 2^N synthetic workload; cuzk also proves
#           PEER_STREAM copies on two threads, the throughput beside the peer's batch of PEER_BATCH;
#           in both synth stages LATE_RUNS also times the sparse
#           work after stage H instead of beside it; PEER_BUDGET MiB: cuzk within that VRAM
#           budget with the ballast holding the rest of the device, its peak sampled),
#           faults (tests/gpu_faults.rs: injected CUDA errors, recoverable and sticky; needs
#           .gpu-carry/gpu-faults from scripts/gpu-prepare.sh),
#           soak-N (N 2 KiB C2 jobs through one engine: RSS, threads, fds, device memory flat),
#           shaped-P / shaped-P-wW (the engine at proof P's real shape, e.g. 8 = 32 GiB: shaped C1,
#           random SRS, verification off; W synthesis workers; writes timeline-STAGE.json;
#           SHAPED_LANES=2,1 runs an engine with each lane count, same SRS and circuit),
#           synth-shaped-P (one partition of proof P: upstream sequential vs
#           cuzk parallel synthesis, needs .gpu-carry/cuzk-bench),
#           installed (the library `make install` built, in .gpu-carry/install: its C example
#           proves and verifies the 2 KiB fixture with the default config, i.e. backend auto),
#           ceiling (the device's IMAD, Fp/Fr-mul and copy rates, the MSM floor they imply, sppark's 2^26 NTTs),
#           msm (cuzk-gpu msm-bench: the one-pass big-MSM vs sppark's Pippenger, MSM_LOGS sizes,
#           MSM_WINDOWS window codes: default ΣH's (822: 22 bits, affine-round sums) and 22 (XYZZ sums)),
#           identity-test (tests/gpu_identity.rs, .gpu-carry/gpu-identity: byte identity, device
#           selection, the streamed mode; IDENTITY_FILTER: test name filters),
#           kinds-test (tests/gpu_identity.rs' every_proof_kind_on_the_gpu: WinningPoSt, WindowPoSt,
#           SnapDeals on the GPU, byte-identical to the CPU and verified by filecoin-proofs),
#           kinds (cuzk-bench kinds: each kind's latency on the GPU, then WinningPoSt while
#           KINDS_C2_JOBS C2 jobs keep the engine busy; .gpu-carry/cuzk-bench), kinds-supraseal
#           (the peer's *_with_vanilla on the same vanilla proofs); all three need the kind
#           fixtures in .gpu-carry/fixtures/kinds (their params are made here, in the background),
#           porep-512mib (tests/porep_512mib.rs with the CUDA backend: the real 512 MiB sector's C1
#           carried in .gpu-carry/fixtures/sectors, its params made here first),
#           cc-P (the engine at proof P with satisfiable inputs: a generated CC sector and a generated
#           TEST SRS for its recorded circuit, verification on; ~2 min of SRS generation at 32 GiB, G1 on
#           the GPU, before the jobs; CC_VRAM_BUDGET MiB, a comma-separated list; P of any kind, e.g.
#           cc-UpdateStackedDrg32GiBV1; CC_JOBS jobs (default SHAPED_JOBS); CC_ARGS more bench-shaped options, e.g. "--probe
#           StackedDrgWinning32GiBV1 --probes 10" or "--sectors 2349" for a WindowPoSt partition), vram-P-B (the engine at proof P's shape with vram_budget_mib B and a ballast process
#           holding the rest of the device: a B-MiB card; the engine's peak device memory reported;
#           VRAM_INPUTS=cc: a generated sector under a test SRS, every proof verified, ~2 min more;
#           VRAM_ARGS: more bench-shaped options, e.g. "--sectors 2349 --srs random"),
#           alt-STAGE: STAGE run with $ALT_BIN instead (two builds side by side in one run);
#           alt2-STAGE: with $ALT2_BIN (a third build)
#
# Every stage runs under `timeout`, and the whole run stays under DEADLINE seconds (default 560).
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-.gpu-carry/cuzk-gpu}
OUT=${OUT:-/tmp/gpu-out}
DEADLINE=${DEADLINE:-560}
mkdir -p "$OUT"
export CUZK_FIXTURES_DIR=${CUZK_FIXTURES_DIR:-/var/tmp/cuzk-fixtures}
export RUST_BACKTRACE=1
start=$(date +%s)
left() { echo $((DEADLINE - ($(date +%s) - start))); }

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(selftest selftest-2kib bench-2kib synth-24 synth-26)

# Binaries may travel gzip'ed (the carry limit): unpack them beside themselves.
for z in .gpu-carry/*.gz; do [ -e "$z" ] && gunzip -f "$z"; done
chmod +x .gpu-carry/* 2>/dev/null

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm --format=csv
  echo "cores: $(nproc)"
  df -h /var/tmp /dev/shm
  "$BIN" probe
} > "$OUT/env.log" 2>&1
cat "$OUT/env.log"

# The 2 KiB params are made in the background while the first stages run, unless a timed stage
# (the engine or GPU benchmarks, which would share the 16 cores with it) comes before the first
# stage that needs them: then they are made first, before any stage.
fixture_pid=""
need_fixture=0
timed_first=0
for s in "${stages[@]}"; do s1=${s#alt2-}; case ${s1#alt-} in
  selftest-2kib|bench-2kib|e2e*|supraseal*|soak-*|faults|installed|identity-test|kinds*) need_fixture=1; break ;;
  shaped-*|synth-*|peer-synth-*|msm|ceiling|vram-*|cc-*) timed_first=1 ;;
esac; done
mkdir -p "$CUZK_FIXTURES_DIR/sectors"
[ -d .gpu-carry/fixtures/sectors ] && cp -r .gpu-carry/fixtures/sectors/. "$CUZK_FIXTURES_DIR/sectors/"
# FIXTURE_BACKGROUND=1: make them in the background anyway (the timed stage before them is not
# a measurement, e.g. cc-P, which only checks that its proofs verify).
[ "${FIXTURE_BACKGROUND:-0}" = 1 ] && timed_first=0
if [ $need_fixture = 1 ] && [ $timed_first = 1 ]; then
  "$BIN" fixture > "$OUT/fixture.log" 2>&1
  echo "== fixture made first: $(tail -1 "$OUT/fixture.log")"
elif [ $need_fixture = 1 ]; then
  ( "$BIN" fixture > "$OUT/fixture.log" 2>&1 ) &
  fixture_pid=$!
fi
wait_fixture() {
  if [ -n "$fixture_pid" ]; then wait "$fixture_pid"; fixture_pid=""; tail -3 "$OUT/fixture.log"; fi
}
kinds_pid=""
for s in "${stages[@]}"; do case $s in kinds*|identity-test)
  if [ -z "$kinds_pid" ] && [ -d .gpu-carry/fixtures/kinds ]; then
    mkdir -p "$CUZK_FIXTURES_DIR/kinds"; cp -r .gpu-carry/fixtures/kinds/. "$CUZK_FIXTURES_DIR/kinds/"
    ( "$BIN" fixture-kinds > "$OUT/fixture-kinds.log" 2>&1 ) &
    kinds_pid=$!
  fi ;; esac; done
wait_kinds() {
  wait_fixture
  if [ -n "$kinds_pid" ]; then wait "$kinds_pid"; kinds_pid=""; tail -2 "$OUT/fixture-kinds.log"; fi
}

# The process under `timeout` PID: GPU state, its threads' states and kernel wait channels, and
# their kernel stacks (grouped), so a stage that hangs says where.
hang_report() {
  local p; p=$(pgrep -P "$1" | head -1)
  date -u
  nvidia-smi --query-gpu=utilization.gpu,memory.used,clocks.sm --format=csv
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv
  free -g
  [ -n "$p" ] || { echo "no child of $1"; return; }
  echo "process $p: $(tr '\0' ' ' < /proc/$p/cmdline)"
  for th in /proc/$p/task/*; do echo "$(cat $th/comm) $(awk '{print $3}' $th/stat) $(cat $th/wchan)"; done | sort | uniq -c | sort -rn
  cat /proc/$p/task/*/stack 2>/dev/null | sort | uniq -c | sort -rn | head -30
  # Each thread's return-address candidates (symbolize here: scripts/stack-scan.py symbolize).
  python3 scripts/stack-scan.py scan "$p" 2>&1
}

run() { # name cap cmd...
  local name=$PREFIX$1 cap=$2; shift 2
  local l; l=$(left)
  local t=$((cap < l - 10 ? cap : l - 10))
  if [ "$t" -lt 20 ]; then echo "== $name: skipped, ${l}s left"; return; fi
  echo "== $name (timeout ${t}s)"
  local t0 rc pid dog nap; t0=$(date +%s)
  timeout "$t" "$@" > "$OUT/$name.log" 2>&1 &
  pid=$!
  # 5 s before the timeout, what the stage's process is doing (a hang's evidence, before the kill).
  # Its output (the sleep's too) goes to the file: an orphaned sleep holding our stdout would keep
  # the device call open.
  ( sleep $((t - 5)) && hang_report "$pid" ) > "$OUT/$name.hang.log" 2>&1 &
  dog=$!
  wait "$pid"; rc=$?
  nap=$(pgrep -P "$dog")
  kill "$dog" 2>/dev/null; wait "$dog" 2>/dev/null; [ -n "$nap" ] && kill $nap 2>/dev/null
  echo "   rc=$rc after $(( $(date +%s) - t0 ))s (run total $(( $(date +%s) - start ))s)"
  if [ -s "$OUT/$name.hang.log" ]; then echo "   hang report:"; head -40 "$OUT/$name.hang.log"; else rm -f "$OUT/$name.hang.log"; fi
  grep -E "^(PASS|FAIL|SKIP|SELFTEST)|^test |IMAD|^ntt 2|^fp64 |^msm 2|preloaded to the GPU|median|identical|per million|panicked|error|stream|wall_s|prove_s|exported|prover time|synthesis time|^soak:|one job|^== gpu_lanes|^engine:|random SRS|shaped C1|per core-second|^(backend|winning_post|window_post|snap_deals)|^512 MiB|\"kind\"|^device [0-9]" "$OUT/$name.log" | head -40
}

# A B-MiB card on this device: a ballast process (.gpu-carry/ballast, tools/ballast.cu) holds all
# of the device's memory but B MiB, so a proof that goes over the budget fails for real, and the
# device's used memory is sampled every 100 ms into FILE.used.csv. ballast_up FILE B starts both
# (BALLAST_PIDS, BALLAST_BASE: the memory used with the ballast alone); ballast_down FILE B WHO
# stops them and prints WHO's peak, the highest sample less the ballast's own use.
ballast_up() { # file budget_mib
  local i
  .gpu-carry/ballast "$2" > "$OUT/$1.ballast.log" 2>&1 &
  BALLAST_PIDS=$!
  for i in $(seq 1 120); do grep -q "holding" "$OUT/$1.ballast.log" && break; sleep 0.5; done
  cat "$OUT/$1.ballast.log"
  BALLAST_BASE=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$OUT/$1.used.csv" 2>&1 &
  BALLAST_PIDS="$BALLAST_PIDS $!"
}
ballast_down() { # file budget_mib who
  kill $BALLAST_PIDS 2>/dev/null; wait $BALLAST_PIDS 2>/dev/null
  awk -v base="$BALLAST_BASE" -v cap="$2" -v who="$3" '$1+0 > peak {peak = $1+0} END {printf "   device memory: %d MiB used with the ballast alone; %s peaked at %d MiB (budget %d MiB)\n", base, who, peak - base, cap}' "$OUT/$1.used.csv"
}

# vram-P-B: the engine at proof P's shape (bench-shaped) with vram_budget_mib B on a B-MiB card
# (ballast_up).
vram_run() { # proof budget_mib
  local p=$1 b=$2 name=vram-$1-$2
  local f=$PREFIX$name  # the files of an alt- run beside the other build's
  ballast_up "$f" "$b"
  run "$name" 560 env RUST_LOG="${VRAM_LOG:-info}" "$BIN" bench-shaped --proof "$p" --jobs "${SHAPED_JOBS:-2}" --vram-budget-mib "$b" \
      --timeline "$OUT/timeline-$f.json" --inputs "${VRAM_INPUTS:-shaped}" ${VRAM_ARGS:-}
  ballast_down "$f" "$b" "the engine"
  grep -E "plan|page-locked|streamed" "$OUT/$f.log" | head -8
}

# peer-synth-N: cuzk on a 2^N PoRep-like synthetic partition, then supraseal-c2's prover on the
# very same witness and SRS (written by cuzk-gpu: the SRS to disk, the witness to /dev/shm when
# it has room; removed afterwards), one circuit per call and PEER_BATCH (default 4) per call.
peer_synth() {
  local log=$1 n=$((1 << $1)) w params=/var/tmp/cuzk-synth.params
  local need_p=$(( n * 480 / 1000000000 + 2 )) need_w=$(( n * 128 / 1000000000 + 1 )) # GB: SRS, witness
  local avail_d avail_s; avail_d=$(df -BG --output=avail /var/tmp | tail -1 | tr -dc 0-9); avail_s=$(df -BG --output=avail /dev/shm | tail -1 | tr -dc 0-9)
  w=/dev/shm/cuzk-synth-witness; [ "$avail_s" -gt $((need_w + 4)) ] || w=/var/tmp/cuzk-synth-witness
  local need=$need_p; [ "$w" = /var/tmp/cuzk-synth-witness ] && need=$((need_p + need_w))
  echo "   peer-synth-$log: need ${need_p} GB (SRS) + ${need_w} GB (witness, $w); free: /var/tmp ${avail_d} GB, /dev/shm ${avail_s} GB"
  if [ "$avail_d" -lt "$need" ]; then echo "== peer-synth-$log: skipped, not enough disk"; return; fi
  # PEER_BUDGET (MiB): cuzk on a card of that size (ballast_up); the peer then has the whole device.
  [ -n "${PEER_BUDGET:-}" ] && ballast_up "synth-$log" "$PEER_BUDGET"
  run "synth-$log-cuzk" 240 "$BIN" bench-synthetic --log "$log" --runs 3 --late-sparse-runs "${LATE_RUNS:-0}" --distinct $((1 << 20)) --stream "${PEER_STREAM:-4}" \
      --export-witness "$w" --export-params "$params" --vram-budget-mib "${PEER_BUDGET:-0}"
  [ -n "${PEER_BUDGET:-}" ] && ballast_down "synth-$log" "$PEER_BUDGET" cuzk
  run "synth-$log-supraseal" 240 env LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
      .gpu-carry/supraseal-c2-bench raw "$params" "$w" 3 1 "${PEER_BATCH:-4}"
  rm -rf "$w" "$params"
}

# installed: the C example against the installed (fat, CUDA) library, default config.
installed() {
  local d=.gpu-carry/install sec=$CUZK_FIXTURES_DIR/sectors/StackedDrg2KiBV1_1-c0ffee/sector.json
  local sid pid cr cd tk sd
  read -r sid pid cr cd tk sd < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(d["sector_id"], *(bytes(d[k]).hex() for k in ("prover_id", "comm_r", "comm_d", "ticket", "seed")))' "$sec")
  run installed-prove 120 env LD_LIBRARY_PATH="$d/lib" RUST_LOG= "$d/prove" "$CUZK_FIXTURES_DIR/params" \
      "$(dirname "$sec")/c1.json" "$sid" "$pid" "$OUT/installed.proof"
  grep -E "backend|CUDA device|uploaded|timings" "$OUT/installed-prove.log" | cut -c1-400
  run installed-verify 60 env LD_LIBRARY_PATH="$d/lib" "$d/prove" verify "$CUZK_FIXTURES_DIR/params" StackedDrg2KiBV1_1 \
      "$sid" "$pid" "$cr" "$cd" "$tk" "$sd" "$OUT/installed.proof"
  cat "$OUT/installed-verify.log"
}

# alt-STAGE runs STAGE with $ALT_BIN, alt2-STAGE with $ALT2_BIN (other builds, for side-by-side
# comparisons in one run).
for s0 in "${stages[@]}"; do
  BIN_RUN=$BIN; s=$s0; PREFIX=
  if [ "${s0#alt-}" != "$s0" ]; then BIN=${ALT_BIN:?alt- stages need ALT_BIN}; s=${s0#alt-}; PREFIX=alt-; fi
  if [ "${s0#alt2-}" != "$s0" ]; then BIN=${ALT2_BIN:?alt2- stages need ALT2_BIN}; s=${s0#alt2-}; PREFIX=alt2-; fi
  case $s in
    selftest) run selftest ${SELFTEST_CAP:-260} "$BIN" selftest --no-fixture --mem-loop ${MEM_LOOP:-50} --min-log ${MIN_LOG:-14} --max-log ${MAX_LOG:-20} ;;
    selftest-2kib) wait_fixture; run selftest-2kib 150 "$BIN" selftest --no-synthetic --mem-loop 0 ;;
    bench-2kib) wait_fixture; run bench-2kib 120 "$BIN" bench-2kib --runs 5 --cpu-runs ${CPU_RUNS:-2} ;;
    e2e|e2e-*) w=${s#e2e-}; [ "$w" = e2e ] && w=${SYNTH_WORKERS:-14}; l=${GPU_LANES:-0}
        case $w in l*) l=${w#l}; w=${SYNTH_WORKERS:-14} ;; esac; wait_fixture
        run "$s" 150 "$BIN" bench-e2e --runs 5 --jobs "${E2E_JOBS:-16}" --synthesis-workers "$w" --gpu-lanes "$l" ;;
    supraseal) wait_fixture; run supraseal 150 env FIL_PROOFS_PARAMETER_CACHE="$CUZK_FIXTURES_DIR/params" \
        LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} RUST_LOG=bellperson=info \
        .gpu-carry/supraseal-c2-bench "$CUZK_FIXTURES_DIR/sectors/StackedDrg2KiBV1_1-c0ffee/sector.json" 6 ;;
    supraseal-stream) wait_fixture; run supraseal-stream 300 env FIL_PROOFS_PARAMETER_CACHE="$CUZK_FIXTURES_DIR/params" \
        LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
        .gpu-carry/supraseal-c2-bench stream "$CUZK_FIXTURES_DIR/sectors/StackedDrg2KiBV1_1-c0ffee/sector.json" \
        "${STREAM_JOBS:-32}" "${STREAM_THREADS:-1,8,16,32}" ;;
    synth-32g) run synth-32g 360 "$BIN" bench-synthetic --log 27 --constraints 130278869 --runs 3 --late-sparse-runs ${LATE_RUNS:-0} --stream "${STREAM_32G:-3}" \
        --distinct $((1 << 20)) ;;
    synth-[0-9]*) run "$s" 200 "$BIN" bench-synthetic --log "${s#synth-}" --runs 3 ;;
    peer-synth-*) peer_synth "${s#peer-synth-}" ;;
    faults) wait_fixture; run faults 400 .gpu-carry/gpu-faults --nocapture --test-threads 1 ;;
    ceiling) run ceiling 60 "$BIN" ceiling ;;
    msm) run msm 240 "$BIN" msm-bench --log "${MSM_LOGS:-24,26,27}" --windows "${MSM_WINDOWS:-822,22}" ;;
    identity-test) wait_kinds; run identity-test ${IDENTITY_CAP:-300} .gpu-carry/gpu-identity --nocapture --test-threads 1 ${IDENTITY_FILTER:-} ;;
    installed) wait_fixture; installed ;;
    porep-512mib) run porep-512mib 560 .gpu-carry/porep-512mib --ignored --nocapture --test-threads 1 ;;
    kinds-test) wait_kinds; run kinds-test 300 .gpu-carry/gpu-identity --nocapture --test-threads 1 every_proof_kind_on_the_gpu ;;
    kinds) wait_kinds; run kinds 400 .gpu-carry/cuzk-bench kinds --runs "${KINDS_RUNS:-5}" --c2-jobs "${KINDS_C2_JOBS:-32}" ${KINDS_UPSTREAM:---no-upstream} \
        --vram-budget-mib "${KINDS_BUDGET:-0}" ;;
    kinds-supraseal) wait_kinds; run kinds-supraseal 200 env FIL_PROOFS_PARAMETER_CACHE="$CUZK_FIXTURES_DIR/params" \
        LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
        .gpu-carry/supraseal-c2-bench kinds "$CUZK_FIXTURES_DIR/kinds/2KiB-c0ffee/kinds.json" "${KINDS_RUNS:-5}" ;;
    soak-*) wait_fixture; run "$s" 560 "$BIN" soak-2kib --jobs "${s#soak-}" ;;
    vram-*) p=${s#vram-}; vram_run "${p%-*}" "${p#*-}" ;;
    cc-*) run "$s" 580 "$BIN" bench-shaped --inputs cc --proof "${s#cc-}" --jobs "${CC_JOBS:-${SHAPED_JOBS:-2}}" --timeline "$OUT/timeline-$s.json" \
        --vram-budget-mib "${CC_VRAM_BUDGET:-0}" ${CC_ARGS:-} ;;
    shaped-*) p=${s#shaped-}; w=${SYNTH_WORKERS:-0}; case $p in *-w*) w=${p#*-w}; p=${p%-w*} ;; esac
        run "$s" 560 "$BIN" bench-shaped --proof "$p" --jobs ${SHAPED_JOBS:-2} --synthesis-workers "$w" --timeline "$OUT/timeline-$s.json" \
            --gpu-lanes "${SHAPED_LANES:-0}" ;;
    synth-shaped-*) run "$s" 400 .gpu-carry/cuzk-bench synth-shaped --proof "${s#synth-shaped-}" --runs 1 --modes "${SYNTH_MODES:-both}" ;;
    *) echo "unknown stage $s" ;;
  esac
  BIN=$BIN_RUN
done
wait_kinds
echo "total $(( $(date +%s) - start ))s"
# The device tool brings back at most 8 files (the rest are left out, as 2026-12-06 04:27's
# vram-8-16384 log was): past 7, everything in $OUT goes into one archive.
if [ "$(find "$OUT" -maxdepth 1 -type f | wc -l)" -gt 7 ]; then
  (cd "$OUT" && tar czf all-logs.tar.gz --remove-files -- $(find . -maxdepth 1 -type f ! -name all-logs.tar.gz -printf '%f\n'))
  echo "logs archived in $OUT/all-logs.tar.gz"
fi
