//! Registered seal proofs: the integers C and Go callers use (filecoin-ffi's and go-state-types'
//! `RegisteredSealProof` numbering), their names, shapes and SRS file names.

use std::path::{Path, PathBuf};

pub use filecoin_proofs_api::RegisteredSealProof;

use crate::error::Result;

/// filecoin-ffi numbering: V1 = 0..4, V1_1 = 5..9, SyntheticPoRep 10..14, NI-PoRep 15..19,
/// each ordered 2K, 8M, 512M, 32G, 64G.
const BY_NUMBER: [RegisteredSealProof; 20] = {
    use RegisteredSealProof::*;
    [
        StackedDrg2KiBV1,
        StackedDrg8MiBV1,
        StackedDrg512MiBV1,
        StackedDrg32GiBV1,
        StackedDrg64GiBV1,
        StackedDrg2KiBV1_1,
        StackedDrg8MiBV1_1,
        StackedDrg512MiBV1_1,
        StackedDrg32GiBV1_1,
        StackedDrg64GiBV1_1,
        StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
        StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
        StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
        StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
        StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
    ]
};

/// The names rust-fil-proofs writes into C1 outputs, by number, as static C strings for the
/// ABI (a unit test keeps them equal to the enum's own names).
const C_NAMES: [&std::ffi::CStr; 20] = [
    c"StackedDrg2KiBV1",
    c"StackedDrg8MiBV1",
    c"StackedDrg512MiBV1",
    c"StackedDrg32GiBV1",
    c"StackedDrg64GiBV1",
    c"StackedDrg2KiBV1_1",
    c"StackedDrg8MiBV1_1",
    c"StackedDrg512MiBV1_1",
    c"StackedDrg32GiBV1_1",
    c"StackedDrg64GiBV1_1",
    c"StackedDrg2KiBV1_1_Feat_SyntheticPoRep",
    c"StackedDrg8MiBV1_1_Feat_SyntheticPoRep",
    c"StackedDrg512MiBV1_1_Feat_SyntheticPoRep",
    c"StackedDrg32GiBV1_1_Feat_SyntheticPoRep",
    c"StackedDrg64GiBV1_1_Feat_SyntheticPoRep",
    c"StackedDrg2KiBV1_2_Feat_NonInteractivePoRep",
    c"StackedDrg8MiBV1_2_Feat_NonInteractivePoRep",
    c"StackedDrg512MiBV1_2_Feat_NonInteractivePoRep",
    c"StackedDrg32GiBV1_2_Feat_NonInteractivePoRep",
    c"StackedDrg64GiBV1_2_Feat_NonInteractivePoRep",
];

/// The static name of a filecoin-ffi number, if it is one.
pub fn c_name(n: i64) -> Option<&'static std::ffi::CStr> {
    usize::try_from(n).ok().and_then(|i| C_NAMES.get(i).copied())
}

/// The registered proof for a filecoin-ffi number, or an error naming the number.
pub fn from_number(n: i64) -> Result<RegisteredSealProof> {
    usize::try_from(n)
        .ok()
        .and_then(|i| BY_NUMBER.get(i).copied())
        .ok_or_else(|| err!(InvalidArgument, "unknown registered seal proof number {n} (expected 0..=19)"))
}

/// The filecoin-ffi number of a registered proof.
pub fn to_number(p: RegisteredSealProof) -> i64 {
    BY_NUMBER.iter().position(|q| *q == p).expect("every variant is numbered") as i64
}

/// Parse a name as written in C1 JSON ("StackedDrg2KiBV1_1") or a number ("5").
pub fn parse(s: &str) -> Result<RegisteredSealProof> {
    if let Ok(n) = s.trim().parse::<i64>() {
        return from_number(n);
    }
    BY_NUMBER
        .iter()
        .copied()
        .find(|p| name(*p) == s.trim())
        .ok_or_else(|| err!(InvalidArgument, "unknown registered seal proof {s:?}"))
}

pub fn name(p: RegisteredSealProof) -> String {
    format!("{p:?}")
}

/// Non-interactive PoRep returns an aggregate, which this engine does not produce (yet).
pub fn ensure_supported(p: RegisteredSealProof) -> Result<()> {
    use filecoin_proofs_api::ApiFeature;
    if p.feature_enabled(ApiFeature::NonInteractivePoRep) {
        return Err(err!(
            Unsupported,
            "{} needs an aggregated proof, which cuzk does not produce yet",
            name(p)
        ));
    }
    Ok(())
}

/// The parameter-cache identifier (`stacked-proof-of-replication-...-<digest>`).
pub fn circuit_identifier(p: RegisteredSealProof) -> Result<String> {
    p.circuit_identifier()
        .map_err(|e| err!(Internal, "circuit identifier of {}: {e:#}", name(p)))
}

/// File names used by filecoin-proofs' parameter cache (format version 28).
pub fn params_file_name(p: RegisteredSealProof) -> Result<String> {
    Ok(format!("v28-{}.params", circuit_identifier(p)?))
}

pub fn vk_file_name(p: RegisteredSealProof) -> Result<String> {
    Ok(format!("v28-{}.vk", circuit_identifier(p)?))
}

pub fn meta_file_name(p: RegisteredSealProof) -> Result<String> {
    Ok(format!("v28-{}.meta", circuit_identifier(p)?))
}

/// The default parameter directory: `FIL_PROOFS_PARAMETER_CACHE`, else
/// `/var/tmp/filecoin-proof-parameters` (read, never written).
pub fn default_params_dir() -> PathBuf {
    std::env::var_os("FIL_PROOFS_PARAMETER_CACHE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/filecoin-proof-parameters"))
}

pub fn params_path(dir: &Path, p: RegisteredSealProof) -> Result<PathBuf> {
    Ok(dir.join(params_file_name(p)?))
}

/// Call `$f::<Tree>($args)` with the Merkle tree shape of the registered proof's sector size.
#[macro_export]
macro_rules! with_tree_shape {
    ($proof:expr, $f:ident $(, $arg:expr)* $(,)?) => {{
        use filecoin_proofs::constants as fc;
        let size = u64::from($proof.sector_size());
        if size == fc::SECTOR_SIZE_2_KIB || size == fc::SECTOR_SIZE_8_MIB || size == fc::SECTOR_SIZE_512_MIB {
            $f::<fc::SectorShapeBase>($($arg),*)
        } else if size == fc::SECTOR_SIZE_32_GIB {
            $f::<fc::SectorShapeSub8>($($arg),*)
        } else if size == fc::SECTOR_SIZE_64_GIB {
            $f::<fc::SectorShapeTop2>($($arg),*)
        } else {
            Err($crate::err!(Unsupported, "sector size {} is not a PoRep sector size", size))
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for n in 0..20 {
            let p = from_number(n).unwrap();
            assert_eq!(to_number(p), n);
            assert_eq!(parse(&name(p)).unwrap(), p);
        }
        assert!(from_number(20).is_err());
        assert!(from_number(-1).is_err());
        assert_eq!(from_number(5).unwrap(), RegisteredSealProof::StackedDrg2KiBV1_1);
        for n in 0..20 {
            assert_eq!(c_name(n).unwrap().to_str().unwrap(), name(from_number(n).unwrap()));
        }
        assert!(c_name(20).is_none() && c_name(-1).is_none());
    }
}
