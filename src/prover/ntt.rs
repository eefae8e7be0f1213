//! The H polynomial on the CPU: seven radix-2 NTTs of size 2^k, written to be cache-friendly.
//!
//! Two in-place transforms share one twiddle table T_u (u a primitive n-th root), stored in
//! "bit-reversed block" order: T[m + i] = u^(bitrev_m(i) · n/2m) for levels m = 1, 2, 4 … n/2.
//!   ct(x, T_u) = bitrev(DFT_u(x))   (Cooley-Tukey butterflies, natural in, bit-reversed out)
//!   gs(x, T_u) = DFT_u(bitrev(x))   (Gentleman-Sande butterflies, bit-reversed in, natural out)
//! Each recursion level touches one block with one twiddle; once a block fits in cache, all
//! deeper levels run in cache, so the whole array streams through memory only ~k−15 times
//! per transform instead of k. The bit-reversed intermediate order is never permuted: the coset
//! scaling between the transforms uses bit-reversed powers, and the final permutation is
//! fused into the caller's scalar serialization.
//!
//! H = coset_iNTT((coset_NTT(A)·coset_NTT(B) − coset_NTT(C)) / Z(g)), exactly bellperson's
//! EvaluationDomain result (coset generator g = Fr::MULTIPLICATIVE_GENERATOR).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

/// Blocks at most this long are transformed by one thread, entirely in cache (1 MiB).
const SERIAL_BLOCK: usize = 1 << 15;
/// Butterfly loops at least this long are split across threads.
const PAR_LOOP: usize = 1 << 14;

/// Per-domain constants, built once per size and shared; the twiddle tables of each path
/// (scalar here, AVX-512 IFMA in [`super::ifma`]) on first use, so only the one in use is held.
pub struct Domain {
    pub log_n: u32,
    pub n: usize,
    omega: Scalar,
    /// 1 / Z(g) = 1 / (g^n − 1).
    pub(crate) z_inv: Scalar,
    /// 1 / (n · Z(g)): C's coefficients come out of the unscaled iNTT times n (see `h_bitreversed`).
    pub(crate) zn_inv: Scalar,
    scalar: OnceLock<ScalarTables>,
    #[cfg(target_arch = "x86_64")]
    ifma: OnceLock<super::ifma::NttTables>,
}

/// The scalar path's tables.
pub(crate) struct ScalarTables {
    pub tw_fwd: Vec<Scalar>,
    pub tw_inv: Vec<Scalar>,
    /// g^bitrev(j) / n as lo/hi factor tables (see `scale_br`).
    pub coset_fwd: (Vec<Scalar>, Vec<Scalar>),
    /// g^-bitrev(j) / n.
    pub coset_inv: (Vec<Scalar>, Vec<Scalar>),
}

