//! Runs the simulator's C++ semantics and strictness tests from Rust.
//!
//! Each test is an `extern "C" int simtest_<name>(char* msg, size_t len)`
//! in `kernels/*.cpp` that returns 0 on success and writes a failure message
//! otherwise; `sim_test!` wraps one into a `#[test]`.

// Link the simulator runtime that the C++ tests call into.
use ascendc_sim as _;

/// Signature of a C++ test entry.
pub type SimTest = unsafe extern "C" fn(*mut std::os::raw::c_char, usize) -> i32;

/// Runs a C++ test entry and panics with its message when it fails.
pub fn run(name: &str, test: SimTest) {
    let mut buf = vec![0u8; 4096];
    // SAFETY: the test writes at most `len` bytes (NUL terminated) into `buf`.
    let rc = unsafe { test(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let msg = String::from_utf8_lossy(&buf[..end]);
    assert_eq!(rc, 0, "{name}: {msg}");
}

/// Declares Rust tests for C++ test entries: `sim_test!(nd2nz_basic, mmad_int8);`
/// An entry may carry attributes: `#[ignore = "simulator: ..."] name`.
#[macro_export]
macro_rules! sim_test {
    ($($(#[$attr:meta])* $name:ident),* $(,)?) => {
        $(
            #[test]
            $(#[$attr])*
            fn $name() {
                extern "C" {
                    #[link_name = concat!("simtest_", stringify!($name))]
                    fn entry(msg: *mut std::os::raw::c_char, len: usize) -> i32;
                }
                $crate::run(stringify!($name), entry);
            }
        )*
    };
}
