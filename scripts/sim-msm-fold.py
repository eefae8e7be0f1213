#!/usr/bin/env python3
"""Model of cuda/msm_big.cuh's bucket folds (the `fold` kernel at three levels on the device, then
`fold_window` on the host) over integers modulo a prime, which stand in for points: the folds only
add, double and scale, so a window's result must equal sum_b b*B_b for every window width msm_big
accepts (buckets 0..m, m = 2^(c-1), bucket 0 unused). Run: python3 scripts/sim-msm-fold.py"""
import random

Q = (1 << 127) - 1
FOLD = 32


def segments(count):
    return (count + FOLD - 1) // FOLD


def fold(inp, count, weighted):
    """The kernel: per segment k, tot = sum in[j], wsum = sum (j - k*FOLD)*in[j] (running sums from
    the top of the segment, as each thread walks it)."""
    wsum, tot = [], []
    for k in range(segments(count)):
        t = s = 0
        for j in reversed(range(k * FOLD, min((k + 1) * FOLD, count))):
            if weighted:
                s = (s + t) % Q
            t = (t + inp[j]) % Q
        wsum.append(s)
        tot.append(t)
    return wsum, tot


def fold_window(w3, t3, q3, p3, k3):
    """The host's part, as in msm_big.cuh (u: suffix sums of t3, v: sum k*t3[k]; then three
    steps of FOLD doublings and one addition)."""
    u = v = sw3 = sq3 = sp3 = 0
    for k in reversed(range(k3)):
        sw3, sq3, sp3 = (sw3 + w3[k]) % Q, (sq3 + q3[k]) % Q, (sp3 + p3[k]) % Q
        if k > 0:
            u = (u + t3[k]) % Q
            v = (v + u) % Q
    for nxt in (sw3, sq3, sp3):
        v = (v * FOLD + nxt) % Q
    return v


def window(buckets):
    m1 = len(buckets)  # m + 1 entries, as msm_big's buckets
    w1, t1 = fold(buckets, m1, True)
    k1 = segments(m1)
    w2, t2 = fold(t1, k1, True)
    _, p2 = fold(w1, k1, False)
    k2 = segments(k1)
    w3, t3 = fold(t2, k2, True)
    _, q3 = fold(w2, k2, False)
    _, p3 = fold(p2, k2, False)
    return fold_window(w3, t3, q3, p3, segments(k2))


def main():
    rnd = random.Random(7)
    cases = 0
    for c in list(range(12, 25)):
        m = 1 << (c - 1)
        for trial in range(2 if c <= 20 else 1):
            b = [0] + [rnd.randrange(Q) for _ in range(m)]
            if trial == 1:  # sparse buckets: most empty
                b = [x if rnd.random() < 0.01 else 0 for x in b]
            want = sum(i * x for i, x in enumerate(b)) % Q
            got = window(b)
            assert got == want, f"c = {c}, trial {trial}: {got} != {want}"
            cases += 1
    print(f"sim-msm-fold: {cases} windows (c = 12..24) equal sum b*B_b")


main()
