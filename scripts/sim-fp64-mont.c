// sim-fp64-mont.c: a CPU model of a Montgomery multiplication over BLS12-381's base field in FP64
// arithmetic only (8 limbs of 48 bits held in doubles, every limb product split exactly by
// round-to-nearest FMAs), checked against a 64-bit-limb integer Montgomery multiplication (same
// R = 2^384), with the FP64 operations counted. It sizes the proposed split FP64/IMAD multiplier
// (cuda/NOTES.md): not used by the build. cc -O2 -mfma sim-fp64-mont.c -lm && ./a.out
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;
static const uint64_t P64[6] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                                0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
static uint64_t PINV64;  // -p^-1 mod 2^64

// Reference: CIOS Montgomery, a, b < p, result < p.
static void mont64(uint64_t r[6], const uint64_t a[6], const uint64_t b[6])
{
    uint64_t t[8] = {0};
    for (int i = 0; i < 6; i++) {
        u128 c = 0;
        for (int j = 0; j < 6; j++) {
            c += (u128)a[j] * b[i] + t[j];
            t[j] = (uint64_t)c;
            c >>= 64;
        }
        c += t[6];
        t[6] = (uint64_t)c;
        t[7] = (uint64_t)(c >> 64);
        uint64_t m = t[0] * PINV64;
        c = (u128)m * P64[0] + t[0];
        c >>= 64;
        for (int j = 1; j < 6; j++) {
            c += (u128)m * P64[j] + t[j];
            t[j - 1] = (uint64_t)c;
            c >>= 64;
        }
        c += t[6];
        t[5] = (uint64_t)c;
        t[6] = t[7] + (uint64_t)(c >> 64);
    }
    // conditional subtraction
    uint64_t s[6];
    u128 bw = 0;
    for (int j = 0; j < 6; j++) {
        u128 d = (u128)t[j] - P64[j] - bw;
        s[j] = (uint64_t)d;
        bw = (d >> 64) & 1;
    }
    int ge = t[6] != 0 || bw == 0;
    memcpy(r, ge ? s : t, sizeof(s));
}

// ---- FP64 model ----
static long ops;  // FP64 instructions (fma, add, sub, mul, compare/select count as one each)
static double fma_(double a, double b, double c) { ops++; return fma(a, b, c); }
static double add_(double a, double b) { ops++; return a + b; }
static double sub_(double a, double b) { ops++; return a - b; }
static double worst;  // largest |accumulator| seen (must stay below 2^53)
static void track(double x) { if (fabs(x) > worst) worst = fabs(x); }

static const double T48 = 281474976710656.0;             // 2^48
static const double TM48 = 1.0 / 281474976710656.0;      // 2^-48
static double C99;                                       // 3·2^99: s = a·b + C lands in [2^100, 2^101), ulp 2^48
static double C51;                                       // 3·2^51: rounds to integers
static double P48[8], PINV48;                            // p in 48-bit limbs; -p^-1 mod 2^48 (as a signed limb)

// a·b = hi + lo exactly: hi a multiple of 2^48 (returned as hi / 2^48), |lo| <= 2^47. |a·b| < 2^99.
static void split(double a, double b, double* H, double* lo)
{
    double s = fma_(a, b, C99);
    double hi = sub_(s, C99);
    *lo = fma_(a, b, -hi);
    *H = hi * TM48;  // exact power-of-two scaling; folded into the accumulating fma in a kernel
}

// x = q·2^48 + r with |r| <= 2^47 (x an integer-valued double below 2^53): returns r, adds q to *next.
static double carry(double x, double* next)
{
    double q = sub_(fma_(x, TM48, C51), C51);
    double r = fma_(q, -T48, x);
    *next = add_(*next, q);
    track(*next);
    return r;
}

static void mont48(double r[8], const double a[8], const double b[8])
{
    double t[17] = {0};
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            double H, lo;
            split(a[i], b[j], &H, &lo);
            t[i + j] = add_(t[i + j], lo);
            t[i + j + 1] = add_(t[i + j + 1], H);  // one fma(hi, 2^-48, t) in a kernel
            track(t[i + j]);
            track(t[i + j + 1]);
        }
    for (int i = 0; i < 8; i++) {
        t[i] = carry(t[i], &t[i + 1]);  // |t_i| <= 2^47 so that t_i·p' < 2^99
        double mh, m;
        split(t[i], PINV48, &mh, &m);   // m = t_i·(-p^-1) mod 2^48, signed, |m| <= 2^47
        for (int j = 0; j < 8; j++) {
            double H, lo;
            split(m, P48[j], &H, &lo);
            t[i + j] = add_(t[i + j], lo);
            t[i + j + 1] = add_(t[i + j + 1], H);
            track(t[i + j]);
            track(t[i + j + 1]);
        }
        if (fmod(t[i], T48) != 0) { fprintf(stderr, "column %d not divisible\n", i); exit(1); }
        t[i + 1] = fma_(t[i], TM48, t[i + 1]);  // t_i is a multiple of 2^48 now: carry it all
        track(t[i + 1]);
    }
    for (int k = 8; k < 15; k++)
        t[k] = carry(t[k], &t[k + 1]);
    for (int k = 0; k < 8; k++)
        r[k] = t[8 + k];  // signed limbs: value = Σ r_k 2^(48k), in (-p, 2p)
}

