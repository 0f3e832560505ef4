//! Fuzz target: the `sort_family` family of tests/harness/mod.rs.
#![no_main]

#[path = "../../tests/harness/mod.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::sort_family(data));
