//! Deterministic test data.

use half::{bf16, f16};

/// Deterministic f16 values in [-64, 64) with fractional parts (s-rows of
/// them sum past 2048, f16's exact-integer limit).
pub fn f16_data(n: usize, seed: u64) -> Vec<f16> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (state >> 33) as u32;
            // Values in [-64, 64) with a fractional part: row sums exceed 2048.
            f16::from_f32((r % 8192) as f32 / 64.0 - 64.0)
        })
        .collect()
}

/// Deterministic pseudo-random words (xorshift64*).
pub fn words(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n).map(move |_| {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        s.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

/// Deterministic i8 values over the whole range (xorshift).
pub fn i8_data(n: usize, seed: u64) -> Vec<i8> {
    let mut state = seed | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as i8
        })
        .collect()
}

/// Deterministic bf16 values in [-64, 64) with fractional parts (bf16 keeps
/// 8 significant bits, so these round to fewer fractional digits than f16).
pub fn bf16_data(n: usize, seed: u64) -> Vec<bf16> {
    f16_data(n, seed)
        .into_iter()
        .map(|v| bf16::from_f32(v.to_f32()))
        .collect()
}

/// Deterministic f32 values with full 24-bit significands, both signs,
/// magnitudes over 2^-4..2^11.
pub fn f32_data(n: usize, seed: u64) -> Vec<f32> {
    words(n, seed)
        .map(|w| {
            let m = (w >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            m * 2f32.powi((w % 16) as i32 - 3)
        })
        .collect()
}
