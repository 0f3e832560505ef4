//! Fuzz target: the `segmented` family of the harness (`testkit::fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::segmented(data));
