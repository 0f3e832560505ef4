//! Fuzz target: the `scan_family` family of the harness (`testkit::fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::scan_family(data));
