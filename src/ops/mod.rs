//! The operations, one module per family. Each validates its arguments,
//! plans its kernels with `crates/algos` and launches them through
//! `crate::runtime`; the composed ones (segmented scans, SpMV, top-p) call
//! the simpler ones. `scan` holds the scan algorithms, the vector-unit scans
//! and the policy of `Algorithm::Auto`.
pub(crate) mod copy;
pub(crate) mod logits;
pub(crate) mod reduce;
pub(crate) mod runs;
pub(crate) mod sample;
pub(crate) mod scan;
pub(crate) mod segextrema;
pub(crate) mod segscan;
pub(crate) mod softmax;
pub(crate) mod sort;
pub(crate) mod split;
pub(crate) mod spmv;
pub(crate) mod topp;
