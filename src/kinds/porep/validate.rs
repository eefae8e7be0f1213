//! C1 output checked against its registered proof before any work: the shape of every vanilla
//! proof (partitions, challenges per partition, layers, drg and expander parents, Merkle path
//! lengths and arities of each tree, index ranges) and the canonical form of every field element
//! (replica id, commitments, every Merkle node and label). Synthesis assumes both — upstream
//! panics on a non-canonical element and sizes its circuit by whatever it is given — so bad
//! input must stop here as `INVALID_INPUT`, naming where it is wrong.
//!
//! It walks the JSON itself (the wire format filecoin-ffi hands `seal_commit_phase2`): upstream's
//! proof types keep most of their fields private.

use serde_json::Value;

use crate::error::Result;
use crate::kinds::registry::{self, RegisteredSealProof};

/// Labeling parents as upstream serializes them (6 base + 8 expander, repeated to 37).
pub(crate) const TOTAL_PARENTS: usize = 37;

/// The tree of replica columns and comm_r_last: Poseidon, arity 8, with (for 32 and 64 GiB) a
/// sub-tree level of arity 8 and (64 GiB) a top level of arity 2.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TreeShape {
    pub(crate) base_levels: usize,
    pub(crate) sub: bool,
    pub(crate) top: bool,
}

/// What every vanilla proof of one registered proof looks like.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub partitions: usize,
    pub challenges: usize,
    pub layers: usize,
    pub nodes: u64,
    pub(crate) drg_parents: usize,
    pub(crate) exp_parents: usize,
    pub(crate) tree_r: TreeShape,
    pub(crate) comm_d_levels: usize,
}

impl Shape {
    pub fn of(proof: RegisteredSealProof) -> Result<Shape> {
        use filecoin_proofs::constants as fc;
        let size = u64::from(proof.sector_size());
        let config = proof.as_v1_config();
        let partitions = usize::from(config.partitions);
        let challenges = config.minimum_challenges().div_ceil(partitions);
        let layers = *fc::LAYERS
            .read()
            .map_err(|_| err!(Internal, "filecoin-proofs' layer table is poisoned"))?
            .get(&size)
            .ok_or_else(|| err!(Unsupported, "no layer count known for {}", registry::seal_name(proof)))?;
        let nodes = size / 32;
        let log = |n: u64, arity: u64| {
            let (mut levels, mut m) = (0, 1u64);
            while m < n {
                m *= arity;
                levels += 1;
            }
            levels
        };
        let tree_r = if size == fc::SECTOR_SIZE_32_GIB {
            TreeShape { base_levels: log(nodes / 8, 8), sub: true, top: false }
        } else if size == fc::SECTOR_SIZE_64_GIB {
            TreeShape { base_levels: log(nodes / 16, 8), sub: true, top: true }
        } else {
            TreeShape { base_levels: log(nodes, 8), sub: false, top: false }
        };
        Ok(Shape {
            partitions,
            challenges,
            layers,
            nodes,
            drg_parents: fc::DRG_DEGREE,
            exp_parents: fc::EXP_DEGREE,
            tree_r,
            comm_d_levels: log(nodes, 2),
        })
    }
}

/// Where in the C1 output a check failed, for the message.
struct At<'a>(&'a dyn Fn() -> String);

fn bad(at: &At<'_>, what: impl std::fmt::Display) -> crate::error::Error {
    err!(InvalidInput, "{}: {what}", (at.0)())
}

fn field<'v>(v: &'v Value, name: &str, at: &At<'_>) -> Result<&'v Value> {
    v.get(name).ok_or_else(|| bad(at, format_args!("missing field {name:?}")))
}

fn array<'v>(v: &'v Value, len: usize, what: &str, at: &At<'_>) -> Result<&'v [Value]> {
    let a = v.as_array().ok_or_else(|| bad(at, format_args!("{what} is not an array")))?;
    if a.len() != len {
        return Err(bad(at, format_args!("{what} has {} entries, {len} expected", a.len())));
    }
    Ok(a)
}

