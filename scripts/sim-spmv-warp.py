#!/usr/bin/env python3
"""cuzk_spmv_warp's algorithm (cuda/prove.cuh), lane by lane: one warp's 32 rows summed by
chunks of 32 terms (row heads, prefix max, segmented scan, carries across chunks), checked
against plain row sums over random matrices. Models the algorithm, not the CUDA code."""
import random
P = 2**61-1
def warp_group(end, terms_val, nterms, rows, g):
    # returns out values for rows g*32.. and bad flag, emulating cuzk_spmv_warp's group
    lanes = range(32)
    real = [g*32+l < rows for l in lanes]
    start = [0]*32; stop=[0]*32
    for l in lanes:
        if real[l]:
            r = g*32+l
            start[l] = 0 if r == 0 else end[r-1]; stop[l] = end[r]
    if any(real[l] and (stop[l] > nterms or start[l] > stop[l]) for l in lanes):
        return None
    last = min(31, rows-1-g*32)
    frm = start[0]; to = stop[last]
    for l in lanes:
        if not real[l]: start[l] = stop[l] = to
    sums = [0]*32
    row = [0]*32
    base = frm
    while base < to:
        heads = [-1]*32
        for l in lanes:
            if start[l] < stop[l] and start[l] >= base and start[l]-base < 32:
                assert heads[start[l]-base] == -1
                heads[start[l]-base] = l
        h = heads[:]
        d = 1
        while d < 32:
            o = [h[l-d] if l >= d else h[l] for l in lanes]  # shfl_up returns own value if lane<d
            h = [max(h[l], o[l]) if l >= d else h[l] for l in lanes]
            d <<= 1
        carried = row[31]
        row = [h[l] if h[l] >= 0 else carried for l in lanes]
        v = [terms_val[base+l] if base+l < to else 0 for l in lanes]
        d = 1
        while d < 32:
            o = [v[l-d] if l >= d else v[l] for l in lanes]
            orow = [row[l-d] if l >= d else row[l] for l in lanes]
            v = [(v[l]+o[l]) % P if (l >= d and orow[l] == row[l]) else v[l] for l in lanes]
            d <<= 1
        nxt = [row[l+1] if l < 31 else row[l] for l in lanes]
        seen=set()
        for l in lanes:
            if l == 31 or nxt[l] != row[l]:
                assert row[l] not in seen; seen.add(row[l])
                sums[row[l]] = (sums[row[l]] + v[l]) % P
        base += 32
    return [sums[l] for l in lanes if real[l]]

random.seed(1)
for trial in range(3000):
    rows = random.randint(1, 200)
    kind = random.random()
    lens = []
    for r in range(rows):
        x = random.random()
        if kind < 0.3: L = random.choice([0,0,1,2,3])
        elif kind < 0.6: L = random.choice([0,1,2,40,70,255]) if x < 0.2 else random.randint(0,4)
        else: L = random.randint(0, 100) if x < 0.1 else random.randint(0,3)
        lens.append(L)
    end=[]; acc=0
    for L in lens: acc += L; end.append(acc)
    nterms = acc
    vals = [random.randrange(P) for _ in range(nterms)]
    want = [sum(vals[(end[r-1] if r else 0):end[r]]) % P for r in range(rows)]
    got = []
    for g in range((rows+31)//32):
        res = warp_group(end, vals, nterms, rows, g)
        got += res
    assert got == want, (trial, rows)
print("cuzk_spmv_warp model: 3000 random matrices, every row sum equal")
