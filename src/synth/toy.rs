//! A synthetic circuit with a PoRep-like witness, for comparing backends byte for byte.

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;

/// x_{i+1} = x_i² + b_i, with b_i zero, one or random (`mode` 2), all zero (`mode` 0) or all one
/// (`mode` 1); x grows into field elements in modes 1 and 2, so their witnesses are mostly
/// significant, like a PoSt's (the GPU sums them as dense queries). Modes 3 and up keep x in
/// {0, 1} but every (mode + 13)th step, where a random b makes x random and the next b brings it
/// back to zero: ~9 % significant scalars, like a PoRep witness (bitmaps and gathered bases on
/// the GPU). `inputs` public inputs. Used to compare backends on small and large synthetic
/// circuits (tests, `cuzk-gpu`); it proves nothing about sectors.
#[derive(Clone, Debug)]
pub struct Toy {
    pub constraints: usize,
    pub inputs: usize,
    pub mode: u8,
}

impl Circuit<Scalar> for Toy {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut inputs = Vec::new();
        for i in 0..self.inputs {
            let v = Scalar::from(i as u64 + 3);
            inputs.push((cs.alloc_input(|| "in", || Ok(v))?, v));
        }
        let period = self.mode as usize + 13;
        // b_i after x = pv.
        let value = |i: usize, pv: Scalar| match self.mode {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            2 => match i % 7 {
                0..=2 => Scalar::ZERO,
                3 | 4 => Scalar::ONE,
                _ => Scalar::from(i as u64 * 0x9e37_79b9 + 1),
            },
            _ if pv != Scalar::ZERO && pv != Scalar::ONE => -pv.square(),
            _ if i % period == 0 => Scalar::from(i as u64 * 0x9e37_79b9 + 1),
            _ => Scalar::from((pv == Scalar::ZERO && i % 3 == 0) as u64), // x stays in {0, 1}
        };
        let (mut prev, mut pv) = match inputs.first().copied() {
            Some(x) => x,
            None => {
                let v = value(0, Scalar::ZERO);
                (cs.alloc(|| "x0", || Ok(v))?, v)
            }
        };
        for i in 0..self.constraints {
            let b = value(i + 1, pv);
            let bv = cs.alloc(|| "b", || Ok(b))?;
            let out = pv * pv + b;
            let ov = cs.alloc(|| "o", || Ok(out))?;
            cs.enforce(|| "sq", |lc| lc + prev, |lc| lc + prev, |lc| lc + ov - bv);
            prev = ov;
            pv = out;
        }
        Ok(())
    }
}
