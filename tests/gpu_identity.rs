//! The CUDA backend against the CPU backend with fixed r, s: proofs must be byte-identical, on
//! synthetic circuits from 2^10 to 2^20 constraints (non-power-of-two sizes, all-zero and
//! all-one witness regions, a single constraint) and on the real 2 KiB partition; device memory
//! must return to its level after 50 proofs; ΣH's big-MSM variants must equal sppark's MSM. Every
//! test passes with a "SKIP" line when no CUDA device is usable (CI, the CPU-only build machine).
//! The same checks, plus timings, run from `cuzk-gpu selftest` on the GPU machine.
#![cfg(feature = "cuda")]

mod common;

use bellperson::groth16::{generate_random_parameters, prepare_verifying_key, verify_proof, Proof};
use blstrs::{Bls12, Scalar};
use cuzk::engine::{Engine, EngineConfig};
use cuzk::error::Status;
use cuzk::prover::cuda_synthetic::{clone_assignment, random_params, Shape, Toy};
use cuzk::prover::{Backend, CpuBackend, CudaBackend, CudaOnesSums};
use cuzk::srs::{Srs, Validation};
use cuzk::synth::{Assignment, SizeHint};
use ff::Field;
use rand::SeedableRng;

fn gpu() -> Option<CudaBackend> {
    match CudaBackend::new() {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("SKIP: no CUDA device: {}", e.message);
            None
        }
    }
}

fn bytes(p: &Proof<Bls12>) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).unwrap();
    v
}

/// Parts, then whole proofs, GPU vs CPU; verified when the params are real.
fn check(gpu: &CudaBackend, name: &str, srs: &Srs, asg: Assignment, verify: bool, seed: u64) {
    let public: Vec<Scalar> = asg.input[1..].to_vec();
    let parts = gpu.check_parts(srs, &asg).unwrap();
    let bad: Vec<_> = parts.iter().filter(|(_, ok)| !ok).collect();
    assert!(bad.is_empty(), "{name}: GPU parts differ from the CPU: {bad:?}");
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let cpu = CpuBackend::default().prove(srs, clone_assignment(&asg), r, s).unwrap().proof;
    // Classified beforehand as the engine's synthesis threads do: the sparse work but ΣH then runs
    // beside stage H (unless the backend says otherwise); unprepared, after it.
    let mut prepared = clone_assignment(&asg);
    gpu.prepare_now(&mut prepared).unwrap();
    let g = gpu.prove(srs, asg, r, s).unwrap().proof;
    assert_eq!(bytes(&cpu), bytes(&g), "{name}: GPU proof differs from the CPU proof");
    let p = gpu.prove(srs, prepared, r, s).unwrap().proof;
    assert_eq!(bytes(&cpu), bytes(&p), "{name}: GPU proof of the classified witness differs from the CPU proof");
    if verify {
        assert!(verify_proof(&prepare_verifying_key(&srs.params.vk), &g, &public).unwrap(), "{name}: does not verify");
    }
}

fn toy(gpu: &CudaBackend, c: Toy, real_params: bool, seed: u64) {
    let asg = Assignment::synthesize(c.clone(), SizeHint::default()).unwrap();
    let params = if real_params {
        generate_random_parameters::<Bls12, _, _>(c.clone(), &mut rand_chacha::ChaCha20Rng::seed_from_u64(seed))
            .unwrap()
    } else {
        random_params(Shape::of(&asg), seed)
    };
    let srs = Srs::from_parameters(common::PROOF, params);
    check(gpu, &format!("{c:?}"), &srs, asg, real_params, seed);
}

#[test]
fn small_circuits_byte_identical_and_verify() {
    let Some(gpu) = gpu() else { return };
    toy(&gpu, Toy { constraints: 1, inputs: 0, mode: 2 }, true, 1);
    toy(&gpu, Toy { constraints: 300, inputs: 0, mode: 0 }, true, 2);
    toy(&gpu, Toy { constraints: 300, inputs: 2, mode: 1 }, true, 3);
    toy(&gpu, Toy { constraints: 1000, inputs: 3, mode: 2 }, true, 4);
    toy(&gpu, Toy { constraints: (1 << 10) - 2, inputs: 1, mode: 2 }, true, 5);
    toy(&gpu, Toy { constraints: 1000, inputs: 3, mode: 3 }, true, 6);
}