fn number(v: &Value, below: u64, what: &str, at: &At<'_>) -> Result<u64> {
    let n = v.as_u64().ok_or_else(|| bad(at, format_args!("{what} is not an unsigned integer")))?;
    if n >= below {
        return Err(bad(at, format_args!("{what} {n} is out of range (must be below {below})")));
    }
    Ok(n)
}

/// 32 bytes as JSON numbers.
fn bytes32(v: &Value, what: &str, at: &At<'_>) -> Result<[u8; 32]> {
    let a = array(v, 32, what, at)?;
    let mut out = [0u8; 32];
    for (o, b) in out.iter_mut().zip(a) {
        *o = b.as_u64().filter(|&b| b <= 255).ok_or_else(|| bad(at, format_args!("{what} is not 32 bytes")))? as u8;
    }
    Ok(out)
}

/// A field element (little-endian, as upstream's domains serialize): canonical, below the modulus.
fn element(v: &Value, what: &str, at: &At<'_>) -> Result<()> {
    let b = bytes32(v, what, at)?;
    if bool::from(blstrs::Scalar::from_bytes_le(&b).is_none()) {
        return Err(bad(at, format_args!("{what} is not a canonical field element (not below the BLS12-381 scalar modulus)")));
    }
    Ok(())
}

fn elements(v: &Value, len: usize, what: &str, at: &At<'_>) -> Result<()> {
    for (i, e) in array(v, len, what, at)?.iter().enumerate() {
        element(e, &format!("{what}[{i}]"), at)?;
    }
    Ok(())
}

/// `{"path": [{"hashes": [arity - 1 elements], "index": < arity}; levels]}`
fn inclusion_path(v: &Value, levels: usize, arity: u64, what: &str, at: &At<'_>) -> Result<()> {
    let path = array(field(v, "path", at)?, levels, &format!("{what} path"), at)?;
    for (l, e) in path.iter().enumerate() {
        elements(field(e, "hashes", at)?, arity as usize - 1, &format!("{what} level {l} hashes"), at)?;
        number(field(e, "index", at)?, arity, &format!("{what} level {l} index"), at)?;
    }
    Ok(())
}

/// A Merkle proof of the binary comm_d tree (`Single`) or of tree R (`Single`, `Sub` or `Top`).
fn merkle(v: &Value, tree: TreeShape, arity: u64, what: &str, at: &At<'_>) -> Result<()> {
    let data = field(v, "data", at)?;
    let variant = match (tree.sub, tree.top) {
        (false, _) => "Single",
        (true, false) => "Sub",
        (true, true) => "Top",
    };
    let p = data.get(variant).ok_or_else(|| bad(at, format_args!("{what} is not a {variant} Merkle proof")))?;
    element(field(p, "root", at)?, &format!("{what} root"), at)?;
    element(field(p, "leaf", at)?, &format!("{what} leaf"), at)?;
    if variant == "Single" {
        return inclusion_path(field(p, "path", at)?, tree.base_levels, arity, what, at);
    }
    inclusion_path(field(p, "base_proof", at)?, tree.base_levels, arity, &format!("{what} base"), at)?;
    inclusion_path(field(p, "sub_proof", at)?, 1, 8, &format!("{what} sub"), at)?;
    if tree.top {
        inclusion_path(field(p, "top_proof", at)?, 1, 2, &format!("{what} top"), at)?;
    }
    Ok(())
}

fn column_proof(v: &Value, s: &Shape, what: &str, at: &At<'_>) -> Result<()> {
    let column = field(v, "column", at)?;
    number(field(column, "index", at)?, s.nodes, &format!("{what} column index"), at)?;
    elements(field(column, "rows", at)?, s.layers, &format!("{what} column rows"), at)?;
    merkle(field(v, "inclusion_proof", at)?, s.tree_r, 8, &format!("{what} inclusion proof"), at)
}

