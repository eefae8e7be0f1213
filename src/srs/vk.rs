//! Verifying keys: the `.vk` files beside the params, read and checked before any proof is
//! verified against them.

use bellperson::groth16::PreparedVerifyingKey;
use blstrs::Bls12;

use crate::error::Result;

/// Read a `.vk` file (bellperson `VerifyingKey::write` format): a regular file of the params
/// directory, every point checked (bellperson's reader checks curve and subgroup), and a key
/// under which proofs could be forged is refused (`srs::check_vk`).
pub fn read_vk(path: &std::path::Path) -> Result<bellperson::groth16::VerifyingKey<Bls12>> {
    use std::io::Read;
    let mut file = crate::files::open_regular(path, crate::files::Trust::Params)
        .map_err(|why| err!(SrsLoad, "verifying key {} {why}", path.display()))?;
    // The largest real vk (WindowPoSt) is a few KiB: anything far larger is not one.
    const MAX_VK_BYTES: u64 = 1 << 20;
    let mut bytes = Vec::new();
    (&mut file).take(MAX_VK_BYTES + 1).read_to_end(&mut bytes).map_err(|e| err!(SrsLoad, "cannot read verifying key {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_VK_BYTES {
        return Err(err!(SrsLoad, "verifying key {} is larger than {MAX_VK_BYTES} bytes: not a verifying key", path.display()));
    }
    let vk = bellperson::groth16::VerifyingKey::<Bls12>::read(&bytes[..])
        .map_err(|e| err!(SrsLoad, "corrupt verifying key {}: {e}", path.display()))?;
    crate::srs::check_vk(&vk).map_err(|why| err!(SrsLoad, "refused verifying key {}: {why}", path.display()))?;
    Ok(vk)
}

/// [`read_vk`], prepared for verification.
pub fn read_prepared_vk(path: &std::path::Path) -> Result<PreparedVerifyingKey<Bls12>> {
    Ok(bellperson::groth16::prepare_verifying_key(&read_vk(path)?))
}
