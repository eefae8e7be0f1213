//! Proof kinds: PoRep C2, WinningPoSt, WindowPoSt and SnapDeals, one door each. A kind's module
//! turns its request into [`JobInputs`]: its partition circuits ([`PartitionCircuits`]: full
//! synthesis, and the recorded path — `recordable`, `record`, `witness` — with how many
//! independent sub-circuits a partition spreads over), its [`Statement`] (verification), its
//! circuit identity ([`CircuitId`], which keys its SRS and recorded circuit) and a subject for
//! log lines. The engine proves every kind the same way and names none of them.
//!
//! Adding a kind = one module here plus one registration: its filecoin-ffi numbering in
//! [`registry`] and its variant of [`CircuitId`] (then its ABI and Go wrappers). How the four
//! look: `porep/` (C1 parsing, validation, native witness, statement, verification: the model),
//! `post/` (WinningPoSt and WindowPoSt, sectors or challenges on all threads) and `update/`
//! (SnapDeals, challenges on all threads), the last two getting their recorded path from `compound.rs`, whose one generic
//! synthesis fills the assignment, the witness or the recorder alike.

// First: its `with_tree_shape!` is used by the kinds below.
#[macro_use]
pub mod registry;
pub mod circuit;
mod compound;
pub mod porep;
pub mod post;
pub mod update;
mod vanilla;

use std::sync::Arc;

use bellperson::groth16::PreparedVerifyingKey;
use blstrs::Bls12;

pub use circuit::CircuitId;
pub use registry::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
pub use compound::PROOF_BYTES;
#[cfg(feature = "tools")] // the fixtures decode their generated vanilla proofs as the engine does
pub(crate) use compound::decode_all;
pub use post::PoStRequest;
pub use update::UpdateRequest;

use crate::error::Result;
use crate::synth::PartitionCircuits;

/// The kinds of proof the engine makes. Numbers are part of the C ABI.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProofKind {
    PoRep = 0,
    WinningPoSt = 1,
    WindowPoSt = 2,
    SnapDeals = 3,
}

impl ProofKind {
    /// Every kind, in number order (`ALL[k as usize] == k`).
    pub const ALL: [ProofKind; 4] = [ProofKind::PoRep, ProofKind::WinningPoSt, ProofKind::WindowPoSt, ProofKind::SnapDeals];

    pub fn name(self) -> &'static str {
        match self {
            ProofKind::PoRep => "porep",
            ProofKind::WinningPoSt => "winning_post",
            ProofKind::WindowPoSt => "window_post",
            ProofKind::SnapDeals => "snap_deals",
        }
    }

    /// The kind numbered `n` (the C ABI's `cuzk_proof_kind` values).
    pub fn from_number(n: i32) -> Result<ProofKind> {
        Ok(match n {
            0 => ProofKind::PoRep,
            1 => ProofKind::WinningPoSt,
            2 => ProofKind::WindowPoSt,
            3 => ProofKind::SnapDeals,
            _ => return Err(err!(InvalidArgument, "unknown proof kind {n} (0 PoRep, 1 WinningPoSt, 2 WindowPoSt, 3 SnapDeals)")),
        })
    }

    /// Priority of a job submitted without one: WinningPoSt (due within seconds of its epoch)
    /// before WindowPoSt (due within its 30-minute window) before PoRep and SnapDeals.
    pub fn default_priority(self) -> i32 {
        match self {
            ProofKind::WinningPoSt => 2000,
            ProofKind::WindowPoSt => 1000,
            ProofKind::PoRep | ProofKind::SnapDeals => 0,
        }
    }
}

/// What a proof is checked against: the kind's public statement.
pub trait Statement: Send + Sync {
    /// Ok(true): `proof` (the concatenated partition proofs) proves the statement; Ok(false):
    /// well-formed but not valid; Err: malformed.
    fn verify(&self, pvk: &PreparedVerifyingKey<Bls12>, proof: &[u8]) -> Result<bool>;
}

/// A parsed, validated request of any kind: what the engine proves and how it checks the result.
pub struct JobInputs {
    pub kind: ProofKind,
    pub circuit: CircuitId,
    pub circuits: Arc<dyn PartitionCircuits>,
    pub statement: Box<dyn Statement>,
    /// What the proof is about, for log lines: "sector 42", "sectors 3, 7, 9", "partition 2 of
    /// sectors ...", "comm_r_new 1a2b3c4d...".
    pub subject: String,
}

