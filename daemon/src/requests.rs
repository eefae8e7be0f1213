//! A gRPC `SubmitProofRequest` as the engine's request: Curio's C1 envelope, the prover id from
//! the miner's actor id, SnapDeals commitments as raw bytes or CIDs, priorities. Every problem
//! is an `InvalidArgument` naming the field.

use base64::Engine as _;
use serde::Deserialize;

use cuzk::engine::Submission;
use cuzk::kinds::{prover_id_from_actor, CircuitId, PoStRequest, ProofKind, ProofRequest, UpdateRequest};

use crate::pb::{Priority, ProofKind as PbKind, SubmitProofRequest};

/// Longest request id the daemon takes (the engine's key adds a content digest to it).
pub const MAX_REQUEST_ID_BYTES: usize = 900;

/// A validated request, owning its bytes; [`Self::submission`] lends them to the engine.
pub struct Request {
    pub kind: ProofKind,
    pub request_id: Option<String>,
    priority: Option<i32>,
    body: Body,
}

enum Body {
    PoRep { c1_json: Vec<u8>, sector_id: u64, prover_id: [u8; 32] },
    PoSt { proof: cuzk::kinds::RegisteredPoStProof, randomness: [u8; 32], prover_id: [u8; 32], vanilla: Vec<Vec<u8>>, partition: Option<usize> },
    Snap { proof: cuzk::kinds::RegisteredUpdateProof, vanilla: Vec<Vec<u8>>, comms: [[u8; 32]; 3] },
}

/// Curio's PoRep envelope (lib/ffi/cuzk_funcs.go: `c1OutputWrapper`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    #[serde(rename = "SectorNum")]
    sector_num: u64,
    /// The C1 JSON, standard base64 (Go's encoding/json of a []byte).
    #[serde(rename = "Phase1Out")]
    phase1_out: String,
    #[serde(rename = "SectorSize")]
    #[allow(dead_code)] // the C1 names its registered proof, and so its size
    sector_size: u64,
}

type Invalid = String;

impl Request {
    pub fn from_pb(r: SubmitProofRequest) -> Result<Request, Invalid> {
        let request_id = match r.request_id.as_str() {
            "" => None,
            id if id.len() > MAX_REQUEST_ID_BYTES || id.contains('\0') => {
                return Err(format!("request_id must be at most {MAX_REQUEST_ID_BYTES} bytes without NUL, got {} bytes", id.len()))
            }
            id => Some(id.to_owned()),
        };
        let kind = match PbKind::try_from(r.proof_kind) {
            Ok(PbKind::PorepSealCommit) => ProofKind::PoRep,
            Ok(PbKind::SnapDealsUpdate) => ProofKind::SnapDeals,
            Ok(PbKind::WindowPostPartition) => ProofKind::WindowPoSt,
            Ok(PbKind::WinningPost) => ProofKind::WinningPoSt,
            _ => {
                return Err(format!(
                    "proof_kind {} is not a proof kind (1 POREP_SEAL_COMMIT, 2 SNAP_DEALS_UPDATE, 3 WINDOW_POST_PARTITION, 4 WINNING_POST)",
                    r.proof_kind
                ))
            }
        };
        let priority = priority(r.priority, kind)?;
        let body = match kind {
            ProofKind::PoRep => {
                if !r.vanilla_proofs.is_empty() {
                    return Err("a PoRep C2 takes its C1 output in vanilla_proof (field 10), not vanilla_proofs".into());
                }
                let (c1_json, sector_id) = c1_output(r.vanilla_proof, r.sector_number)?;
                Body::PoRep { c1_json, sector_id, prover_id: prover_id_from_actor(r.miner_id) }
            }
            ProofKind::WinningPoSt | ProofKind::WindowPoSt => {
                let proof = CircuitId::post_from(kind, number(r.registered_proof)?).map_err(|e| format!("registered_proof: {}", e.message))?;
                check_size(r.sector_size, proof.sector_size().into())?;
                let randomness = array32("randomness", &r.randomness)?;
                let partition = (kind == ProofKind::WindowPoSt).then_some(r.partition_index as usize);
                if kind == ProofKind::WinningPoSt && r.partition_index != 0 {
                    return Err(format!("partition_index {} given for a WinningPoSt (it has one partition)", r.partition_index));
                }
                Body::PoSt { proof, randomness, prover_id: prover_id_from_actor(r.miner_id), vanilla: r.vanilla_proofs, partition }
            }
            ProofKind::SnapDeals => {
                let c = CircuitId::from_number(kind, number(r.registered_proof)?).map_err(|e| format!("registered_proof: {}", e.message))?;
                let CircuitId::Update(proof) = c else { unreachable!("from_number(SnapDeals) is an update proof") };
                check_size(r.sector_size, c.sector_size())?;
                let comms = [
                    commitment("comm_r_old", &r.comm_r_old, CommKind::Sealed)?,
                    commitment("comm_r_new", &r.comm_r_new, CommKind::Sealed)?,
                    commitment("comm_d_new", &r.comm_d_new, CommKind::Unsealed)?,
                ];
                Body::Snap { proof, vanilla: r.vanilla_proofs, comms }
            }
        };
        Ok(Request { kind, request_id, priority, body })
    }

