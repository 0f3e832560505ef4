//! The test harness of `ascend-scan`, shared by the integration tests
//! (`tests/it/`) and the cargo-fuzz targets (`fuzz/fuzz_targets/`).
//!
//! - [`data`]: deterministic test data (f16, bf16, i8, pseudo-random words);
//! - [`check`]: CPU references and the agreement checks of results against
//!   them (one non-finite-aware comparison, [`check::agree`]);
//! - [`stats`]: the chi-square goodness-of-fit test of the sampling tests;
//! - [`fuzz`]: the fuzz families (bytes -> one checked case), which the fuzz
//!   targets run and `tests/it/fuzz_smoke.rs` replays on stable Rust.

pub mod check;
pub mod data;
pub mod fuzz;
pub mod stats;

use ascend_scan::Device;

/// The default simulated device (the Ascend910B4 model).
pub fn device() -> Device {
    Device::default_device().expect("simulated device")
}

/// One test per element type of a generic test function: a module named
/// after the function, holding a `#[test]` per type named after the type.
///
/// `per_dtype!(edge_lengths: f16, bf16, f32);` makes
/// `edge_lengths::f16` (calling `edge_lengths::<f16>()`), `edge_lengths::bf16`
/// and `edge_lengths::f32`; arguments per type go in parentheses:
/// `per_dtype!(keys_in_order: f16(F16_SPECIALS), bf16(BF16_SPECIALS));`.
/// The types and arguments are resolved in the calling module.
#[macro_export]
macro_rules! per_dtype {
    ($(#[$m:meta])* $name:ident: $($t:ident $(($($arg:expr),* $(,)?))?),+ $(,)?) => {
        $(#[$m])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[test]
                fn $t() {
                    super::$name::<$t>($($($arg),*)?);
                }
            )+
        }
    };
}
