#!/usr/bin/env python3
"""Where a kernel's warps wait, per SASS instruction, from Nsight Compute's source page.

  ncu-stalls.py CSV [--top N] [--kernel SUBSTRING]

CSV is what this prints on the GPU machine (the sampling needs no -lineinfo):

  ncu --clock-control none -k regex:KERNEL -c 2 --section WarpStateStats --section SourceCounters \\
      --page source --print-source sass --csv BINARY ARGS > out.csv

Per kernel: the share of the stall samples and of the executed instructions by opcode, then the N
instructions with the most samples. A sample sits on the instruction a warp cannot issue yet, so a
load's latency shows on the first instruction that uses its result (an ISETP on a loaded bound, a
LOP3 testing loaded limbs for zero), not on the LDG itself.
"""
import argparse
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def kernels(path):
    """[(kernel name, [row as dict])] in file order."""
    out, header = [], None
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                out.append((row[1], []))
                header = None
            elif row[0] == "Address":
                header = row
            elif header and out:
                out[-1][1].append(dict(zip(header, row)))
    return out


def number(s):
    try:
        return float(s.replace(",", ""))
    except (AttributeError, ValueError):
        return 0.0


def opcode(source):
    words = source.split()
    if words and words[0].startswith("@"):  # predicate
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def report(name, rows, top):
    samples = sum(number(r.get(SAMPLES)) for r in rows)
    executed = sum(number(r.get(EXECUTED)) for r in rows)
    print(f"== {name}")
    print(f"   {len(rows)} instructions, {samples:.0f} stall samples, {executed:.3g} instructions executed")
    if samples == 0:
        return
    by_op, ex_op = collections.Counter(), collections.Counter()
    for r in rows:
        op = opcode(r.get("Source", ""))
        by_op[op] += number(r.get(SAMPLES))
        ex_op[op] += number(r.get(EXECUTED))
    for op, v in by_op.most_common(12):
        print(f"   {op:10s} {100 * v / samples:5.1f} % of samples, {100 * ex_op[op] / max(executed, 1):5.1f} % of instructions")
    print(f"   top {top} instructions by samples:")
    for r in sorted(rows, key=lambda r: -number(r.get(SAMPLES)))[:top]:
        print(f"   {r.get('Address', '?'):>16s} {100 * number(r.get(SAMPLES)) / samples:5.2f} %  {r.get('Source', '')[:80]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--kernel", default="")
    a = ap.parse_args()
    found, seen = [], set()
    for n, r in kernels(a.csv):
        key = (n, len(r), sum(number(x.get(SAMPLES)) for x in r))
        if a.kernel in n and key not in seen:  # (ncu may print a profiled kernel's page twice)
            seen.add(key)
            found.append((n, r))
    if not found:
        sys.exit(f"no kernel matching {a.kernel!r} in {a.csv}")
    for name, rows in found:
        report(name, rows, a.top)


if __name__ == "__main__":
    main()