/// Toys of 2^10 to 2^20 constraints, their L, A, B queries dense (modes 1, 2: one Pippenger over
/// each query's bases) or sparse (modes 0, 3, 4: ones bitmaps, gathered significant bases).
#[test]
fn sizes_2_10_to_2_20_byte_identical() {
    let Some(gpu) = gpu() else { return };
    toy(&gpu, Toy { constraints: (1 << 12) + 17, inputs: 2, mode: 2 }, false, 10);
    toy(&gpu, Toy { constraints: (1 << 13) - 1, inputs: 0, mode: 0 }, false, 11);
    toy(&gpu, Toy { constraints: (1 << 13) - 3, inputs: 2, mode: 1 }, false, 12);
    for lg in (10..=20).step_by(2) {
        toy(&gpu, Toy { constraints: (1 << lg) - 2, inputs: 1, mode: 2 }, false, 20 + lg as u64);
        toy(&gpu, Toy { constraints: (1 << lg) - 2, inputs: 1, mode: 3 }, false, 50 + lg as u64);
    }
    toy(&gpu, Toy { constraints: (1 << 18) + 5, inputs: 4, mode: 2 }, false, 40);
    toy(&gpu, Toy { constraints: (1 << 18) + 5, inputs: 4, mode: 4 }, false, 41);
    toy(&gpu, Toy { constraints: (1 << 16) + 3, inputs: 2, mode: 1 }, false, 43);
    // A classified witness with the sparse work after stage H, between proofs that ran it beside.
    gpu.set_sparse_beside_h(false);
    toy(&gpu, Toy { constraints: (1 << 16) - 2, inputs: 1, mode: 2 }, false, 44);
    toy(&gpu, Toy { constraints: (1 << 16) - 2, inputs: 1, mode: 3 }, false, 42);
    gpu.set_sparse_beside_h(true);
    toy(&gpu, Toy { constraints: (1 << 15) - 2, inputs: 2, mode: 2 }, false, 45);
    // The sums of ones by affine rounds (the default from 2^24 bases) at sizes that run sppark's
    // batch addition by default: sparse witnesses, and beside stage H or after it.
    gpu.set_ones_sums(CudaOnesSums::Rounds);
    toy(&gpu, Toy { constraints: (1 << 12) + 17, inputs: 2, mode: 3 }, false, 46);
    toy(&gpu, Toy { constraints: (1 << 13) - 3, inputs: 2, mode: 4 }, false, 47);
    toy(&gpu, Toy { constraints: (1 << 18) + 5, inputs: 4, mode: 3 }, false, 48);
    gpu.set_sparse_beside_h(false);
    toy(&gpu, Toy { constraints: (1 << 16) - 2, inputs: 1, mode: 3 }, false, 49);
    gpu.set_sparse_beside_h(true);
    gpu.set_ones_sums(CudaOnesSums::BySize);
}

/// The 2 KiB sector fixture's SRS and its parsed C1.
fn fixture_2kib() -> (Srs, cuzk::kinds::porep::SealJobInputs) {
    let f = common::fixture();
    let srs = Srs::load(common::PROOF, &f.params, Validation::None).unwrap();
    let inputs = cuzk::kinds::porep::parse_c1(&f.c1, &f.sector.prover_id, f.sector.sector_id).unwrap();
    (srs, inputs)
}

#[test]
fn real_2kib_partition_byte_identical() {
    let Some(gpu) = gpu() else { return };
    let (srs, inputs) = fixture_2kib();
    let asg = inputs.circuits.synthesize(0, srs.size_hint()).unwrap();
    check(&gpu, "2 KiB partition 0", &srs, asg, true, 7);
}

