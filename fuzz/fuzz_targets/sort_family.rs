//! Fuzz target: the `sort_family` family of the harness (`testkit::fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::sort_family(data));