fn bitrev(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

fn twiddles(u: Scalar, log_n: u32) -> Vec<Scalar> {
    let n = 1usize << log_n;
    let mut t = vec![Scalar::ZERO; n.max(2)];
    // Level m (m = 2^l, l < log_n): base = u^(n/2m), a primitive 2m-th root.
    let levels: Vec<(usize, u32)> = (0..log_n).map(|l| (1usize << l, l)).collect();
    let mut parts: Vec<&mut [Scalar]> = Vec::new();
    {
        let mut rest = &mut t[1..];
        for &(m, _) in &levels {
            let (head, tail) = rest.split_at_mut(m);
            parts.push(head);
            rest = tail;
        }
    }
    parts.into_par_iter().zip(levels.par_iter()).for_each(|(slot, &(m, l))| {
        let base = u.pow_vartime([(n / (2 * m)) as u64]);
        let mut p = Scalar::ONE;
        let mut pows = Vec::with_capacity(m);
        for _ in 0..m {
            pows.push(p);
            p *= base;
        }
        for (i, s) in slot.iter_mut().enumerate() {
            *s = pows[bitrev(i, l)];
        }
    });
    t
}

/// Factor tables for c · h^bitrev_k(j): j = hi·2^L + lo ⇒ bitrev(j) = bitrev_L(lo)·2^(k−L) + bitrev_(k−L)(hi).
fn bitrev_powers(h: Scalar, c: Scalar, log_n: u32) -> (Vec<Scalar>, Vec<Scalar>) {
    let lo_bits = log_n / 2;
    let hi_bits = log_n - lo_bits;
    let h_hi = h.pow_vartime([1u64 << hi_bits]);
    let lo = (0..1usize << lo_bits).map(|x| h_hi.pow_vartime([bitrev(x, lo_bits) as u64])).collect();
    let hi = (0..1usize << hi_bits).map(|x| c * h.pow_vartime([bitrev(x, hi_bits) as u64])).collect();
    (lo, hi)
}

/// `cell`'s value, built by `build` outside any lock when missing. The builds run rayon jobs, and
/// a thread waiting in one may steal a job that asks for the same value: a `OnceLock` initializer
/// would then wait for itself (a deadlock seen with 16 threads, the three NTTs of one proof asking
/// for one domain's tables). First users racing may each build; one value is kept.
fn get_or_build<T>(cell: &OnceLock<T>, build: impl FnOnce() -> T) -> &T {
    if let Some(v) = cell.get() {
        return v;
    }
    let _ = cell.set(build()); // lost the race: ours is dropped
    cell.get().expect("set above")
}

impl Domain {
    fn build(log_n: u32) -> Domain {
        let n = 1usize << log_n;
        let mut omega = Scalar::ROOT_OF_UNITY;
        for _ in log_n..Scalar::S {
            omega = omega.square();
        }
        let g = Scalar::MULTIPLICATIVE_GENERATOR;
        let z_inv = (g.pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
        Domain {
            log_n,
            n,
            omega,
            z_inv,
            zn_inv: z_inv * Scalar::from(n as u64).invert().unwrap(),
            scalar: OnceLock::new(),
            #[cfg(target_arch = "x86_64")]
            ifma: OnceLock::new(),
        }
    }

    pub(crate) fn scalar_tables(&self) -> &ScalarTables {
        get_or_build(&self.scalar, || self.make_scalar_tables())
    }

    fn make_scalar_tables(&self) -> ScalarTables {
        {
            let omega_inv = self.omega.invert().unwrap();
            let g = Scalar::MULTIPLICATIVE_GENERATOR;
            let g_inv = g.invert().unwrap();
            let n_inv = Scalar::from(self.n as u64).invert().unwrap();
            let (tw_fwd, tw_inv) = rayon::join(|| twiddles(self.omega, self.log_n), || twiddles(omega_inv, self.log_n));
            ScalarTables {
                tw_fwd,
                tw_inv,
                coset_fwd: bitrev_powers(g, n_inv, self.log_n),
                coset_inv: bitrev_powers(g_inv, n_inv, self.log_n),
            }
        }
    }

    /// The IFMA path's tables, converted from the scalar ones (which are then dropped unless
    /// the scalar path already holds them).
    #[cfg(target_arch = "x86_64")]
    pub(crate) fn ifma_tables(&self) -> &super::ifma::NttTables {
        get_or_build(&self.ifma, || match self.scalar.get() {
            Some(t) => super::ifma::NttTables::build(self, t),
            None => super::ifma::NttTables::build(self, &self.make_scalar_tables()),
        })
    }

    /// The shared domain of size 2^log_n.
    pub fn get(log_n: u32) -> Arc<Domain> {
        static CACHE: OnceLock<Mutex<HashMap<u32, Arc<Domain>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(d) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&log_n) {
            return d.clone();
        }
        let d = Arc::new(Domain::build(log_n));
        cache.lock().unwrap_or_else(|e| e.into_inner()).insert(log_n, d.clone());
        d
    }
}

fn butterflies(lo: &mut [Scalar], hi: &mut [Scalar], f: impl Fn(&mut Scalar, &mut Scalar) + Sync) {
    if lo.len() >= PAR_LOOP {
        lo.par_chunks_mut(PAR_LOOP / 4)
            .zip(hi.par_chunks_mut(PAR_LOOP / 4))
            .for_each(|(l, h)| l.iter_mut().zip(h.iter_mut()).for_each(|(a, b)| f(a, b)));
    } else {
        lo.iter_mut().zip(hi.iter_mut()).for_each(|(a, b)| f(a, b));
    }
}

/// x ← bitrev(DFT_u(x)) for the block `x` at level `m`, block index `i`.
pub(crate) fn ct(x: &mut [Scalar], tw: &[Scalar], m: usize, i: usize) {
    let t = x.len() / 2;
    if t == 0 {
        return;
    }
    let w = tw[m + i];
    let (lo, hi) = x.split_at_mut(t);
    if m == 1 {
        butterflies(lo, hi, |a, b| {
            let v = *b;
            *b = *a - v;
            *a += v;
        });
    } else {
        butterflies(lo, hi, |a, b| {
            let v = *b * w;
            *b = *a - v;
            *a += v;
        });
    }
    if x.len() > SERIAL_BLOCK {
        let (lo, hi) = x.split_at_mut(t);
        rayon::join(|| ct(lo, tw, 2 * m, 2 * i), || ct(hi, tw, 2 * m, 2 * i + 1));
    } else {
        let (lo, hi) = x.split_at_mut(t);
        ct(lo, tw, 2 * m, 2 * i);
        ct(hi, tw, 2 * m, 2 * i + 1);
    }
}

/// x ← DFT_u(bitrev(x)): the levels of `ct` in reverse, with inverse butterflies.
pub(crate) fn gs(x: &mut [Scalar], tw: &[Scalar], m: usize, i: usize) {
    let t = x.len() / 2;
    if t == 0 {
        return;
    }
    {
        let serial = x.len() <= SERIAL_BLOCK;
        let (lo, hi) = x.split_at_mut(t);
        if !serial {
            rayon::join(|| gs(lo, tw, 2 * m, 2 * i), || gs(hi, tw, 2 * m, 2 * i + 1));
        } else {
            gs(lo, tw, 2 * m, 2 * i);
            gs(hi, tw, 2 * m, 2 * i + 1);
        }
    }
    let w = tw[m + i];
    let (lo, hi) = x.split_at_mut(t);
    if m == 1 {
        butterflies(lo, hi, |a, b| {
            let d = *a - *b;
            *a += *b;
            *b = d;
        });
    } else {
        butterflies(lo, hi, |a, b| {
            let d = *a - *b;
            *a += *b;
            *b = d * w;
        });
    }
}

/// x[j] *= lo[j mod 2^L] · hi[j >> L]: bit-reversed-order powers, two muls per element.
fn scale_br(x: &mut [Scalar], (lo, hi): &(Vec<Scalar>, Vec<Scalar>)) {
    let l = lo.len();
    x.par_chunks_mut(l).zip(hi.par_iter()).for_each(|(chunk, h)| {
        for (v, f) in chunk.iter_mut().zip(lo.iter()) {
            *v *= *f * h;
        }
    });
}

/// Evaluations on the domain (natural order) → evaluations on the coset g·ω^i (natural order).
fn to_coset(d: &Domain, x: &mut [Scalar]) {
    let t = d.scalar_tables();
    ct(x, &t.tw_inv, 1, 0); // bitrev(n · coefficients)
    scale_br(x, &t.coset_fwd); // bitrev(coefficients · g^i)
    gs(x, &t.tw_fwd, 1, 0); // coset evaluations, natural order
}

/// H's coefficients in bit-reversed order (length 2^k; the top one, at bitrev(n−1), is zero for
/// a satisfied circuit and is not used), from the A, B, C evaluations (each zero-padded to the
/// domain size). B's and C's buffers come back spent, for the caller to free off the critical path.
///
/// bellperson's H is cosetiNTT((A·B − C on the coset g·ω^i) / Z(g)). The coset iNTT is linear and
/// returns a polynomial of degree < n as it was, so C never goes to the coset: H = (cosetiNTT(A·B
/// on the coset) − C's coefficients) / Z(g), the same values with one NTT fewer.
pub fn h_bitreversed(mut a: Vec<Scalar>, mut b: Vec<Scalar>, mut c: Vec<Scalar>) -> (Arc<Domain>, Vec<Scalar>, [Vec<Scalar>; 2]) {
    let n = a.len().max(b.len()).max(c.len()).max(1).next_power_of_two();
    let d = Domain::get(n.trailing_zeros());
    for v in [&mut a, &mut b, &mut c] {
        v.resize(n, Scalar::ZERO);
    }
    let t = d.scalar_tables(); // built once here, not by each of the three racing NTTs
    rayon::join(|| to_coset(&d, &mut a), || rayon::join(|| to_coset(&d, &mut b), || ct(&mut c, &t.tw_inv, 1, 0)));
    times(&mut a, &b);
    ct(&mut a, &t.tw_inv, 1, 0);
    scale_br(&mut a, &t.coset_inv); // bitrev(coefficients of A·B mod X^n − g^n)
    minus_c(&d, &mut a, &c); // c: bitrev(n · C's coefficients)
    (d, a, [b, c])
}

/// H's n − 1 coefficients (the top one of the domain is zero for a satisfied circuit and not
/// used) as canonical little-endian bytes in natural order — the scalars of ΣH — from the A, B,
/// C evaluations; on AVX-512 IFMA where the CPU has it. The inputs' and the working buffers come
/// back for the caller to free off the critical path.
pub fn h_coefficients(a: Vec<Scalar>, b: Vec<Scalar>, c: Vec<Scalar>) -> (Arc<Domain>, Vec<u8>, super::Garbage) {
    let n = a.len().max(b.len()).max(c.len()).max(1).next_power_of_two();
    #[cfg(target_arch = "x86_64")]
    if n >= 64 && super::ifma::available() {
        let d = Domain::get(n.trailing_zeros());
        let (bytes, spent) = super::ifma::h_coefficients(&d, &a, &b, &c);
        let spent_bytes = spent.iter().map(|v| (v.capacity() * std::mem::size_of_val(&v[0])) as u64).sum::<u64>();
        let inputs = (32 * (a.capacity() + b.capacity() + c.capacity())) as u64;
        return (d, bytes, vec![(Box::new(spent), spent_bytes), (Box::new((a, b, c)), inputs)]);
    }
    let (d, h, spent) = h_bitreversed(a, b, c);
    let m = d.n - 1;
    let mut bytes = vec![0u8; 32 * m];
    bytes.par_chunks_exact_mut(32).enumerate().for_each(|(i, out)| out.copy_from_slice(&h[natural_index(&d, i)].to_bytes_le()));
    let garbage_bytes = (32 * (h.capacity() + spent[0].capacity() + spent[1].capacity())) as u64;
    (d, bytes, vec![(Box::new((h, spent)), garbage_bytes)])
}

/// a ← a·b, pointwise.
fn times(a: &mut [Scalar], b: &[Scalar]) {
    a.par_chunks_mut(4096).zip(b.par_chunks(4096)).for_each(|(a, b)| {
        for (a, b) in a.iter_mut().zip(b) {
            *a *= b;
        }
    });
}

/// a ← (a − c/n) / Z(g), for c = n · C's coefficients.
fn minus_c(d: &Domain, a: &mut [Scalar], c: &[Scalar]) {
    let (z, zn) = (d.z_inv, d.zn_inv);
    a.par_chunks_mut(4096).zip(c.par_chunks(4096)).for_each(|(a, c)| {
        for (a, c) in a.iter_mut().zip(c) {
            *a = *a * z - *c * zn;
        }
    });
}

/// The position in natural order of bit-reversed index `j`.
pub fn natural_index(d: &Domain, j: usize) -> usize {
    bitrev(j, d.log_n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Runs `f` on another thread; fails instead of hanging if it has not returned in `secs`.
    fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()).ok());
        rx.recv_timeout(std::time::Duration::from_secs(secs)).expect("deadlocked")
    }

    #[test]
    fn a_build_that_asks_for_its_own_value_does_not_deadlock() {
        let v = within(10, || {
            let cell = OnceLock::new();
            // What a stolen rayon job does: asks for the value while it is being built.
            let outer = *get_or_build(&cell, || *get_or_build(&cell, || 1) + 1);
            (outer, *cell.get().unwrap())
        });
        assert_eq!(v, (1, 1), "the first value set is kept and returned to both");
    }

    #[test]
    fn fresh_domains_three_ntts_at_once_on_many_threads() {
        // Three NTTs at once (as the CPU prover runs A's and B's coset NTTs and C's iNTT), each
        // asking a fresh domain for its tables while the tables' build waits in rayon jobs (this
        // deadlocked a 16-core machine; with the tables built inside a OnceLock it hangs here too,
        // within seconds).
        within(60, || {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(12).build().unwrap();
            pool.install(|| {
                for i in 0..60 {
                    let d = Domain::build(10 + i % 3);
                    let mut v: Vec<Vec<Scalar>> = (0..3).map(|k| vec![Scalar::from(k as u64 + 1); d.n]).collect();
                    let [a, b, c] = &mut v[..] else { unreachable!() };
                    rayon::join(|| to_coset(&d, a), || rayon::join(|| to_coset(&d, b), || to_coset(&d, c)));
                }
            })
        });
    }

    fn naive_dft(x: &[Scalar], u: Scalar) -> Vec<Scalar> {
        let n = x.len();
        (0..n)
            .map(|k| {
                let uk = u.pow_vartime([k as u64]);
                let mut acc = Scalar::ZERO;
                let mut p = Scalar::ONE;
                for v in x {
                    acc += *v * p;
                    p *= uk;
                }
                acc
            })
            .collect()
    }

    #[test]
    fn ct_and_gs_are_bitreversed_dfts() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for log_n in [1u32, 2, 3, 5, 8] {
            let d = Domain::get(log_n);
            let n = 1 << log_n;
            let mut omega = Scalar::ROOT_OF_UNITY;
            for _ in log_n..Scalar::S {
                omega = omega.square();
            }
            let x: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
            let want = naive_dft(&x, omega);
            let mut y = x.clone();
            ct(&mut y, &d.scalar_tables().tw_fwd, 1, 0);
            for j in 0..n {
                assert_eq!(y[j], want[bitrev(j, log_n)], "ct n={n} j={j}");
            }
            let mut br: Vec<Scalar> = (0..n).map(|j| x[bitrev(j, log_n)]).collect();
            gs(&mut br, &d.scalar_tables().tw_fwd, 1, 0);
            assert_eq!(br, want, "gs n={n}");
        }
    }

    #[test]
    fn h_matches_bellperson_on_random_inputs() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        for len in [1usize, 2, 7, 1000, 1 << 12, (1 << 16) + 3] {
            let r = |rng: &mut rand_chacha::ChaCha8Rng| (0..len).map(|_| Scalar::random(&mut *rng)).collect::<Vec<_>>();
            let (a, b, c) = (r(&mut rng), r(&mut rng), r(&mut rng));
            let want = super::super::cpu::compute_h_bellperson(a.clone(), b.clone(), c.clone()).unwrap();
            let (d, br, _) = h_bitreversed(a, b, c);
            let mut got = vec![Scalar::ZERO; d.n];
            for (j, v) in br.iter().enumerate() {
                got[natural_index(&d, j)] = *v;
            }
            got.pop(); // bellperson drops the top coefficient (zero for satisfied circuits)
            assert_eq!(got, want, "len {len}");
        }
    }

    #[test]
    fn h_coefficients_match_bellperson_on_every_path() {
        // The IFMA path where this CPU has it (domains of 64 points and more), else the scalar one.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for len in [1usize, 9, 33, 64, 65, 1000, 1 << 12, (1 << 16) + 3] {
            let r = |rng: &mut rand_chacha::ChaCha8Rng| (0..len).map(|_| Scalar::random(&mut *rng)).collect::<Vec<_>>();
            let (a, b, c) = (r(&mut rng), r(&mut rng), r(&mut rng));
            let want = super::super::cpu::compute_h_bellperson(a.clone(), b.clone(), c.clone()).unwrap();
            let (d, bytes, _) = h_coefficients(a, b, c);
            assert_eq!(bytes.len(), 32 * (d.n - 1));
            let got: Vec<Scalar> = bytes.chunks_exact(32).map(|s| Scalar::from_bytes_le(s.try_into().unwrap()).unwrap()).collect();
            assert_eq!(got, want, "len {len} (IFMA: {})", super::super::ifma::available());
        }
        // Edge values: all zero, all r − 1.
        for v in [Scalar::ZERO, -Scalar::ONE] {
            let x = vec![v; 1 << 10];
            let want = super::super::cpu::compute_h_bellperson(x.clone(), x.clone(), x.clone()).unwrap();
            let (_, bytes, _) = h_coefficients(x.clone(), x.clone(), x);
            let got: Vec<Scalar> = bytes.chunks_exact(32).map(|s| Scalar::from_bytes_le(s.try_into().unwrap()).unwrap()).collect();
            assert_eq!(got, want);
        }
    }
}