#[test]
fn device_memory_returns_to_baseline_over_50_proofs() {
    let Some(gpu) = gpu() else { return };
    let asg =
        Assignment::synthesize(Toy { constraints: (1 << 14) - 2, inputs: 1, mode: 2 }, SizeHint::default()).unwrap();
    let srs = Srs::from_parameters(common::PROOF, random_params(Shape::of(&asg), 3));
    let free = || gpu.device_info(0).unwrap().free_bytes;
    let (r, s) = (Scalar::from(3u64), Scalar::from(4u64));
    let first = bytes(&gpu.prove(&srs, clone_assignment(&asg), r, s).unwrap().proof);
    let baseline = free();
    for _ in 1..50 {
        assert_eq!(bytes(&gpu.prove(&srs, clone_assignment(&asg), r, s).unwrap().proof), first);
    }
    let after = free();
    assert!(after + (1 << 20) >= baseline, "device memory leaked: free {baseline} -> {after} bytes");
}

#[test]
fn backend_selection_names_why_cuda_is_unavailable() {
    let cfg = |b: &str| EngineConfig { backend: b.into(), ..Default::default() };
    let on = |b: &str, d: usize| EngineConfig { devices: Some(vec![d]), ..cfg(b) };
    match gpu() {
        Some(g) => {
            assert_eq!(Engine::new(cfg("cuda")).unwrap().backend_name(), "cuda");
            assert_eq!(Engine::new(cfg("auto")).unwrap().backend_name(), "cuda");
            assert_eq!(Engine::new(on("cuda", 0)).unwrap().backend_name(), "cuda");
            // A device that does not exist is a mistake under "auto" too, not a CPU fallback.
            for b in ["cuda", "auto"] {
                let e = Engine::new(on(b, g.device_count())).err().expect("a device past the last one");
                assert_eq!(e.status, Status::InvalidArgument, "{b}: {}", e.message);
            }
        }
        None => {
            let e = Engine::new(cfg("cuda")).err().expect("cuda without a device must fail");
            assert_eq!(e.status, Status::Unsupported);
            assert!(e.message.contains("CUDA"), "{}", e.message);
            assert_eq!(Engine::new(cfg("auto")).unwrap().backend_name(), "cpu");
            // Naming a device that is not there is a mistake, not a reason to prove on the CPU.
            let e = Engine::new(on("auto", 0)).err().expect("auto with a device that does not exist");
            assert_eq!(e.status, Status::InvalidArgument, "{}", e.message);
            assert_eq!(Engine::new(on("cuda", 0)).err().expect("no device").status, Status::Unsupported);
        }
    }
}

/// ΣH's one-pass big-MSM (cuda/msm_big.cuh) against sppark's Pippenger on the same input, both
/// ways its buckets are summed: affine rounds (cuda/msm_affine.cuh; ΣH's path) and XYZZ sums
/// alone (the fallback where the device cannot lend the rounds' buffers), with 12-bit windows (8
/// rounds instead of 4), 16-bit, and 22-bit windows, whose 2^21 buckets outnumber the points,
/// and the scalars reduced once or per window.
/// 2^20 scalars over 2^16 bases tiled, two of them the identity, so buckets hold repeated bases
/// with both signs: the rounds meet doublings, P + (−P) and infinity inputs.
#[test]
fn big_msm_variants_equal_sppark() {
    use group::prime::PrimeCurveAffine;
    let Some(gpu) = gpu() else { return };
    let mut points = cuzk::prover::cuda_synthetic::g1_points(1 << 16, 3);
    points[1] = blstrs::G1Affine::identity();
    points[40_000] = blstrs::G1Affine::identity();
    // 822 and 22: 22-bit windows, more buckets (2^21) than points (the bucket-size sort once wrote
    // past buffers sized by the points).
    // 7222: 822 with the scalars kept in Montgomery form (reduced in every window), the others
    // take theirs as spent (out of Montgomery form once), as proofs do.
    let windows = [16, 816, 812, 822, 22, 7222];
    let ((peer, _), ours) = gpu.msm_bench(0, &points, 1 << 20, &windows, 0x5eed).unwrap();
    for (&w, (sum, _, _)) in windows.iter().zip(&ours) {
        assert_eq!(sum, &peer, "window code {w}: the big-MSM's sum differs from sppark's");
    }
}