// ---- conversions (host side of the model, not counted) ----
static void to48(double d[8], const uint64_t x[6])
{
    for (int k = 0; k < 8; k++) {
        int bit = 48 * k, w = bit / 64, o = bit % 64;
        u128 v = (u128)x[w] >> o;
        if (w + 1 < 6)
            v |= (u128)x[w + 1] << (64 - o);
        d[k] = (double)(uint64_t)(v & ((((u128)1) << 48) - 1));
    }
}

// Signed 48-bit limbs to a reduced 6×64 value (mod p): Σ d_k 2^(48k) summed as a 512-bit two's
// complement number, then p added or subtracted until it lies in [0, p).
static void from48(uint64_t x[6], const double d[8])
{
    uint64_t tot[8] = {0};
    for (int k = 0; k < 8; k++) {
        int64_t v = (int64_t)d[k];
        uint64_t add[8] = {0};
        int bit = 48 * k, w = bit / 64, o = bit % 64;
        u128 mag = (u128)(uint64_t)(v < 0 ? -v : v) << o;
        add[w] = (uint64_t)mag;
        if (w + 1 < 8)
            add[w + 1] = (uint64_t)(mag >> 64);
        if (v < 0) {  // negate: two's complement
            u128 c = 1;
            for (int i = 0; i < 8; i++) {
                c += (uint64_t)~add[i];
                add[i] = (uint64_t)c;
                c >>= 64;
            }
        }
        u128 c = 0;
        for (int i = 0; i < 8; i++) {
            c += (u128)tot[i] + add[i];
            tot[i] = (uint64_t)c;
            c >>= 64;
        }
    }
    for (;;) {
        if ((int64_t)tot[7] < 0) {  // negative: add p
            u128 c = 0;
            for (int i = 0; i < 8; i++) {
                c += (u128)tot[i] + (i < 6 ? P64[i] : 0);
                tot[i] = (uint64_t)c;
                c >>= 64;
            }
            continue;
        }
        int ge = tot[7] != 0 || tot[6] != 0;
        if (!ge) {
            ge = 1;  // equal counts as >= p
            for (int i = 5; i >= 0; i--)
                if (tot[i] != P64[i]) {
                    ge = tot[i] > P64[i];
                    break;
                }
        }
        if (!ge)
            break;
        u128 bw = 0;
        for (int i = 0; i < 8; i++) {
            u128 dd = (u128)tot[i] - (i < 6 ? P64[i] : 0) - bw;
            tot[i] = (uint64_t)dd;
            bw = (dd >> 64) & 1;
        }
    }
    memcpy(x, tot, 6 * sizeof(uint64_t));
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

static void random_fp(uint64_t x[6])
{
    for (;;) {
        for (int i = 0; i < 6; i++) x[i] = next();
        x[5] &= 0x1fffffffffffffffULL;
        int lt = 0;
        for (int i = 5; i >= 0; i--) if (x[i] != P64[i]) { lt = x[i] < P64[i]; break; }
        if (lt) return;
    }
}

int main(int argc, char** argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    C99 = ldexp(3.0, 99);
    C51 = ldexp(3.0, 51);
    // -p^-1 mod 2^64 by Newton
    uint64_t inv = 1;
    for (int i = 0; i < 7; i++) inv *= 2 - P64[0] * inv;
    PINV64 = -inv;
    to48(P48, P64);
    {   // -p^-1 mod 2^48, as a signed limb in (-2^47, 2^47]
        int64_t v = (int64_t)(PINV64 & ((1ULL << 48) - 1));
        if (v > (1LL << 47)) v -= 1LL << 48;
        PINV48 = (double)v;
    }
    long bad = 0, op_total = 0;
    printf("P48 ={");
    for (int k = 0; k < 8; k++) printf(" %.0f,", P48[k]);
    printf(" } PINV48 = %.0f\n", PINV48);
    for (long it = 0; it < n; it++) {
        uint64_t a[6], b[6], want[6], got[6];
        if (it == 0) { memset(a, 0, sizeof a); random_fp(b); }
        else if (it == 1) { memcpy(a, P64, sizeof a); a[0] -= 1; memcpy(b, a, sizeof b); }
        else { random_fp(a); random_fp(b); }
        mont64(want, a, b);
        double a48[8], b48[8], r48[8];
        to48(a48, a);
        to48(b48, b);
        ops = 0;
        mont48(r48, a48, b48);
        op_total += ops;
        // Every 16th pair also chains 8 more products on the signed-limb output (a kernel's x *= b).
        for (int k = 0; it % 16 == 0 && k < 8; k++) {
            uint64_t w2[6];
            mont64(w2, want, b);
            memcpy(want, w2, sizeof want);
            double c48[8];
            memcpy(c48, r48, sizeof c48);
            mont48(r48, c48, b48);
        }
        from48(got, r48);
        if (memcmp(want, got, sizeof want) != 0 && ++bad <= 3)
            fprintf(stderr, "mismatch at %ld\n", it);
    }
    printf("%ld products, %ld mismatches; FP64 instructions per product %.1f (as counted: split 3 + 2 adds "
           "per limb product, fma-folded scalings counted once); largest accumulator 2^%.2f (exact below 2^53)\n",
           n, bad, (double)op_total / n, log2(worst));
    return bad != 0;
}
