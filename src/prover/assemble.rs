//! What every backend shares after its MSMs: the witness-against-SRS shape check and the
//! proof's blinding and assembly, exactly as bellperson does them (DESIGN §1):
//! A = α + ΣA + r·δ1;  B = β2 + ΣB2 + s·δ2;
//! C = ΣH + ΣL + s·ΣA + r·ΣB1 + rs·δ1 + s·α + r·β1.

use bellperson::groth16::Proof;
use blstrs::{G1Projective, G2Projective, Scalar};
use group::{prime::PrimeCurveAffine, Curve};

use crate::error::Result;
use crate::srs::Srs;

/// The MSM results of one partition, before blinding.
pub struct MsmSums {
    pub h: G1Projective,
    pub l: G1Projective,
    pub a: G1Projective,
    pub b_g1: G1Projective,
    pub b_g2: G2Projective,
}

/// Blind and assemble the proof from the MSM sums.
pub fn assemble(srs: &Srs, m: &MsmSums, r: Scalar, s: Scalar) -> Result<Proof<blstrs::Bls12>> {
    let vk = &srs.params.vk;
    if bool::from(vk.delta_g1.is_identity() | vk.delta_g2.is_identity()) {
        return Err(err!(Prover, "SRS delta is the identity (subverted parameters)"));
    }
    let g_a = vk.delta_g1 * r + vk.alpha_g1 + m.a;
    let g_b = vk.delta_g2 * s + vk.beta_g2 + m.b_g2;
    let g_c = m.a * s + m.b_g1 * r + vk.delta_g1 * (r * s) + vk.alpha_g1 * s + vk.beta_g1 * r + m.h + m.l;
    Ok(Proof { a: g_a.to_affine(), b: g_b.to_affine(), c: g_c.to_affine() })
}

/// The witness must fit the SRS it is proved against.
pub fn check_shape(srs: &Srs, constraints: usize, inputs: usize, aux: usize) -> Result<()> {
    let p = &srs.params;
    let domain = constraints.next_power_of_two();
    if p.h.len() + 1 != domain || p.vk.ic.len() != inputs || p.l.len() != aux {
        return Err(err!(
            Prover,
            "circuit does not match the SRS {}: circuit has {} constraints (domain {}), {} inputs, {} aux; \
             SRS has h {} (domain {}), ic {}, l {}",
            srs.path.display(),
            constraints,
            domain,
            inputs,
            aux,
            p.h.len(),
            p.h.len() + 1,
            p.vk.ic.len(),
            p.l.len()
        ));
    }
    Ok(())
}