/// The sums of the bases whose scalar is one (cuda/sum_ones.cuh) equal sppark's batch addition over
/// the same pseudo-random bitmap: in one pass, and in passes of 2^17 entries (the several-pass path
/// the 32 GiB shape takes, at a size the test can run), with infinity among the bases.
#[test]
fn sums_of_ones_equal_sppark() {
    use group::prime::PrimeCurveAffine;
    let Some(gpu) = gpu() else { return };
    let mut points = cuzk::prover::cuda_synthetic::g1_points(1 << 16, 5);
    points[2] = blstrs::G1Affine::identity();
    points[33_333] = blstrs::G1Affine::identity();
    for (n, chunk) in [(1usize << 20, 0usize), (1 << 20, 1 << 17), (1000, 0), (1000, 100)] {
        let ((ours, _), (peer, _)) = gpu.ones_bench(0, &points, n, chunk, 0x0e5 + n as u64).unwrap();
        assert_eq!(ours, peer, "2^{} bits, passes of {chunk}: the sums differ", n.trailing_zeros());
    }
}

/// WinningPoSt, WindowPoSt and SnapDeals on the GPU: each proved through an engine with backend
/// "cuda" and accepted by filecoin-proofs' verifier, and every partition's GPU proof equal to
/// the CPU backend's for fixed r, s (which equals bellperson's: tests/proof_kinds.rs).
#[test]
fn every_proof_kind_on_the_gpu() {
    let Some(gpu) = gpu() else { return };
    let (k, engine) = kinds_engine("cuda");
    let (r, s) = (Scalar::from(7u64), Scalar::from(11u64));
    for (name, request) in k.requests() {
        let inputs = request.parse().unwrap();
        let srs = engine.srs_get(inputs.circuit).unwrap().unwrap();
        for part in 0..inputs.circuits.partitions() {
            let asg = inputs.circuits.synthesize(part, srs.size_hint()).unwrap();
            let cpu = CpuBackend::default().prove(&srs, clone_assignment(&asg), r, s).unwrap().proof;
            let g = gpu.prove(&srs, asg, r, s).unwrap().proof;
            assert_eq!(bytes(&cpu), bytes(&g), "{name} partition {part}: GPU proof differs from the CPU proof");
        }
        let id = engine.submit_proof(cuzk::engine::Submission { request, priority: None, request_id: None }).unwrap();
        let snap = engine.wait(id, Some(std::time::Duration::from_secs(300))).unwrap();
        let result = snap.result.unwrap_or_else(|| panic!("{name}: {:?}", snap.error));
        assert_eq!(result.backend, "cuda", "{name}");
        assert!(common::filecoin_verify_kind(&k, name, &result.proof), "{name}: filecoin-proofs rejected the GPU proof");
        eprintln!("{name}: {} partition(s) byte-identical on the GPU; engine proof verified by filecoin-proofs", inputs.circuits.partitions());
    }
}

/// The kind fixtures, and an engine with `backend` that has loaded each kind's SRS.
fn kinds_engine(backend: &str) -> (cuzk::fixtures::KindFixtures, Engine) {
    let k = common::kind_fixtures();
    let params_dir = cuzk::fixtures::params_dir(&cuzk::fixtures::default_root());
    let engine = Engine::new(EngineConfig { backend: backend.into(), params_dir: Some(params_dir), ..Default::default() }).unwrap();
    for c in k.circuits() {
        engine.srs_load(c, None).unwrap();
    }
    (k, engine)
}

