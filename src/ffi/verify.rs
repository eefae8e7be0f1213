//! `cuzk_verify_seal`: check a seal proof, for C and Go callers.

use super::boundary::{arg, arg_32, arg_bytes, guard, out};
use super::engine::cuzk_engine;
use super::error::cuzk_error;
use crate::error::Status;
use crate::kinds::registry;
use crate::kinds::porep::SealStatement;

/// Verify a PoRep seal proof like filecoin-proofs' `verify_seal`. Uses the resident SRS of
/// `registered_proof`, else reads the `.vk` file from the engine's params dir.
/// `*out_valid` is true for a valid proof and false for a well-formed proof that does not
/// verify; malformed input (wrong length, bad points) is an error.
///
/// # Safety
/// `engine` live; every 32-byte argument readable; `proof` `proof_len` readable bytes;
/// `out_valid` writable; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify_seal(
    engine: *const cuzk_engine,
    registered_proof: i64,
    comm_r: *const u8,
    comm_d: *const u8,
    prover_id: *const u8,
    sector_id: u64,
    ticket: *const u8,
    seed: *const u8,
    proof: *const u8,
    proof_len: usize,
    out_valid: *mut bool,
    err: *mut *mut cuzk_error,
) -> Status {
    guard(err, || {
        let e = arg(engine, "engine")?;
        let st = SealStatement {
            proof_type: registry::seal_from_number(registered_proof)?,
            comm_r: arg_32(comm_r, "comm_r")?,
            comm_d: arg_32(comm_d, "comm_d")?,
            prover_id: arg_32(prover_id, "prover_id")?,
            sector_id,
            ticket: arg_32(ticket, "ticket")?,
            seed: arg_32(seed, "seed")?,
        };
        let proof = arg_bytes(proof, proof_len, "proof")?;
        let out_valid = out(out_valid, "out_valid")?;
        out_valid.write(e.inner.verify_seal(&st, proof)?);
        Ok(())
    })
}
