//! Circuit identity: which Groth16 circuit (and so which SRS and recorded circuit) a proof is
//! made with, its name, kind and params file names (`v28-<circuit id>.params`). The numbers C
//! and Go callers use for each kind's registered proofs map to it in [`super::registry`].

use super::registry::{self, RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
use crate::error::Result;

/// The circuit of a registered proof of any kind: what an SRS belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CircuitId {
    Seal(RegisteredSealProof),
    PoSt(RegisteredPoStProof),
    Update(RegisteredUpdateProof),
}

impl From<RegisteredSealProof> for CircuitId {
    fn from(p: RegisteredSealProof) -> Self {
        CircuitId::Seal(p)
    }
}

impl From<RegisteredPoStProof> for CircuitId {
    fn from(p: RegisteredPoStProof) -> Self {
        CircuitId::PoSt(p)
    }
}

impl From<RegisteredUpdateProof> for CircuitId {
    fn from(p: RegisteredUpdateProof) -> Self {
        CircuitId::Update(p)
    }
}

impl CircuitId {
    /// The registered proof's name ("StackedDrgWinning2KiBV1").
    pub fn name(self) -> String {
        match self {
            CircuitId::Seal(p) => format!("{p:?}"),
            CircuitId::PoSt(p) => format!("{p:?}"),
            CircuitId::Update(p) => format!("Update{p:?}"),
        }
    }

    /// The circuit a registered proof's name (as [`Self::name`] writes it: `StackedDrg32GiBV1_1`,
    /// `StackedDrgWindow32GiBV1_2`, `UpdateStackedDrg32GiBV1`) or a seal proof's number names.
    pub fn parse(s: &str) -> Result<CircuitId> {
        if let Some(p) = registry::POST_BY_NUMBER.iter().find(|p| format!("{p:?}") == s) {
            return Ok(CircuitId::PoSt(*p));
        }
        if let Some(p) = registry::UPDATE_BY_NUMBER.iter().find(|p| format!("Update{p:?}") == s) {
            return Ok(CircuitId::Update(*p));
        }
        registry::parse_seal(s).map(CircuitId::Seal)
    }

    /// A circuit of `kind` numbered `n` the filecoin-ffi way for that kind.
    pub fn from_number(kind: super::ProofKind, n: i64) -> Result<CircuitId> {
        use super::ProofKind::*;
        Ok(match kind {
            PoRep => CircuitId::Seal(registry::seal_from_number(n)?),
            WinningPoSt | WindowPoSt => {
                let p = registry::post_from_number(n)?;
                let want = if kind == WinningPoSt { filecoin_proofs::PoStType::Winning } else { filecoin_proofs::PoStType::Window };
                if p.typ() != want {
                    return Err(err!(InvalidArgument, "{p:?} (number {n}) is not a {} proof", kind.name()));
                }
                CircuitId::PoSt(p)
            }
            SnapDeals => CircuitId::Update(registry::update_from_number(n)?),
        })
    }

    pub fn sector_size(self) -> u64 {
        match self {
            CircuitId::Seal(p) => u64::from(p.sector_size()),
            CircuitId::PoSt(p) => u64::from(p.sector_size()),
            CircuitId::Update(p) => u64::from(p.sector_size()),
        }
    }

    /// The parameter-cache identifier (`stacked-proof-of-replication-…`, `proof-of-spacetime-
    /// fallback-…`, `empty-sector-update-…`) as filecoin-proofs names the params it reads: V1
    /// and V1_1 seal proofs of one size share one.
    pub fn identifier(self) -> Result<String> {
        let r = match self {
            CircuitId::Seal(p) => p.circuit_identifier(),
            CircuitId::PoSt(p) => p.circuit_identifier(),
            CircuitId::Update(p) => return super::update::identifier(p),
        };
        r.map_err(|e| err!(Internal, "circuit identifier of {}: {e:#}", self.name()))
    }

    /// File names in filecoin-proofs' parameter cache (format version 28).
    pub fn params_file_name(self) -> Result<String> {
        Ok(format!("v28-{}.params", self.identifier()?))
    }

    pub fn vk_file_name(self) -> Result<String> {
        Ok(format!("v28-{}.vk", self.identifier()?))
    }

    pub fn meta_file_name(self) -> Result<String> {
        Ok(format!("v28-{}.meta", self.identifier()?))
    }

    /// Where its params file lies in `dir`.
    pub fn params_path(self, dir: &std::path::Path) -> Result<std::path::PathBuf> {
        Ok(dir.join(self.params_file_name()?))
    }

