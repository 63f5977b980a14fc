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

    /// A uniformly chosen set bit of a non-empty mask.
    #[inline]
    pub fn pick_bit(&mut self, mask: u64) -> u8 {
        let mut k = self.choose(mask.count_ones());
        let mut m = mask;
        while k > 0 {
            m &= m - 1;
            k -= 1;
        }
        m.trailing_zeros() as u8
    }
}
