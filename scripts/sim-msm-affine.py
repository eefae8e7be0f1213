#!/usr/bin/env python3
"""Lane-by-lane model of cuda/msm_affine.cuh's rounds (halve, the scan, slot_map, pair_round; then msm_big's
sum_buckets over what they leave) over BLS12-381 G1 in affine coordinates: every bucket's result must equal the plain sum of its entries.
Buckets get repeated bases (doubling), a base and its negation (infinity) and infinity bases,
the cases the kernel handles without a division. Run: python3 scripts/sim-msm-affine.py"""
import random

P = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab
G = (0x17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb,
     0x08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1)
INF = (0, 0)


def add(a, b):  # reference affine addition
    if a == INF:
        return b
    if b == INF:
        return a
    if a[0] == b[0]:
        if (a[1] + b[1]) % P == 0:
            return INF
        l = 3 * a[0] * a[0] * pow(2 * a[1], -1, P) % P
    else:
        l = (b[1] - a[1]) * pow(b[0] - a[0], -1, P) % P
    x = (l * l - a[0] - b[0]) % P
    return (x, (l * (a[0] - x) - a[1]) % P)


def neg(a):
    return a if a == INF else (a[0], (-a[1]) % P)


def kind_of(p1, p2):
    if p1 == INF:
        return "TAKE2"
    if p2 == INF:
        return "TAKE1"
    if p1[0] != p2[0]:
        return "ADD"
    return "DOUBLE" if p1[1] == p2[1] and p1[1] != 0 else "INF"


def denominator(k, p1, p2):
    return (p2[0] - p1[0]) % P if k == "ADD" else (2 * p1[1]) % P if k == "DOUBLE" else 1


LONE = 1 << 31


def slot_map(in_start, out_start, m):
    """The round's map from output slot j to its first input point q (LONE set when q is alone)."""
    first = [None] * out_start[m + 1]
    for b in range(1, m + 1):
        for j in range(out_start[b], out_start[b + 1]):
            q = in_start[b] + 2 * (j - out_start[b])
            first[j] = q | (0 if q + 1 < in_start[b + 1] else LONE)
    assert all(f is not None for f in first)
    return first


def pair_round(pt_of, first, total, K, T):
    """All T threads of one launch (a warp's 32·K slots interleaved over its lanes); returns the
    output slots."""
    out = [None] * total
    for t in range(T):
        lane = t % 32
        j0 = (t - lane) * K + lane  # slot i of the thread: j0 + 32·i
        acc, scratch = 1, [None] * K
        for i in range(K):
            j = j0 + 32 * i
            d = 1
            if j < total and not first[j] & LONE:
                q = first[j]
                p1, p2 = pt_of(q), pt_of(q + 1)
                d = denominator(kind_of(p1, p2), p1, p2)
            scratch[i] = acc
            acc = acc * d % P
        inv = pow(acc, -1, P)
        for i in reversed(range(K)):
            j = j0 + 32 * i
            if j >= total:
                continue
            q = first[j] & ~LONE
            r = pt_of(q)
            if not first[j] & LONE:
                p2 = pt_of(q + 1)
                k = kind_of(r, p2)
                if k in ("ADD", "DOUBLE"):
                    d = denominator(k, r, p2)
                    inv_d = inv * scratch[i] % P
                    inv = inv * d % P
                    l = (p2[1] - r[1]) if k == "ADD" else 3 * r[0] * r[0]
                    l = l * inv_d % P
                    x3 = (l * l - r[0] - p2[0]) % P
                    r = (x3, (l * (r[0] - x3) - r[1]) % P)
                elif k == "TAKE2":
                    r = p2
                elif k == "INF":
                    r = INF
            assert out[j] is None
            out[j] = r
    assert all(o is not None for o in out)
    return out


def rounds(n, m):
    r = 0
    while (n >> (r + 1)) >= 2 * m:
        r += 1
    return r


def next_bound(x, m):
    return x // 2 + m // 2 + 1


def run(rng, m, n, K, bases):
    # sorted entries: (bucket, base index, sign); bucket 0 is digit 0 (never summed)
    entries = sorted(((rng.choice([0] + list(range(1, m + 1)) * 8), rng.randrange(len(bases)), rng.randrange(2))
                      for _ in range(n)), key=lambda e: e[0])
    # a few skewed buckets: many copies of one base, both signs
    vals = [(bi, s) for (_, bi, s) in entries]
    keys = [k for (k, _, _) in entries]
    start = [0] * (m + 2)
    for b in range(m + 2):
        start[b] = next((i for i, k in enumerate(keys) if k >= b), n)
    want = []
    for b in range(m + 1):
        s = INF
        for i in range(start[b], start[b + 1]):
            p = bases[vals[i][0]]
            s = add(s, neg(p) if vals[i][1] else p)
        want.append(s)
    pt_of = lambda q: neg(bases[vals[q][0]]) if vals[q][1] else bases[vals[q][0]]
    in_start, bound = start, n
    for _ in range(rounds(n, m)):
        lens = [0 if (b == 0 or b > m) else (in_start[b + 1] - in_start[b] + 1) // 2 for b in range(m + 2)]
        out_start = [sum(lens[:b]) for b in range(m + 2)]
        bound = next_bound(bound, m)
        assert out_start[m + 1] <= bound
        T = -(-(-(-bound // K)) // 128) * 128
        out = pair_round(pt_of, slot_map(in_start, out_start, m), out_start[m + 1], K, T)
        pt_of = (lambda o: lambda q: o[q])(out)
        in_start = out_start
    for b in range(1, m + 1):  # msm_big::sum_buckets over what the rounds leave
        s = INF
        for j in range(in_start[b], in_start[b + 1]):
            s = add(s, pt_of(j))
        assert s == want[b], f"bucket {b} differs"
    return rounds(n, m)


def main():
    rng = random.Random(1)
    bases = [G]
    for _ in range(40):
        bases.append(add(bases[-1], G))
    bases += [INF, INF]  # infinity bases (unused variables)
    for trial in range(60):
        m = rng.choice([1, 2, 3, 7, 16, 33])
        n = rng.choice([8, 50, 200, 700]) * m // 4 + rng.randrange(20)
        K = rng.choice([1, 2, 8, 16])
        r = run(rng, m, n, K, bases[: rng.choice([3, 10, len(bases)])])
        print(f"trial {trial}: m {m} n {n} K {K} rounds {r}: every bucket equals its plain sum")


if __name__ == "__main__":
    main()