/// `{"parents": [37 elements], "layer_index": layer, "node": < nodes}`
fn labeling(v: &Value, s: &Shape, layer: u64, what: &str, at: &At<'_>) -> Result<()> {
    elements(field(v, "parents", at)?, TOTAL_PARENTS, &format!("{what} parents"), at)?;
    let l = number(field(v, "layer_index", at)?, s.layers as u64 + 1, &format!("{what} layer_index"), at)?;
    if l != layer {
        return Err(bad(at, format_args!("{what} is for layer {l}, layer {layer} expected")));
    }
    number(field(v, "node", at)?, s.nodes, &format!("{what} node"), at)?;
    Ok(())
}

fn challenge(v: &Value, s: &Shape, at: &At<'_>) -> Result<()> {
    let comm_d = TreeShape { base_levels: s.comm_d_levels, sub: false, top: false };
    merkle(field(v, "comm_d_proofs", at)?, comm_d, 2, "comm_d_proofs", at)?;
    merkle(field(v, "comm_r_last_proof", at)?, s.tree_r, 8, "comm_r_last_proof", at)?;
    let rcp = field(v, "replica_column_proofs", at)?;
    column_proof(field(rcp, "c_x", at)?, s, "c_x", at)?;
    for (kind, n) in [("drg_parents", s.drg_parents), ("exp_parents", s.exp_parents)] {
        for (i, p) in array(field(rcp, kind, at)?, n, kind, at)?.iter().enumerate() {
            column_proof(p, s, &format!("{kind}[{i}]"), at)?;
        }
    }
    for (i, p) in array(field(v, "labeling_proofs", at)?, s.layers, "labeling_proofs", at)?.iter().enumerate() {
        labeling(p, s, i as u64 + 1, &format!("labeling_proofs[{i}]"), at)?;
    }
    labeling(field(v, "encoding_proof", at)?, s, s.layers as u64, "encoding_proof", at)
}

/// The largest C1 output accepted per challenge of a registered proof, in JSON bytes (a real
/// one is about 100 KB per challenge at 2 KiB and 280 KB at 32 GiB, compact): input size must
/// never drive allocation beyond what the proof's shape needs.
pub(crate) const MAX_C1_BYTES_PER_CHALLENGE: usize = 4 << 20;

/// The byte bound for a C1 output of `proof`.
pub fn max_c1_bytes(proof: RegisteredSealProof) -> Result<usize> {
    let s = Shape::of(proof)?;
    Ok(s.partitions * s.challenges * MAX_C1_BYTES_PER_CHALLENGE)
}

/// Check a C1 output (already parsed as JSON) against `proof`'s shape.
pub fn check(c1: &Value, proof: RegisteredSealProof) -> Result<()> {
    let s = Shape::of(proof)?;
    check_shape(c1, &s).map_err(|e| e.context(format!("C1 output of {}", registry::seal_name(proof))))
}

fn check_shape(c1: &Value, s: &Shape) -> Result<()> {
    let top = At(&|| "top level".to_string());
    for name in ["comm_r", "comm_d", "replica_id"] {
        element(field(c1, name, &top)?, name, &top)?;
    }
    for name in ["seed", "ticket"] {
        bytes32(field(c1, name, &top)?, name, &top)?;
    }
    let vp = field(c1, "vanilla_proofs", &top)?;
    let partitions = vp
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.values().next())
        .ok_or_else(|| bad(&top, "vanilla_proofs is not one tagged list of partitions"))?;
    let partitions = array(partitions, s.partitions, "vanilla_proofs partitions", &top)?;
    for (k, part) in partitions.iter().enumerate() {
        let at = At(&|| format!("partition {k}"));
        let challenges = array(part, s.challenges, "challenges", &at)?;
        for (c, v) in challenges.iter().enumerate() {
            challenge(v, s, &At(&|| format!("partition {k} challenge {c}")))?;
        }
    }
    Ok(())
}
