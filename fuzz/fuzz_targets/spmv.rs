//! Fuzz target: the `spmv` family of the harness (`testkit::fuzz`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| testkit::fuzz::spmv_family(data));