/// "sector 4" or "sectors 1, 5, 9, ... (2349)": sector numbers for a log line, at most four.
pub fn sectors_subject(ids: &[u64]) -> String {
    let list = |ids: &[u64]| ids.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    match ids {
        [one] => format!("sector {one}"),
        _ if ids.len() <= 4 => format!("sectors {}", list(ids)),
        _ => format!("sectors {}, ... ({} in all)", list(&ids[..3]), ids.len()),
    }
}

/// A request, borrowed from the caller for the submit call.
pub enum ProofRequest<'a> {
    /// filecoin-ffi's `seal_commit_phase2`: the C1 output JSON and the sector it was sealed as.
    PoRep { c1_json: &'a [u8], sector_id: u64, prover_id: [u8; 32] },
    /// `generate_winning_post_with_vanilla`.
    WinningPoSt(PoStRequest<'a>),
    /// `generate_window_post_with_vanilla` (`partition: None`: every partition, their proofs
    /// concatenated) or `generate_single_window_post_with_vanilla` (`Some(index)`: that
    /// partition, whose sectors' vanilla proofs alone are given).
    WindowPoSt { post: PoStRequest<'a>, partition: Option<usize> },
    /// `generate_empty_sector_update_proof_with_vanilla`.
    SnapDeals(UpdateRequest<'a>),
}

impl ProofRequest<'_> {
    pub fn kind(&self) -> ProofKind {
        match self {
            ProofRequest::PoRep { .. } => ProofKind::PoRep,
            ProofRequest::WinningPoSt(_) => ProofKind::WinningPoSt,
            ProofRequest::WindowPoSt { .. } => ProofKind::WindowPoSt,
            ProofRequest::SnapDeals(_) => ProofKind::SnapDeals,
        }
    }

    /// Parse and validate: every error in the request is found here, before any work is queued.
    pub fn parse(&self) -> Result<JobInputs> {
        match self {
            ProofRequest::PoRep { c1_json, sector_id, prover_id } => porep::parse(c1_json, prover_id, *sector_id),
            ProofRequest::WinningPoSt(r) => post::parse_winning(r),
            ProofRequest::WindowPoSt { post: r, partition } => post::parse_window(r, *partition),
            ProofRequest::SnapDeals(r) => update::parse(r),
        }
    }

    /// The bytes of the request's inputs (C1 JSON, vanilla proofs): what its parsed inputs hold
    /// in memory, as the engine's queue bounds count it.
    pub fn input_bytes(&self) -> u64 {
        let list = |v: &[&[u8]]| v.iter().map(|b| b.len() as u64).sum::<u64>();
        match self {
            ProofRequest::PoRep { c1_json, .. } => c1_json.len() as u64,
            ProofRequest::WinningPoSt(r) | ProofRequest::WindowPoSt { post: r, .. } => list(&r.vanilla_proofs),
            ProofRequest::SnapDeals(r) => list(&r.vanilla_proofs),
        }
    }

    /// A digest of everything the request proves: a reused request id must name the same content.
    pub fn content_digest(&self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let mut field = |b: &[u8]| {
            h.update((b.len() as u64).to_le_bytes());
            h.update(b);
        };
        field(&(self.kind() as i32).to_le_bytes());
        match self {
            ProofRequest::PoRep { c1_json, sector_id, prover_id } => {
                field(c1_json);
                field(&sector_id.to_le_bytes());
                field(prover_id);
            }
            ProofRequest::WinningPoSt(r) => r.digest_into(&mut field),
            ProofRequest::WindowPoSt { post: r, partition } => {
                r.digest_into(&mut field);
                field(&partition.map_or(-1i64, |p| p as i64).to_le_bytes());
            }
            ProofRequest::SnapDeals(r) => r.digest_into(&mut field),
        }
        h.finalize().into()
    }
}

pub use porep::seal_inputs;

/// A prover id the way filecoin-ffi's `toProverID` derives it from an actor id: the payload
/// of the ID address `f0<id>` (the id as an unsigned LEB128 varint), zero-padded to 32 bytes.
pub fn prover_id_from_actor(actor: u64) -> [u8; 32] {
    let mut id = [0u8; 32];
    let (mut v, mut i) = (actor, 0);
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            id[i] = byte;
            return id;
        }
        id[i] = byte | 0x80;
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sectors_subject_names_a_few_and_counts_the_rest() {
        assert_eq!(super::sectors_subject(&[4]), "sector 4");
        assert_eq!(super::sectors_subject(&[1, 5, 9]), "sectors 1, 5, 9");
        let many: Vec<u64> = (0..2349).collect();
        assert_eq!(super::sectors_subject(&many), "sectors 0, 1, 2, ... (2349 in all)");
    }
}
