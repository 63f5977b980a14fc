//! CPython's `random.Random` as far as the referee's deal uses it: seeding from a non-negative
//! big integer (`init_by_array` over its 32-bit words, least significant first), `getrandbits`
//! for k <= 32, `_randbelow` by rejection and `shuffle`, all bit for bit.

const N: usize = 624;
const M: usize = 397;

pub struct PyRandom {
    mt: [u32; N],
    index: usize,
}

impl PyRandom {
    /// `init_genrand(seed)`, evaluated at compile time for the one seed `init_by_array` uses.
    const fn init_genrand(seed: u32) -> [u32; N] {
        let mut mt = [0u32; N];
        mt[0] = seed;
        let mut i = 1;
        while i < N {
            mt[i] = 1_812_433_253u32.wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_add(i as u32);
            i += 1;
        }
        mt
    }

    /// `random.Random(n)` for the big-endian byte string `be` read as a non-negative integer.
    pub fn from_be_bytes(be: &[u8]) -> PyRandom {
        // The integer's 32-bit words, least significant first, without leading zero words.
        let mut words: Vec<u32> =
            be.rchunks(4).map(|chunk| chunk.iter().fold(0u32, |acc, &b| (acc << 8) | b as u32)).collect();
        while words.len() > 1 && *words.last().unwrap_or(&1) == 0 {
            words.pop();
        }
        if words.is_empty() {
            words.push(0);
        }
        Self::init_by_array(&words)
    }

    /// `random.Random(seed)` for an int seed (its absolute value is used, as CPython does).
    pub fn from_int(seed: i128) -> PyRandom {
        Self::from_be_bytes(&seed.unsigned_abs().to_be_bytes())
    }

    /// `random.Random(seed)` for a str seed (version 2: the UTF-8 bytes followed by their SHA-512,
    /// read as a big-endian integer).
    pub fn from_text(seed: &str) -> PyRandom {
        use sha2::{Digest, Sha512};
        let mut bytes = seed.as_bytes().to_vec();
        bytes.extend_from_slice(&Sha512::digest(seed.as_bytes()));
        Self::from_be_bytes(&bytes)
    }

    fn init_by_array(key: &[u32]) -> PyRandom {
        const BASE: [u32; N] = PyRandom::init_genrand(19_650_218);
        let mut r = PyRandom { mt: BASE, index: N };
        let mt = &mut r.mt;
        let (mut i, mut j) = (1usize, 0usize);
        let len = key.len();
        // `prev` is mt[i - 1], kept in a register: each step depends on the one before.
        let mut prev = mt[0];
        for _ in 0..N.max(len) {
            prev = (mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525)).wrapping_add(key[j].wrapping_add(j as u32));
            mt[i] = prev;
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = prev;
                i = 1;
            }
            if j >= len {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            prev = (mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            mt[i] = prev;
            i += 1;
            if i >= N {
                mt[0] = prev;
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        r
    }

    fn genrand_u32(&mut self) -> u32 {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX_A: u32 = 0x9908_b0df;
        if self.index >= N {
            let mt = &mut self.mt;
            let twist = |a: u32, b: u32, c: u32| {
                let y = (a & UPPER) | (b & LOWER);
                c ^ (y >> 1) ^ if y & 1 != 0 { MATRIX_A } else { 0 }
            };
            for kk in 0..N - M {
                mt[kk] = twist(mt[kk], mt[kk + 1], mt[kk + M]);
            }
            for kk in N - M..N - 1 {
                mt[kk] = twist(mt[kk], mt[kk + 1], mt[kk + M - N]);
            }
            mt[N - 1] = twist(mt[N - 1], mt[0], mt[M - 1]);
            self.index = 0;
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `getrandbits(k)` for 1 <= k <= 32.
    pub fn getrandbits(&mut self, k: u32) -> u32 {
        debug_assert!((1..=32).contains(&k));
        self.genrand_u32() >> (32 - k)
    }

    /// `_randbelow(n)` for n >= 1 (`_randbelow_with_getrandbits`).
    pub fn randbelow(&mut self, n: u32) -> u32 {
        let k = 32 - n.leading_zeros();
        let mut r = self.getrandbits(k);
        while r >= n {
            r = self.getrandbits(k);
        }
        r
    }

    /// `shuffle(x)`.
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.randbelow(i as u32 + 1) as usize;
            x.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PyRandom;

    fn bytes(hex: &str) -> Vec<u8> {
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
    }

    /// Expected values from CPython 3.11: `random.Random(int(hex, 16))`, the last 5 of 700
    /// `getrandbits(32)`, and `_randbelow(n)` for n in 1, 2, 3, 7, 52, 103, 104 from a fresh one.
    #[test]
    fn matches_cpython() {
        let cases: [(&str, [u32; 5], [u32; 7]); 6] = [
            ("00", [2917650163, 3938685444, 3812994162, 1384956481, 3579999110], [0, 1, 0, 2, 32, 62, 51]),
            ("05", [529891709, 3616631489, 525517128, 941594729, 2639495804], [0, 1, 2, 6, 47, 83, 67]),
            (
                "0000000000000000000000000000000000000000000000000000000000000001",
                [2342874420, 3910489001, 3103665995, 136407909, 3348972608],
                [0, 0, 1, 0, 31, 97, 57],
            ),
            (
                "00000000ffffffff00000000000000000000000000000000000000000000abcd",
                [4035231776, 2657192545, 1978986421, 2971515411, 1745899781],
                [0, 0, 0, 6, 34, 89, 52],
            ),
            (
                "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
                [3459500509, 1788579070, 451482805, 1311985866, 3574922158],
                [0, 0, 0, 4, 26, 60, 62],
            ),
            (
                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                [3526774443, 3773264676, 3688143552, 825877294, 3208346630],
                [0, 0, 1, 4, 32, 85, 18],
            ),
        ];
        for (hex, bits, below) in cases {
            let mut r = PyRandom::from_be_bytes(&bytes(hex));
            let got: Vec<u32> = (0..700).map(|_| r.getrandbits(32)).collect();
            assert_eq!(&got[695..], &bits, "getrandbits for {hex}");
            let mut r = PyRandom::from_be_bytes(&bytes(hex));
            let got: Vec<u32> = [1, 2, 3, 7, 52, 103, 104].iter().map(|&n| r.randbelow(n)).collect();
            assert_eq!(got, below, "_randbelow for {hex}");
        }
    }
}
