//! Fuzz target: the `spmv` family of tests/harness/mod.rs.
#![no_main]

#[path = "../../tests/harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::spmv_family(data));
