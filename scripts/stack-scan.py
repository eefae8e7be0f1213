#!/usr/bin/env python3
"""Where a hung process's threads wait, without a debugger (the GPU machine has none).

  stack-scan.py scan PID              on the machine: per thread, its state, its syscall, and the
                                      words on its stack that point into executable file mappings
                                      (return-address candidates, as FILE+0xOFFSET), nearest first
  stack-scan.py symbolize LOG BINARY  here: the candidates in BINARY's file turned into function
                                      names with BINARY's unstripped twin (same build: strip keeps
                                      the code where it was); stale words are dropped unless the
                                      bytes before them are a call instruction

Reading another process's stack needs ptrace access to it (root, or the same user with
ptrace_scope 0): gpu-run.sh's hang report runs it as the stage's parent's user.
"""
import bisect
import os
import re
import subprocess
import sys

SCAN_BYTES = 128 * 1024
HITS_PER_THREAD = 48


def maps(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            out.append((lo, hi, parts[1], int(parts[2], 16), path))
    return out


def scan(pid):
    ms = maps(pid)
    code = [(lo, hi, off, path) for lo, hi, perm, off, path in ms if "x" in perm and path.startswith("/")]
    starts = [c[0] for c in code]
    mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    for task in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        base = f"/proc/{pid}/task/{task}"
        try:
            comm = open(f"{base}/comm").read().strip()
            state = open(f"{base}/stat").read().rsplit(")", 1)[1].split()[0]
            sc = open(f"{base}/syscall").read().split()
        except OSError as e:
            print(f"thread {task}: unreadable ({e})")
            continue
        print(f"thread {task} {comm} state {state} syscall {sc[0] if sc else '?'}")
        if len(sc) < 3 or sc[0] == "running":
            continue
        sp, pc = int(sc[-2], 16), int(sc[-1], 16)
        hi = next((h for lo, h, *_ in ms if lo <= sp < h), sp + SCAN_BYTES)
        try:
            mem.seek(sp)
            data = mem.read(min(SCAN_BYTES, hi - sp))
        except OSError as e:
            print(f"  stack unreadable: {e}")
            continue
        hits = [pc]
        for i in range(0, len(data) - 7, 8):
            w = int.from_bytes(data[i:i + 8], "little")
            k = bisect.bisect_right(starts, w) - 1
            if k >= 0 and w < code[k][1]:
                hits.append(w)
                if len(hits) >= HITS_PER_THREAD:
                    break
        for w in hits:
            k = bisect.bisect_right(starts, w) - 1
            if k >= 0 and w < code[k][1]:
                lo, _, off, path = code[k]
                print(f"  {os.path.basename(path)}+{w - lo + off:#x}")


def symbolize(log, binary):
    name = os.path.basename(binary)
    loads = []
    for line in subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # offset, vaddr, filesz
    syms = []
    for line in subprocess.run(["nm", "-C", "--defined-only", "-n", binary], capture_output=True, text=True).stdout.splitlines():
        m = re.match(r"([0-9a-f]+) [tTwW] (.*)", line)
        if m:
            syms.append((int(m.group(1), 16), m.group(2)))
    addrs = [s[0] for s in syms]
    blob = open(binary, "rb").read()

    def is_call_site(off):  # the bytes before a return address: call rel32, or call through a register/memory
        return (off >= 5 and blob[off - 5] == 0xE8) or any(
            off >= n and blob[off - n] == 0xFF and (blob[off - n + 1] >> 3) & 7 == 2 for n in (2, 3, 6, 7))

    for line in open(log):
        m = re.match(r"\s+(\S+)\+(0x[0-9a-f]+)$", line)
        if not m or m.group(1) != name:
            print(line.rstrip())
            continue
        off = int(m.group(2), 16)
        va = next((off - o + v for o, v, sz in loads if o <= off < o + sz), None)
        if va is None or not is_call_site(off):
            continue
        k = bisect.bisect_right(addrs, va) - 1
        print(f"  {syms[k][1][:160] if k >= 0 else '?'} +{va - addrs[k]:#x}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "scan":
        scan(int(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "symbolize":
        symbolize(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
