//! Bits and 32-bit words as bellperson's gadgets see them — a constant, an allocated bit, or the
//! negation of one — with the boolean operations of `bellpepper_core::gadgets::boolean` and
//! `bellperson::gadgets::uint32`, computed natively. Each operation allocates exactly when the
//! gadget would (constants fold the same way, case for case), pushing the new variable's value to
//! the [`Sink`] and counting the gadget's constraints, so the aux vector comes out identical.

use super::Sink;

/// A gadget `Boolean`: `Is(v)` / `Not(v)` carry the value of the allocated bit they refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bit {
    Const(bool),
    Is(bool),
    Not(bool),
}

impl Bit {
    pub fn value(self) -> bool {
        match self {
            Bit::Const(c) | Bit::Is(c) => c,
            Bit::Not(v) => !v,
        }
    }

    pub fn not(self) -> Bit {
        match self {
            Bit::Const(c) => Bit::Const(!c),
            Bit::Is(v) => Bit::Not(v),
            Bit::Not(v) => Bit::Is(v),
        }
    }

    fn is_const(self) -> bool {
        matches!(self, Bit::Const(_))
    }
}

/// A new boolean-constrained variable (`AllocatedBit::alloc`, and the single-constraint results
/// of `AllocatedBit::{xor, and, and_not, nor}`): one aux value, one constraint.
#[inline]
pub fn alloc<S: Sink + ?Sized>(s: &mut S, v: bool) -> Bit {
    s.bit(v);
    s.constraints(1);
    Bit::Is(v)
}

/// `Boolean::xor`.
#[inline]
pub fn xor<S: Sink + ?Sized>(s: &mut S, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Bit::Const(false), x) | (x, Bit::Const(false)) => x,
        (Bit::Const(true), x) | (x, Bit::Const(true)) => x.not(),
        // a XOR (NOT b) = NOT(a XOR b), allocated over the underlying bits.
        (Bit::Is(x), Bit::Not(y)) | (Bit::Not(y), Bit::Is(x)) => alloc(s, x ^ y).not(),
        (Bit::Is(x), Bit::Is(y)) | (Bit::Not(x), Bit::Not(y)) => alloc(s, x ^ y),
    }
}

/// `Boolean::and`.
#[inline]
pub fn and<S: Sink + ?Sized>(s: &mut S, a: Bit, b: Bit) -> Bit {
    match (a, b) {
        (Bit::Const(false), _) | (_, Bit::Const(false)) => Bit::Const(false),
        (Bit::Const(true), x) | (x, Bit::Const(true)) => x,
        (Bit::Is(i), Bit::Not(n)) | (Bit::Not(n), Bit::Is(i)) => alloc(s, i & !n),
        (Bit::Not(x), Bit::Not(y)) => alloc(s, !x & !y),
        (Bit::Is(x), Bit::Is(y)) => alloc(s, x & y),
    }
}

