//! xoshiro256++ (seeded by splitmix64): the simulator's own generator for random play.
//!
//! `choose(n)` is `((next_u64() >> 32) * n) >> 32`, simple to reproduce in any language (the
//! bias is below 2^-25 for the sizes a game asks for, n <= 54).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        Rng { s: [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)] }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A number in `0..n` (n > 0).
    #[inline]
    pub fn choose(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }

    /// Shuffles `x` (Fisher-Yates from the end, `choose(i + 1)` for the swap partner of `i`).
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.choose(i as u32 + 1) as usize;
            x.swap(i, j);
        }
    }

    /// A uniformly chosen set bit of a non-empty mask: the `choose(popcount)`-th lowest.
    #[inline]
    pub fn pick_bit(&mut self, mask: u64) -> u8 {
        select(mask, self.choose(mask.count_ones()))
    }

    /// [`Rng::pick_bit`], the same bit; with `PDEP` the bit is found by the BMI2 instruction
    /// `pdep`. Only code compiled with BMI2 enabled, run where the CPU has it, may pass true
    /// (see `policy::random_steps`).
    #[inline(always)]
    pub fn pick_bit_with<const PDEP: bool>(&mut self, mask: u64) -> u8 {
        let k = self.choose(mask.count_ones());
        #[cfg(target_arch = "x86_64")]
        if PDEP {
            // SAFETY: PDEP is only true inside a function compiled with `bmi2`, called after
            // `is_x86_feature_detected!("bmi2")`.
            return unsafe { core::arch::x86_64::_pdep_u64(1u64 << k, mask) }.trailing_zeros() as u8;
        }
        select(mask, k)
    }
}

/// `SELECT8[b][k]`: the position of the k-th lowest set bit of the byte `b` (k < popcount(b)).
const SELECT8: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut k, mut bit) = (0, 0);
        while bit < 8 {
            if b >> bit & 1 == 1 {
                table[b][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    table
};

/// The position of the `k`-th lowest set bit of `m` (k < popcount(m)), without branches:
/// halve the search by popcounts down to a byte, then a table lookup.
#[inline]
pub fn select(mut m: u64, mut k: u32) -> u8 {
    let mut base = 0u32;
    for width in [32u32, 16, 8] {
        let low = (m & ((1u64 << width) - 1)).count_ones();
        let up = u32::from(k >= low);
        k -= up * low;
        m >>= up * width;
        base += up * width;
    }
    base as u8 + SELECT8[(m & 0xFF) as usize][k as usize & 7]
}

#[cfg(test)]
mod tests {
    use super::select;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn pdep_picks_the_same_bit_as_select() {
        if !std::is_x86_feature_detected!("bmi2") {
            return;
        }
        let (mut a, mut b) = (super::Rng::new(7), super::Rng::new(7));
        let mut m = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..5000 {
            m = m.rotate_left(11).wrapping_mul(0xBF58_476D_1CE4_E5B9) | 1;
            let mask = m & ((1 << 54) - 1);
            assert_eq!(a.pick_bit(mask), b.pick_bit_with::<true>(mask));
        }
    }

    #[test]
    fn select_finds_the_kth_set_bit() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            x = x.rotate_left(7).wrapping_mul(0xBF58_476D_1CE4_E5B9) | 1;
            let m = x & ((1 << 54) - 1);
            let mut rest = m;
            for k in 0..m.count_ones() {
                assert_eq!(u32::from(select(m, k)), rest.trailing_zeros());
                rest &= rest - 1;
            }
        }
    }
}
