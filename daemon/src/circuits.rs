//! Curio's circuit ids ("porep-32g", "snap-32g", "wpost-32g", "winning-32g", …: what its
//! PreloadSRS / EvictSRS / SRSStatus carry) and the library's circuits they name.

use cuzk::kinds::{CircuitId, ProofKind};

/// Sector sizes as Curio writes them in circuit ids, in filecoin-ffi's numbering order.
const SIZES: [(&str, u64); 5] = [("2k", 2 << 10), ("8m", 8 << 20), ("512m", 512 << 20), ("32g", 32 << 30), ("64g", 64 << 30)];

/// The circuit a Curio circuit id names (`<kind>-<size>`: kind porep, snap, wpost or winning;
/// size 2k, 8m, 512m, 32g or 64g), or a registered proof's name as the library writes it
/// ("StackedDrg32GiBV1_1", "StackedDrgWindow32GiBV1_2", "UpdateStackedDrg32GiBV1").
pub fn parse(id: &str) -> Result<CircuitId, String> {
    let Some((kind, size)) = id.split_once('-') else {
        return CircuitId::parse(id)
            .map_err(|e| format!("unknown circuit id {id:?}: neither <kind>-<size> (porep-32g) nor a registered proof name ({})", e.message));
    };
    let Some(i) = SIZES.iter().position(|(s, _)| *s == size) else {
        return Err(format!("unknown circuit id {id:?}: the size must be one of 2k, 8m, 512m, 32g, 64g"));
    };
    // filecoin-ffi numbers each family 2K..64G: seal V1_1 from 5, update from 0, WinningPoSt V1
    // from 0, WindowPoSt V1_2 from 10.
    let (kind, first) = match kind {
        "porep" => (ProofKind::PoRep, 5),
        "snap" => (ProofKind::SnapDeals, 0),
        "wpost" => (ProofKind::WindowPoSt, 10),
        "winning" => (ProofKind::WinningPoSt, 0),
        _ => return Err(format!("unknown circuit id {id:?}: the kind must be porep, snap, wpost or winning")),
    };
    CircuitId::from_number(kind, first + i as i64).map_err(|e| format!("circuit id {id:?}: {}", e.message))
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