    /// The kind of proof made with this circuit.
    pub fn kind(self) -> super::ProofKind {
        match self {
            CircuitId::Seal(_) => super::ProofKind::PoRep,
            CircuitId::PoSt(p) if p.typ() == filecoin_proofs::PoStType::Winning => super::ProofKind::WinningPoSt,
            CircuitId::PoSt(_) => super::ProofKind::WindowPoSt,
            CircuitId::Update(_) => super::ProofKind::SnapDeals,
        }
    }

    /// The PoSt proof of a PoSt kind numbered `n`.
    pub fn post_from(kind: super::ProofKind, n: i64) -> Result<RegisteredPoStProof> {
        match Self::from_number(kind, n)? {
            CircuitId::PoSt(p) => Ok(p),
            c => Err(err!(InvalidArgument, "{} is not a PoSt proof", c.name())),
        }
    }

    /// Terms per constraint in A, B, C of this circuit's R1CS: what a recording reserves (with a
    /// quarter of slack) and what the engine counts for it while it records. Measured: PoRep
    /// 2 KiB 6.42 M, 2.69 M, 5.82 M terms for 2.69 M constraints; SnapDeals 32 GiB 190.4 M,
    /// 81.1 M, 172.2 M for 81.0 M; WinningPoSt / WindowPoSt 2 KiB 6.84 / 6.87, 1.01 / 1.02,
    /// 1.25 / 1.25 (Poseidon-only circuits: denser A, sparser C).
    pub fn terms_per_constraint(self) -> [f64; 3] {
        match self {
            CircuitId::Seal(_) | CircuitId::Update(_) => [2.4, 1.0, 2.2],
            CircuitId::PoSt(_) => [6.9, 1.05, 1.3],
        }
    }

    /// Err(Unsupported) for a registered proof this library does not prove (non-interactive
    /// PoRep, whose proof is an aggregate).
    pub fn ensure_supported(self) -> Result<()> {
        match self {
            CircuitId::Seal(p) if p.feature_enabled(filecoin_proofs_api::ApiFeature::NonInteractivePoRep) => {
                Err(err!(Unsupported, "{} needs an aggregated proof, which cuzk does not produce yet", self.name()))
            }
            CircuitId::Seal(_) => Ok(()),
            CircuitId::PoSt(_) | CircuitId::Update(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod identifier_tests {
    use super::*;

    /// The published v28 params (filecoin-proofs 19's parameters.json, Groth16 ones).
    const PUBLISHED: &[&str] = &[
        "empty-sector-update-merkletree-poseidon_hasher-8-0-0-61fa69f38b9cc771ba27b670124714b4ea77fbeae05e377fb859c4a43b73a30c",
        "empty-sector-update-merkletree-poseidon_hasher-8-0-0-92180959e1918d26350b8e6cfe217bbdd0a2d8de51ebec269078b364b715ad63",
        "empty-sector-update-merkletree-poseidon_hasher-8-0-0-fb9e095bebdd77511c0269b967b4d87ba8b8a525edaa0e165de23ba454510194",
        "empty-sector-update-merkletree-poseidon_hasher-8-8-0-3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18",
        "empty-sector-update-merkletree-poseidon_hasher-8-8-2-102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0cfb4f178bbb71cf2ecfcd42accce558b27199ab4fb59cb78f2483fe21ef36d9",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-50c7368dea9593ed0989e70974d28024efa9d156d585b7eea1be22b2e753f331",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-5294475db5237a2e83c3e52fd6c2b03859a1831d45ed08c4f35dbf9a803165a9",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-7d739b8cf60f1b0709eeebee7730e297683552e4b69cab6984ec0285663c5781",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-2627e4006b67f99cef990c0a47d5426cb7ab0a0ad58fc1061547bf2d28b09def",
        "proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-b62098629d07946e9028127e70295ed996fe3ed25b0f9f88eb610a0ab4385a3c",
        "stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f",
        "stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472",
        "stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb",
        "stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820",
        "stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-sha256_hasher-96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2",
    ];

    /// Every registered proof of every kind names params that exist: the ones filecoin-proofs reads.
    #[test]
    fn identifiers_are_published_params() {
        let mut all: Vec<CircuitId> = (0..15).map(|n| CircuitId::Seal(registry::seal_from_number(n).unwrap())).collect();
        all.extend((0..15).map(|n| CircuitId::PoSt(registry::post_from_number(n).unwrap())));
        all.extend((0..5).map(|n| CircuitId::Update(registry::update_from_number(n).unwrap())));
        for c in all {
            let id = c.identifier().unwrap();
            assert!(PUBLISHED.contains(&id.as_str()), "{}: {id} is not a published params file", c.name());
        }
    }
}