/// A VRAM budget decides where the real 2 KiB partition is proved: resident with room for two
/// lanes or one, streamed (cuda/stream.cuh) below that, and on the CPU (counted as a CPU
/// fallback) below the streamed mode's floor — every time the same bytes as the CPU backend's
/// proof for fixed r, s.
#[test]
fn vram_budgets_decide_lanes_streaming_or_the_cpu() {
    if gpu().is_none() {
        return;
    }
    use cuzk::prover::vram::{plan, AbcAt, CircuitSizes, Footprint, Plan, MIB};
    let (srs, inputs) = fixture_2kib();
    let asg = inputs.circuits.synthesize(0, srs.size_hint()).unwrap();
    let (r, s) = (Scalar::from(5u64), Scalar::from(8u64));
    let want = bytes(&CpuBackend::default().prove(&srs, clone_assignment(&asg), r, s).unwrap().proof);
    let need = Footprint::of(&CircuitSizes::of(&srs, None));
    let floor = need.streamed(0, AbcAt::Cpu);
    for (budget, on_cpu) in
        [(need.resident(2) + 64 * MIB, false), (need.resident(1) + 64 * MIB, false), (need.resident(1) - 1, false), (floor, false), (floor - 1, true)]
    {
        let gpu = CudaBackend::with_budget(Some(&[0]), 2, Some(budget)).unwrap();
        assert_eq!(gpu.devices()[0].budget_bytes, Some(budget));
        let p = gpu.prove(&srs, clone_assignment(&asg), r, s).unwrap();
        assert_eq!(bytes(&p.proof), want, "budget {} MiB ({:?})", budget / MIB, plan(&need, budget, 2));
        assert_eq!(p.cpu_fallback, on_cpu, "budget {} MiB ({:?})", budget / MIB, plan(&need, budget, 2));
        if budget < need.resident(1) && !on_cpu {
            assert!(matches!(plan(&need, budget, 2), Plan::Streamed(_)));
        }
    }
}

/// Budgets for `srs`'s circuit that put it in the streamed mode: nothing kept on the device (its
/// floor: ΣH after the passes over the tiles), nothing kept with ΣH beside the passes, L and
/// B_G1 kept, and just under the resident mode (as much kept as fits).
fn streamed_budgets(srs: &Srs) -> Vec<(u64, cuzk::prover::vram::Streamed)> {
    use cuzk::prover::vram::{plan, sec, AbcAt, CircuitSizes, Footprint, Plan};
    let f = Footprint::of(&CircuitSizes::of(srs, None));
    let floor = f.streamed(0, AbcAt::Cpu);
    let beside = f.streamed_beside(0, AbcAt::Cpu).max(floor);
    let v: Vec<_> = [floor, beside, beside + f.kept(sec::L | sec::B_G1, AbcAt::Cpu), f.resident(1) - 1]
        .into_iter()
        .map(|b| match plan(&f, b, 2) {
            Plan::Streamed(p) => (b, p),
            p => panic!("budget {b}: {p:?}"),
        })
        .collect();
    // Both orders of ΣH and the passes over the tiles run (at the smallest sizes the floor's plan
    // may keep a section whose whole costs less than its two tiles).
    assert!(v.iter().any(|(_, p)| !p.h_beside_tiles), "{v:?}");
    assert!(v.iter().any(|(_, p)| p.h_beside_tiles), "{v:?}");
    v
}

