//! Signs and verifies a BLS signature with this library's own blst, as libfilcrypto's
//! signature calls do: 1 when it verifies and a tampered message does not.

use blst::min_pk::SecretKey;
use blst::BLST_ERROR;

const DST: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_";

#[no_mangle]
pub extern "C" fn colink_bls_selfcheck() -> i32 {
    let Ok(sk) = SecretKey::key_gen(&[7u8; 32], &[]) else { return 0 };
    let (pk, sig) = (sk.sk_to_pk(), sk.sign(b"cuzk colink", DST, &[]));
    let good = sig.verify(true, b"cuzk colink", DST, &[], &pk, true) == BLST_ERROR::BLST_SUCCESS;
    let bad = sig.verify(true, b"cuzk colinK", DST, &[], &pk, true) == BLST_ERROR::BLST_SUCCESS;
    i32::from(good && !bad)
}
