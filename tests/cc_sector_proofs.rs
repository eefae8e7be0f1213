//! At 8 MiB and 512 MiB, on the CPU: a generated committed-capacity sector's C2 through the
//! engine, under a generated test SRS of its circuit (written as filecoin-proofs' params and vk
//! files), is verified by the engine and by filecoin-proofs' own `verify_seal` reading that vk.
//! Minutes per size on 2 cores: ignored by `make test`, run by `make check-cc-proofs`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cuzk::engine::{Engine, EngineConfig, JobState, SubmitRequest};
use cuzk::fixtures::{cc_sector_c1, test_srs};
use cuzk::kinds::registry::RegisteredSealProof;
use cuzk::synth::{R1cs, SizeHint};

/// The test SRS of `proof` in its own params directory (made once, then reused).
fn params_dir(proof: RegisteredSealProof) -> PathBuf {
    let dir = cuzk::fixtures::default_root().join("test-srs").join(format!("{proof:?}-seed-7-NOT-FOR-PRODUCTION"));
    let vk = dir.join(cuzk::kinds::CircuitId::Seal(proof).vk_file_name().unwrap());
    if vk.exists() {
        return dir;
    }
    let s = cuzk::srs::expected_sections(proof).unwrap();
    let r1cs = R1cs::record(proof, SizeHint { constraints: s[1] + 1, inputs: s[0], aux: s[2] }, &|| false).unwrap();
    let t = Instant::now();
    let params = test_srs(&r1cs, 7).unwrap();
    eprintln!("{proof:?}: test SRS generated in {:.1} s", t.elapsed().as_secs_f64());
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(cuzk::kinds::CircuitId::Seal(proof).params_file_name().unwrap())).unwrap());
    params.write(&mut f).unwrap();
    drop(f);
    // The vk last: its presence marks a complete directory.
    let tmp = dir.join("vk.tmp");
    params.vk.write(&mut std::fs::File::create(&tmp).unwrap()).unwrap();
    std::fs::rename(&tmp, &vk).unwrap();
    dir
}

#[test]
#[ignore = "minutes per size: make check-cc-proofs"]
fn generated_8mib_and_512mib_sectors_prove_and_verify_with_filecoin_proofs() {
    let proofs = [RegisteredSealProof::StackedDrg8MiBV1_1, RegisteredSealProof::StackedDrg512MiBV1_1];
    let dirs: Vec<PathBuf> = proofs.iter().map(|&p| params_dir(p)).collect();
    // filecoin-proofs reads its parameter cache once: one directory holding both sizes' vk files.
    let cache = cuzk::fixtures::default_root().join("test-srs").join("vk-cache");
    std::fs::create_dir_all(&cache).unwrap();
    for (&p, d) in proofs.iter().zip(&dirs) {
        let name = cuzk::kinds::CircuitId::Seal(p).vk_file_name().unwrap();
        std::fs::copy(d.join(&name), cache.join(&name)).unwrap();
    }
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &cache);
    for (&proof, dir) in proofs.iter().zip(&dirs) {
        let (c1, sector) = cc_sector_c1(proof, 9).unwrap();
        let engine = Engine::new(EngineConfig { params_dir: Some(dir.clone()), backend: "cpu".into(), ..Default::default() }).unwrap();
        engine.srs_load(proof, None).unwrap();
        let t = Instant::now();
        let id = engine.submit(SubmitRequest { c1_json: &c1, sector_id: sector.sector_id, prover_id: sector.prover_id, priority: 0, request_id: None }).unwrap();
        let snap = engine.wait(id, Some(Duration::from_secs(3600))).unwrap();
        assert_eq!(snap.state, JobState::Done, "{proof:?}: {:?}", snap.error);
        let res = snap.result.unwrap();
        assert!(res.verified, "{proof:?}: the engine did not verify its proof");
        let ok = filecoin_proofs_api::seal::verify_seal(proof, sector.comm_r, sector.comm_d, sector.prover_id, sector.sector_id.into(), sector.ticket, sector.seed, &res.proof)
            .expect("verify_seal errored");
        assert!(ok, "{proof:?}: filecoin-proofs' verify_seal rejects the engine's proof");
        eprintln!("{proof:?}: generated sector proved in {:.1} s (CPU), verified by the engine and by verify_seal", t.elapsed().as_secs_f64());
    }
}