/// The streamed mode byte-identical to the CPU at 2^10 to 2^20 constraints (eight tiles or more
/// per section, ΣH in tiles of twice theirs, so every copy/compute overlap and tile boundary runs),
/// with nothing, part and most of the SRS kept on the device; dense queries (modes 1, 2: each
/// one's scalars uploaded before its Pippenger over the kept or host bases) and sparse (3, 4).
#[test]
fn streamed_mode_toys_byte_identical() {
    if gpu().is_none() {
        return;
    }
    let cases = [
        (Toy { constraints: (1 << 10) - 2, inputs: 1, mode: 2 }, 60),
        (Toy { constraints: (1 << 12) + 17, inputs: 2, mode: 2 }, 61),
        (Toy { constraints: (1 << 13) - 3, inputs: 2, mode: 1 }, 62),
        (Toy { constraints: (1 << 16) - 2, inputs: 1, mode: 2 }, 63),
        (Toy { constraints: (1 << 16) - 2, inputs: 1, mode: 3 }, 67),
        (Toy { constraints: (1 << 18) + 5, inputs: 4, mode: 2 }, 64),
        (Toy { constraints: (1 << 18) + 5, inputs: 4, mode: 4 }, 68),
        (Toy { constraints: (1 << 20) - 2, inputs: 1, mode: 2 }, 65),
    ];
    for (c, seed) in cases {
        let asg = Assignment::synthesize(c.clone(), SizeHint::default()).unwrap();
        let srs = Srs::from_parameters(common::PROOF, random_params(Shape::of(&asg), seed));
        for (budget, p) in streamed_budgets(&srs) {
            let gpu = CudaBackend::with_budget(Some(&[0]), 2, Some(budget)).unwrap();
            let name = format!("{c:?} streamed, kept {:#x}, {} (tile {})", p.resident, p.sigma_h(), p.tile);
            check(&gpu, &name, &srs, clone_assignment(&asg), false, seed);
            let (r, s) = (Scalar::from(3u64), Scalar::from(4u64));
            assert!(!gpu.prove(&srs, clone_assignment(&asg), r, s).unwrap().cpu_fallback, "{name}: proved on the CPU");
        }
    }
}

/// One pass over the SRS tiles serving several partitions: two threads prove classified
/// partitions of one circuit (three witnesses, so a rider's sums cannot pass for the holder's) on
/// a streamed device with room for a rider, so that one waits for the lane while the other holds
/// it and the holder's passes make the waiting one's sums (its own sparse stage then runs ΣH
/// alone). Every proof byte-identical to the CPU's at each budget of `streamed_budgets` (ΣH after
/// and beside the passes), and the device says it shared passes. A toy's plan keeps sections up
/// to its budget, so the riders' room is forced (`set_rider_room`).
#[test]
fn streamed_riders_byte_identical() {
    if gpu().is_none() {
        return;
    }
    use cuzk::prover::vram::GIB;
    // Sparse witnesses (a dense query rides no pass).
    let toys: Vec<Toy> = [0, 3, 4].map(|mode| Toy { constraints: (1 << 16) - 2, inputs: 2, mode }).to_vec();
    let asgs: Vec<Assignment> = toys.iter().map(|c| Assignment::synthesize(c.clone(), SizeHint::default()).unwrap()).collect();
    let srs = Srs::from_parameters(common::PROOF, random_params(Shape::of(&asgs[0]), 66));
    let (r, s) = (Scalar::from(3u64), Scalar::from(4u64));
    let want: Vec<Vec<u8>> =
        asgs.iter().map(|a| bytes(&CpuBackend::default().prove(&srs, clone_assignment(a), r, s).unwrap().proof)).collect();
    for (budget, p) in streamed_budgets(&srs) {
        let gpu = CudaBackend::with_budget(Some(&[0]), 2, Some(budget)).unwrap();
        gpu.set_rider_room(GIB);
        let prepared: Vec<Vec<Assignment>> = (0..2)
            .map(|t| {
                (0..8)
                    .map(|k| {
                        let mut a = clone_assignment(&asgs[(k + t) % 3]);
                        gpu.prepare_now(&mut a).unwrap();
                        a
                    })
                    .collect()
            })
            .collect();
        std::thread::scope(|sc| {
            for (t, mine) in prepared.into_iter().enumerate() {
                let (gpu, srs, want) = (&gpu, &srs, &want);
                sc.spawn(move || {
                    for (k, a) in mine.into_iter().enumerate() {
                        let proof = gpu.prove(srs, a, r, s).unwrap();
                        assert!(!proof.cpu_fallback, "thread {t} proof {k}: proved on the CPU");
                        assert_eq!(bytes(&proof.proof), want[(k + t) % 3], "thread {t} proof {k} ({}): differs from the CPU proof", p.sigma_h());
                    }
                });
            }
        });
        let shared = gpu.devices()[0].shared_passes;
        eprintln!("{} MiB, kept {:#x}, {}: 16 proofs byte-identical, {shared} partitions rode another's passes", budget >> 20, p.resident, p.sigma_h());
        assert!(shared > 0, "{} MiB ({}): no partition rode another's passes", budget >> 20, p.sigma_h());
    }
}