    /// The engine's submission, borrowing this request's bytes. `engine_key` is the engine's
    /// request id (the caller's id qualified by the content: see `jobs`).
    pub fn submission(&self, engine_key: Option<String>) -> Submission<'_> {
        let request = match &self.body {
            Body::PoRep { c1_json, sector_id, prover_id } => ProofRequest::PoRep { c1_json, sector_id: *sector_id, prover_id: *prover_id },
            Body::PoSt { proof, randomness, prover_id, vanilla, partition } => {
                let post = PoStRequest { proof: *proof, randomness: *randomness, prover_id: *prover_id, vanilla_proofs: vanilla.iter().map(Vec::as_slice).collect() };
                match self.kind {
                    ProofKind::WinningPoSt => ProofRequest::WinningPoSt(post),
                    _ => ProofRequest::WindowPoSt { post, partition: *partition },
                }
            }
            Body::Snap { proof, vanilla, comms } => ProofRequest::SnapDeals(UpdateRequest {
                proof: *proof,
                vanilla_proofs: vanilla.iter().map(Vec::as_slice).collect(),
                comm_r_old: comms[0],
                comm_r_new: comms[1],
                comm_d_new: comms[2],
            }),
        };
        Submission { request, priority: self.priority, request_id: engine_key }
    }
}

/// The engine's priority for a gRPC one: CRITICAL > HIGH > NORMAL > LOW, and UNSPECIFIED the
/// kind's default. The engine's defaults (WinningPoSt 2000, WindowPoSt 1000, PoRep and
/// SnapDeals 0) are what Curio sends (CRITICAL, HIGH, NORMAL), so both spellings order alike.
fn priority(p: i32, kind: ProofKind) -> Result<Option<i32>, Invalid> {
    Ok(match Priority::try_from(p) {
        Ok(Priority::Unspecified) => None,
        Ok(Priority::Low) => Some(-1000),
        Ok(Priority::Normal) => Some(0),
        Ok(Priority::High) => Some(1000),
        Ok(Priority::Critical) => Some(2000),
        Err(_) => return Err(format!("priority {p} is not a priority (0 UNSPECIFIED, 1 LOW, 2 NORMAL, 3 HIGH, 4 CRITICAL) for a {}", kind.name())),
    })
}

fn number(n: u64) -> Result<i64, Invalid> {
    i64::try_from(n).map_err(|_| format!("registered_proof {n} is out of range"))
}

fn check_size(given: u64, want: u64) -> Result<(), Invalid> {
    if given != 0 && given != want {
        return Err(format!("sector_size {given} does not match the registered proof's sector size {want}"));
    }
    Ok(())
}

/// The C1 output and sector number of a PoRep request: `vanilla_proof` is the C1 JSON itself
/// or Curio's envelope around it.
fn c1_output(vanilla: Vec<u8>, sector_number: u64) -> Result<(Vec<u8>, u64), Invalid> {
    if vanilla.is_empty() {
        return Err("vanilla_proof (the C1 output) is empty".into());
    }
    // A bare C1 output's first key is not one of the envelope's: refused after a few bytes.
    let Ok(env) = serde_json::from_slice::<Envelope>(&vanilla) else {
        return Ok((vanilla, sector_number));
    };
    let c1 = base64::engine::general_purpose::STANDARD
        .decode(env.phase1_out.as_bytes())
        .map_err(|e| format!("vanilla_proof: the envelope's Phase1Out is not standard base64: {e}"))?;
    if sector_number != 0 && env.sector_num != sector_number {
        return Err(format!("sector_number {sector_number} differs from the envelope's SectorNum {}", env.sector_num));
    }
    Ok((c1, env.sector_num))
}

fn array32(field: &str, b: &[u8]) -> Result<[u8; 32], Invalid> {
    b.try_into().map_err(|_| format!("{field} must be 32 bytes, got {}", b.len()))
}

#[derive(Clone, Copy)]
enum CommKind {
    Sealed,
    Unsealed,
}

