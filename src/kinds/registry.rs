//! The registry: every registered proof of every kind, as C and Go callers number and name
//! them (filecoin-ffi's and go-state-types' numberings), mapped to the circuit identity
//! ([`CircuitId`]) that everything else — SRS, recorded circuit, params files — is keyed by.
//! A new kind's numbering goes here and its identity into [`CircuitId`].

use crate::error::Result;

pub use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};

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
pub fn seal_c_name(n: i64) -> Option<&'static std::ffi::CStr> {
    usize::try_from(n).ok().and_then(|i| C_NAMES.get(i).copied())
}

/// The entry of `table` numbered `n`, or an error naming the number and the range.
fn by_number<T: Copy>(table: &[T], n: i64, what: &str) -> Result<T> {
    usize::try_from(n)
        .ok()
        .and_then(|i| table.get(i).copied())
        .ok_or_else(|| err!(InvalidArgument, "unknown registered {what} proof number {n} (expected 0..={})", table.len() - 1))
}

/// The number of `p` in `table` (every variant of the enum is in its table).
fn number_of<T: PartialEq>(table: &[T], p: T) -> i64 {
    table.iter().position(|q| *q == p).expect("every variant is numbered") as i64
}

/// The registered proof for a filecoin-ffi number, or an error naming the number.
pub fn seal_from_number(n: i64) -> Result<RegisteredSealProof> {
    by_number(&BY_NUMBER, n, "seal")
}

/// The filecoin-ffi number of a registered proof.
pub fn seal_to_number(p: RegisteredSealProof) -> i64 {
    number_of(&BY_NUMBER, p)
}

/// Parse a seal proof's name as written in C1 JSON ("StackedDrg2KiBV1_1") or its number ("5").
pub fn parse_seal(s: &str) -> Result<RegisteredSealProof> {
    if let Ok(n) = s.trim().parse::<i64>() {
        return seal_from_number(n);
    }
    BY_NUMBER
        .iter()
        .copied()
        .find(|p| seal_name(*p) == s.trim())
        .ok_or_else(|| err!(InvalidArgument, "unknown registered seal proof {s:?}"))
}

/// A seal proof's name ("StackedDrg32GiBV1_1"), as [`CircuitId::name`] writes it.
pub fn seal_name(p: RegisteredSealProof) -> String {
    format!("{p:?}")
}

/// filecoin-ffi numbering: Winning V1 0..4, Window V1 5..9, Window V1_2 10..14 (go-state-types
/// calls the last V1_1), each ordered 2K, 8M, 512M, 32G, 64G.
pub(super) const POST_BY_NUMBER: [RegisteredPoStProof; 15] = {
    use RegisteredPoStProof::*;
    [
        StackedDrgWinning2KiBV1,
        StackedDrgWinning8MiBV1,
        StackedDrgWinning512MiBV1,
        StackedDrgWinning32GiBV1,
        StackedDrgWinning64GiBV1,
        StackedDrgWindow2KiBV1,
        StackedDrgWindow8MiBV1,
        StackedDrgWindow512MiBV1,
        StackedDrgWindow32GiBV1,
        StackedDrgWindow64GiBV1,
        StackedDrgWindow2KiBV1_2,
        StackedDrgWindow8MiBV1_2,
        StackedDrgWindow512MiBV1_2,
        StackedDrgWindow32GiBV1_2,
        StackedDrgWindow64GiBV1_2,
    ]
};

/// filecoin-ffi numbering of `RegisteredUpdateProof`: 2K, 8M, 512M, 32G, 64G.
pub(super) const UPDATE_BY_NUMBER: [RegisteredUpdateProof; 5] = {
    use RegisteredUpdateProof::*;
    [StackedDrg2KiBV1, StackedDrg8MiBV1, StackedDrg512MiBV1, StackedDrg32GiBV1, StackedDrg64GiBV1]
};

pub fn post_from_number(n: i64) -> Result<RegisteredPoStProof> {
    by_number(&POST_BY_NUMBER, n, "PoSt")
}

pub fn post_to_number(p: RegisteredPoStProof) -> i64 {
    number_of(&POST_BY_NUMBER, p)
}

pub fn update_from_number(n: i64) -> Result<RegisteredUpdateProof> {
    by_number(&UPDATE_BY_NUMBER, n, "update")
}

pub fn update_to_number(p: RegisteredUpdateProof) -> i64 {
    number_of(&UPDATE_BY_NUMBER, p)
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
    fn seal_numbers_round_trip() {
        for n in 0..20 {
            let p = seal_from_number(n).unwrap();
            assert_eq!(seal_to_number(p), n);
            assert_eq!(parse_seal(&seal_name(p)).unwrap(), p);
        }
        assert!(seal_from_number(20).is_err());
        assert!(seal_from_number(-1).is_err());
        assert_eq!(seal_from_number(5).unwrap(), RegisteredSealProof::StackedDrg2KiBV1_1);
        for n in 0..20 {
            assert_eq!(seal_c_name(n).unwrap().to_str().unwrap(), seal_name(seal_from_number(n).unwrap()));
        }
        assert!(seal_c_name(20).is_none() && seal_c_name(-1).is_none());
    }

    #[test]
    fn post_and_update_numbers_round_trip() {
        for n in 0..15 {
            assert_eq!(post_to_number(post_from_number(n).unwrap()), n);
        }
        for n in 0..5 {
            assert_eq!(update_to_number(update_from_number(n).unwrap()), n);
        }
        assert!(post_from_number(15).is_err() && post_from_number(-1).is_err());
        assert!(update_from_number(5).is_err());
        assert_eq!(post_from_number(10).unwrap(), RegisteredPoStProof::StackedDrgWindow2KiBV1_2);
        use super::super::ProofKind;
        use super::super::CircuitId;
        assert!(CircuitId::from_number(ProofKind::WinningPoSt, 5).is_err(), "a window proof is not a winning proof");
        assert!(CircuitId::from_number(ProofKind::WindowPoSt, 0).is_err());
        assert!(CircuitId::from_number(ProofKind::WindowPoSt, 10).is_ok());
    }
}
