//! Fuzz target: the `split_family` family of the harness (`testkit::fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::split_family(data));
