//! The integration tests of `ascend-scan`: one test binary (one link of the
//! simulator and every kernel), one module per subject. The shared helpers
//! are the `testkit` crate (crates/testkit), which the fuzz targets use too.
//!
//! Run one subject with `cargo test --release --test it <module>::`.
//!
//! proptest keeps the failing cases it has found in
//! `tests/proptest-regressions/<module>.txt` and replays them before new
//! cases: its default place for the tests of a crate with a `main.rs` (a
//! `proptest-regressions` directory beside the directory holding it).

mod ascendc_names;
mod batched;
mod concurrency;
mod fuzz_smoke;
mod generated;
mod limits;
mod logits;
mod nonfinite;
mod opscan;
mod reduce;
mod runs;
mod sample;
mod scan;
mod segextrema;
mod segscan;
mod softmax;
mod sort;
mod split;
mod spmv;
mod stream;
mod stream_ops;
mod topp;