/// A SnapDeals commitment: 32 raw bytes (what Curio sends) or a CID's binary form (CIDv1,
/// codec fil-commitment-sealed 0xf102 with multihash poseidon-bls12_381-a2-fc1 0xb401, or
/// fil-commitment-unsealed 0xf101 with sha2-256-trunc254-padded 0x1012; 32-byte digest).
fn commitment(field: &str, b: &[u8], kind: CommKind) -> Result<[u8; 32], Invalid> {
    if b.len() == 32 {
        return array32(field, b);
    }
    let mut rest = b;
    let mut varint = || -> Result<u64, Invalid> {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let (&byte, tail) = rest.split_first().ok_or_else(|| format!("{field}: truncated CID ({} bytes)", b.len()))?;
            rest = tail;
            if shift > 56 {
                return Err(format!("{field}: malformed varint in the CID"));
            }
            v |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
    };
    let (version, codec, hash, len) = (varint()?, varint()?, varint()?, varint()?);
    let (want_codec, want_hash, what) = match kind {
        CommKind::Sealed => (0xf102, 0xb401, "a sealed commitment (fil-commitment-sealed)"),
        CommKind::Unsealed => (0xf101, 0x1012, "an unsealed commitment (fil-commitment-unsealed)"),
    };
    if version != 1 || codec != want_codec || hash != want_hash || len != 32 || rest.len() != 32 {
        return Err(format!(
            "{field} must be 32 raw bytes or the binary CID of {what}, got {} bytes (CID version {version}, codec {codec:#x}, multihash {hash:#x}, digest {len} bytes)",
            b.len()
        ));
    }
    array32(field, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_and_bare_c1_outputs() {
        let c1 = br#"{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":{}}"#.to_vec();
        assert_eq!(c1_output(c1.clone(), 7).unwrap(), (c1.clone(), 7));
        let b64 = base64::engine::general_purpose::STANDARD.encode(&c1);
        let env = format!(r#"{{"SectorNum":42,"Phase1Out":"{b64}","SectorSize":2048}}"#).into_bytes();
        assert_eq!(c1_output(env.clone(), 0).unwrap(), (c1.clone(), 42));
        assert_eq!(c1_output(env.clone(), 42).unwrap(), (c1, 42));
        assert!(c1_output(env, 43).unwrap_err().contains("SectorNum"));
        let bad = br#"{"SectorNum":1,"Phase1Out":"@@@","SectorSize":2048}"#.to_vec();
        assert!(c1_output(bad, 0).unwrap_err().contains("base64"));
        assert!(c1_output(Vec::new(), 0).unwrap_err().contains("empty"));
    }

    /// Bounded fuzzing: arbitrary bytes as a whole gRPC message, as an envelope and as a
    /// commitment are refused or accepted, never a panic (the message decoder is prost's, what
    /// tonic runs on every request).
    #[test]
    fn arbitrary_bytes_never_panic() {
        use prost::Message;
        use rand::{Rng, RngCore, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(41);
        for round in 0..20_000 {
            let mut b = vec![0u8; rng.gen_range(0..96)];
            rng.fill_bytes(&mut b);
            if round % 4 == 0 && b.len() > 8 {
                b[0] = 0x01; // a CID's version byte, so the varint walk goes further
            }
            let _ = commitment("c", &b, CommKind::Sealed);
            let _ = c1_output(b.clone(), round);
            let mut env = br#"{"SectorNum":1,"Phase1Out":""#.to_vec();
            env.extend_from_slice(&b);
            env.extend_from_slice(br#"","SectorSize":2048}"#);
            let _ = c1_output(env, 0);
            if let Ok(m) = SubmitProofRequest::decode(&b[..]) {
                if let Ok(r) = Request::from_pb(m) {
                    let _ = r.submission(None).request.content_digest();
                }
            }
        }
    }

    #[test]
    fn commitments_raw_or_cid() {
        let digest = [7u8; 32];
        assert_eq!(commitment("c", &digest, CommKind::Sealed).unwrap(), digest);
        // CIDv1, codec 0xf102, multihash 0xb401, 32 bytes: varints 01 82e203 81e802 20.
        let mut sealed = vec![0x01, 0x82, 0xe2, 0x03, 0x81, 0xe8, 0x02, 0x20];
        sealed.extend_from_slice(&digest);
        assert_eq!(sealed.len(), 40);
        assert_eq!(commitment("c", &sealed, CommKind::Sealed).unwrap(), digest);
        let e = commitment("comm_d_new", &sealed, CommKind::Unsealed).unwrap_err();
        assert!(e.contains("comm_d_new") && e.contains("unsealed"), "{e}");
        let mut unsealed = vec![0x01, 0x81, 0xe2, 0x03, 0x92, 0x20, 0x20];
        unsealed.extend_from_slice(&digest);
        assert_eq!(commitment("c", &unsealed, CommKind::Unsealed).unwrap(), digest);
        assert!(commitment("c", &sealed[..39], CommKind::Sealed).is_err());
        assert!(commitment("c", &[], CommKind::Sealed).unwrap_err().contains("truncated"));
        assert!(commitment("c", &[0xff; 40], CommKind::Sealed).is_err());
    }
}