/// The streamed mode on the real 2 KiB partition: byte-identical to the CPU and verified, with
/// each budget of `streamed_budgets`.
#[test]
fn streamed_mode_2kib_byte_identical() {
    if gpu().is_none() {
        return;
    }
    let (srs, inputs) = fixture_2kib();
    for (budget, p) in streamed_budgets(&srs) {
        let gpu = CudaBackend::with_budget(Some(&[0]), 2, Some(budget)).unwrap();
        let asg = inputs.circuits.synthesize(0, srs.size_hint()).unwrap();
        check(&gpu, &format!("2 KiB partition 0 streamed, kept {:#x}, {}", p.resident, p.sigma_h()), &srs, asg, true, 8);
        eprintln!("2 KiB streamed with {} MiB: kept {:#x}, {}, tile {}: byte-identical, verified", budget >> 20, p.resident, p.sigma_h(), p.tile);
    }
}

/// The recorded 2 KiB circuit wherever a, b, c can come from: resident, and in the streamed mode
/// from the circuit on the device or streamed from host memory in tiles of rows (eleven tiles
/// per matrix, the last one short): every partition's proof from its witness alone has the same
/// bytes as the CPU backend's proof of the fully synthesized partition (fixed r, s), and
/// verifies.
#[test]
fn recorded_circuit_resident_kept_tiled_or_parked_byte_identical() {
    if gpu().is_none() {
        return;
    }
    use cuzk::prover::vram::{plan, AbcAt, Footprint, Plan};
    let (srs, inputs) = fixture_2kib();
    let r1cs = std::sync::Arc::new(cuzk::synth::R1cs::record(common::PROOF, srs.size_hint(), &|| false).unwrap());
    let fp = Footprint::of_srs(&srs, Some(&r1cs));
    let pvk = prepare_verifying_key(&srs.params.vk);
    let (r, s) = (Scalar::from(9u64), Scalar::from(10u64));
    // Parked: the lean stage H (C and A parked in host memory) that the plan picks only where
    // the witness beside two domain slots is the streamed mode's peak (32 GiB on a 12 GiB card),
    // forced at 2 KiB.
    // In tiles, ΣH after the passes over the SRS tiles (the tiles' floor) and beside them.
    let tiles = fp.streamed(0, AbcAt::CircuitTiles);
    let beside = fp.streamed_beside(0, AbcAt::CircuitTiles);
    let budgets = [
        (None, None),
        (Some(fp.streamed(0, AbcAt::CircuitOnDevice)), Some(AbcAt::CircuitOnDevice)),
        (Some(tiles), Some(AbcAt::CircuitTiles)),
        (Some(beside.min(fp.streamed(0, AbcAt::CircuitOnDevice) - 1)), Some(AbcAt::CircuitTiles)),
        (Some(tiles), Some(AbcAt::CircuitTilesParked)),
    ];
    let mut orders = Vec::new();
    for (budget, abc) in budgets {
        if let (Some(b), Some(abc)) = (budget, abc) {
            let want = if abc == AbcAt::CircuitTilesParked { AbcAt::CircuitTiles } else { abc };
            match plan(&fp, b, 1) {
                Plan::Streamed(p) if p.abc == want => orders.push(p.h_beside_tiles),
                p => panic!("{} MiB: {p:?}", b >> 20),
            }
        }
        let gpu = CudaBackend::with_budget(Some(&[0]), 1, budget).unwrap();
        gpu.set_park_always(abc == Some(AbcAt::CircuitTilesParked));
        assert!(gpu.evaluates_recorded(&srs, &r1cs), "{abc:?}: a, b, c would be left to the synthesis threads");
        for part in 0..inputs.circuits.partitions() {
            let full = inputs.circuits.synthesize(part, srs.size_hint()).unwrap();
            let want = bytes(&CpuBackend::default().prove(&srs, full, r, s).unwrap().proof);
            let deferred = r1cs.defer(inputs.circuits.witness(part, srs.size_hint()).unwrap()).unwrap();
            let public: Vec<Scalar> = deferred.input[1..].to_vec();
            let p = gpu.prove(&srs, deferred, r, s).unwrap();
            assert!(!p.cpu_fallback, "{abc:?} partition {part}: proved on the CPU");
            assert_eq!(bytes(&p.proof), want, "{abc:?} partition {part}: differs from the CPU proof");
            assert!(verify_proof(&pvk, &p.proof, &public).unwrap(), "{abc:?} partition {part}: does not verify");
        }
        eprintln!("recorded 2 KiB circuit, {abc:?} (budget {:?} MiB): every partition byte-identical, verified", budget.map(|b| b >> 20));
    }
    // Both orders of ΣH and the SRS tiles ran with the circuit's rows in tiles.
    assert!(orders.contains(&true) && orders.contains(&false), "ΣH beside the tiles in the streamed plans: {orders:?}");
}

