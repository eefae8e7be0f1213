//! Curio's circuit ids ("porep-32g", "snap-32g", "wpost-32g", "winning-32g", …: what its
//! PreloadSRS / EvictSRS / SRSStatus carry) and the library's circuits they name.

use cuzk::kinds::{CircuitId, ProofKind, RegisteredPoStProof, RegisteredUpdateProof};
use cuzk::registry::RegisteredSealProof;

/// Sector sizes as Curio writes them in circuit ids.
const SIZES: [(&str, u64); 5] = [("2k", 2 << 10), ("8m", 8 << 20), ("512m", 512 << 20), ("32g", 32 << 30), ("64g", 64 << 30)];

/// The circuit a Curio circuit id names (`<kind>-<size>`: kind porep, snap, wpost or winning;
/// size 2k, 8m, 512m, 32g or 64g), or a registered proof's name as the library writes it
/// ("StackedDrg32GiBV1_1", "StackedDrgWindow32GiBV1_2", "UpdateStackedDrg32GiBV1").
pub fn parse(id: &str) -> Result<CircuitId, String> {
    if let Some((kind, size)) = id.split_once('-') {
        let Some(&(_, bytes)) = SIZES.iter().find(|(s, _)| *s == size) else {
            return Err(format!("unknown circuit id {id:?}: the size must be one of 2k, 8m, 512m, 32g, 64g"));
        };
        let i = SIZES.iter().position(|(_, b)| *b == bytes).expect("found above");
        return Ok(match kind {
            "porep" => {
                use RegisteredSealProof::*;
                CircuitId::Seal([StackedDrg2KiBV1_1, StackedDrg8MiBV1_1, StackedDrg512MiBV1_1, StackedDrg32GiBV1_1, StackedDrg64GiBV1_1][i])
            }
            "snap" => {
                use RegisteredUpdateProof::*;
                CircuitId::Update([StackedDrg2KiBV1, StackedDrg8MiBV1, StackedDrg512MiBV1, StackedDrg32GiBV1, StackedDrg64GiBV1][i])
            }
            "wpost" => {
                use RegisteredPoStProof::*;
                CircuitId::PoSt(
                    [StackedDrgWindow2KiBV1_2, StackedDrgWindow8MiBV1_2, StackedDrgWindow512MiBV1_2, StackedDrgWindow32GiBV1_2, StackedDrgWindow64GiBV1_2][i],
                )
            }
            "winning" => {
                use RegisteredPoStProof::*;
                CircuitId::PoSt(
                    [StackedDrgWinning2KiBV1, StackedDrgWinning8MiBV1, StackedDrgWinning512MiBV1, StackedDrgWinning32GiBV1, StackedDrgWinning64GiBV1][i],
                )
            }
            _ => return Err(format!("unknown circuit id {id:?}: the kind must be porep, snap, wpost or winning")),
        });
    }
    CircuitId::parse(id).map_err(|e| format!("unknown circuit id {id:?}: neither <kind>-<size> (porep-32g) nor a registered proof name ({})", e.message))
}

/// Curio's id of `circuit` ("porep-32g").
pub fn name(circuit: CircuitId) -> String {
    let kind = match circuit.kind() {
        ProofKind::PoRep => "porep",
        ProofKind::SnapDeals => "snap",
        ProofKind::WindowPoSt => "wpost",
        ProofKind::WinningPoSt => "winning",
    };
    match SIZES.iter().find(|(_, b)| *b == circuit.sector_size()) {
        Some((size, _)) => format!("{kind}-{size}"),
        None => circuit.name(),
    }
}

/// The proof kind as Curio's status and metrics name it.
pub fn kind_label(kind: ProofKind) -> &'static str {
    match kind {
        ProofKind::PoRep => "porep-c2",
        ProofKind::SnapDeals => "snap-update",
        ProofKind::WindowPoSt => "window-post",
        ProofKind::WinningPoSt => "winning-post",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curio_ids_round_trip() {
        for kind in ["porep", "snap", "wpost", "winning"] {
            for (size, bytes) in SIZES {
                let id = format!("{kind}-{size}");
                let c = parse(&id).unwrap();
                assert_eq!(c.sector_size(), bytes, "{id}");
                assert_eq!(name(c), id);
            }
        }
        assert_eq!(parse("wpost-32g").unwrap().kind(), ProofKind::WindowPoSt);
        assert_eq!(parse("winning-32g").unwrap().kind(), ProofKind::WinningPoSt);
        assert_eq!(parse("StackedDrg2KiBV1_1").unwrap(), parse("porep-2k").unwrap());
        for bad in ["porep-33g", "post-32g", "", "porep", "-32g"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