/// `Boolean::sha256_ch`: (a AND b) XOR ((NOT a) AND c).
#[inline]
pub fn ch<S: Sink + ?Sized>(s: &mut S, a: Bit, b: Bit, c: Bit) -> Bit {
    let v = (a.value() & b.value()) ^ (!a.value() & c.value());
    match (a, b, c) {
        (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => return Bit::Const(v),
        (Bit::Const(false), _, c) => return c,
        (a, Bit::Const(false), c) => return and(s, a.not(), c),
        (a, b, Bit::Const(false)) => return and(s, a, b),
        (a, b, Bit::Const(true)) => return and(s, a, b.not()).not(),
        (a, Bit::Const(true), c) => return and(s, a.not(), c.not()).not(),
        _ => {}
    }
    alloc(s, v)
}

/// `Boolean::sha256_maj`: (a AND b) XOR (a AND c) XOR (b AND c).
#[inline]
pub fn maj<S: Sink + ?Sized>(s: &mut S, a: Bit, b: Bit, c: Bit) -> Bit {
    let v = (a.value() & b.value()) ^ (a.value() & c.value()) ^ (b.value() & c.value());
    match (a, b, c) {
        (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => return Bit::Const(v),
        (Bit::Const(false), b, c) => return and(s, b, c),
        (a, Bit::Const(false), c) => return and(s, a, c),
        (a, b, Bit::Const(false)) => return and(s, a, b),
        (a, b, Bit::Const(true)) => return and(s, a.not(), b.not()).not(),
        (a, Bit::Const(true), c) => return and(s, a.not(), c.not()).not(),
        (Bit::Const(true), b, c) => return and(s, b.not(), c.not()).not(),
        _ => {}
    }
    // The gadget allocates the result, then `b AND c`, then enforces one constraint.
    s.bit(v);
    and(s, b, c);
    s.constraints(1);
    Bit::Is(v)
}

/// bellperson's `UInt32`: bits least significant first, and the value.
#[derive(Clone, Copy, Debug)]
pub struct U32 {
    pub bits: [Bit; 32],
    pub value: u32,
}

impl U32 {
    pub fn constant(value: u32) -> U32 {
        U32 {
            bits: std::array::from_fn(|i| Bit::Const((value >> i) & 1 == 1)),
            value,
        }
    }

    /// `UInt32::from_bits_be`.
    pub fn from_bits_be(bits: &[Bit]) -> U32 {
        assert_eq!(bits.len(), 32);
        let value = bits.iter().fold(0u32, |v, b| (v << 1) | b.value() as u32);
        U32 {
            bits: std::array::from_fn(|i| bits[31 - i]),
            value,
        }
    }

    /// `UInt32::into_bits_be`.
    pub fn bits_be(&self) -> impl Iterator<Item = Bit> + '_ {
        self.bits.iter().rev().copied()
    }

    pub fn rotr(&self, by: usize) -> U32 {
        U32 {
            bits: std::array::from_fn(|i| self.bits[(i + by) % 32]),
            value: self.value.rotate_right(by as u32),
        }
    }

    pub fn shr(&self, by: usize) -> U32 {
        U32 {
            bits: std::array::from_fn(|i| {
                if i + by < 32 {
                    self.bits[i + by]
                } else {
                    Bit::Const(false)
                }
            }),
            value: self.value >> by,
        }
    }

    pub fn xor<S: Sink + ?Sized>(&self, s: &mut S, other: &U32) -> U32 {
        U32 {
            bits: std::array::from_fn(|i| xor(s, self.bits[i], other.bits[i])),
            value: self.value ^ other.value,
        }
    }

    /// `UInt32::sha256_ch` (bit by bit, lowest first).
    pub fn ch<S: Sink + ?Sized>(s: &mut S, a: &U32, b: &U32, c: &U32) -> U32 {
        U32 {
            bits: std::array::from_fn(|i| ch(s, a.bits[i], b.bits[i], c.bits[i])),
            value: (a.value & b.value) ^ (!a.value & c.value),
        }
    }

    /// `UInt32::sha256_maj`.
    pub fn maj<S: Sink + ?Sized>(s: &mut S, a: &U32, b: &U32, c: &U32) -> U32 {
        let value = (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value);
        U32 {
            bits: std::array::from_fn(|i| maj(s, a.bits[i], b.bits[i], c.bits[i])),
            value,
        }
    }

    /// `UInt32::addmany`: the sum modulo 2^32. Unless every operand bit is constant, allocates
    /// every bit of the full sum (carries included) and adds one equation to the [`MultiEq`].
    pub fn addmany<S: Sink + ?Sized>(s: &mut S, eq: &mut MultiEq, operands: &[U32]) -> U32 {
        assert!((2..=10).contains(&operands.len()));
        let sum: u64 = operands.iter().map(|o| o.value as u64).sum();
        if operands.iter().all(|o| o.bits.iter().all(|b| b.is_const())) {
            return U32::constant(sum as u32);
        }
        let max = operands.len() as u64 * u32::MAX as u64;
        let width = (u64::BITS - max.leading_zeros()) as usize;
        let mut bits = [Bit::Const(false); 32];
        for (i, bit) in (0..width).map(|i| (i, alloc(s, (sum >> i) & 1 == 1))) {
            if i < 32 {
                bits[i] = bit;
            }
        }
        eq.enforce_equal(s, width);
        U32 {
            bits,
            value: sum as u32,
        }
    }
}

/// bellperson's `MultiEq`, for its constraint count only: equations are packed into one
/// constraint until the field's capacity (254 bits) would overflow.
pub struct MultiEq {
    bits_used: usize,
}

const CAPACITY: usize = 254;

impl MultiEq {
    pub fn new() -> MultiEq {
        MultiEq { bits_used: 0 }
    }

    fn enforce_equal<S: Sink + ?Sized>(&mut self, s: &mut S, bits: usize) {
        if CAPACITY <= self.bits_used + bits {
            s.constraints(1);
            self.bits_used = 0;
        }
        self.bits_used += bits;
    }

    /// The gadget's `Drop`: the last, partly filled constraint.
    pub fn finish<S: Sink + ?Sized>(self, s: &mut S) {
        if self.bits_used > 0 {
            s.constraints(1);
        }
    }
}