/// The test SRS's G1 and G2 multiples on the GPU (what makes a 32 GiB test SRS take seconds, not
/// minutes) equal the CPU threads' point for point, over the real 2 KiB circuit: every section
/// and the verifying key.
#[test]
fn test_srs_on_the_gpu_equals_the_cpu() {
    if gpu().is_none() {
        return;
    }
    use cuzk::fixtures::{test_srs_on, SrsGenerator};
    let r1cs = cuzk::synth::R1cs::record(common::PROOF, SizeHint::default(), &|| false).unwrap();
    let t = std::time::Instant::now();
    let cpu = test_srs_on(&r1cs, 3, SrsGenerator::Cpu).unwrap();
    let cpu_s = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let gpu = test_srs_on(&r1cs, 3, SrsGenerator::Gpu).unwrap();
    let gpu_s = t.elapsed().as_secs_f64();
    assert_eq!(SrsGenerator::best(), SrsGenerator::Gpu);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    cpu.write(&mut a).unwrap();
    gpu.write(&mut b).unwrap();
    assert_eq!(cpu.h.len(), r1cs.constraints().next_power_of_two() - 1);
    assert!(a == b, "the GPU's test SRS differs from the CPU's");
    eprintln!("2 KiB test SRS ({} MB): CPU {cpu_s:.2} s, GPU (G1, G2) {gpu_s:.2} s, byte-identical", a.len() / 1_000_000);
}

/// WinningPoSt, WindowPoSt and SnapDeals in the streamed mode (nothing of their SRS on the
/// device): every partition byte-identical to the CPU backend's proof for fixed r, s.
#[test]
fn every_proof_kind_streamed() {
    if gpu().is_none() {
        return;
    }
    let (k, engine) = kinds_engine("cpu");
    let (r, s) = (Scalar::from(7u64), Scalar::from(11u64));
    for (name, request) in k.requests() {
        let inputs = request.parse().unwrap();
        let srs = engine.srs_get(inputs.circuit).unwrap().unwrap();
        let (budget, p) = streamed_budgets(&srs)[0];
        let gpu = CudaBackend::with_budget(Some(&[0]), 1, Some(budget)).unwrap();
        for part in 0..inputs.circuits.partitions() {
            let asg = inputs.circuits.synthesize(part, srs.size_hint()).unwrap();
            let cpu = CpuBackend::default().prove(&srs, clone_assignment(&asg), r, s).unwrap().proof;
            let g = gpu.prove(&srs, asg, r, s).unwrap();
            assert!(!g.cpu_fallback, "{name} partition {part}: proved on the CPU");
            assert_eq!(bytes(&cpu), bytes(&g.proof), "{name} partition {part}: streamed GPU proof differs from the CPU proof");
        }
        eprintln!("{name}: {} partition(s) byte-identical in the streamed mode (tile {})", inputs.circuits.partitions(), p.tile);
    }
}
