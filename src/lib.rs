//! ascend-scan: parallel scan and scan-based primitives for Huawei Ascend NPUs
//! (Atlas A2, Ascend 910B), with the cube (matrix) unit doing the scans.
//!
//! Kernels are AscendC C++ generated from `crates/algos` through askama
//! templates (`kernels/`). Without an NPU they run on the project's CPU
//! simulator of the AscendC programming model, which checks the hardware's
//! rules and records a trace of every launch ([`Device::take_reports`]);
//! [`model_launches`] replays the traces of launches run one after the other
//! in the cost model for a modeled time and HBM traffic
//! ([`model_launch`] one launch).
//!
//! ```
//! use ascend_scan::{scan, Device, ScanOptions};
//! use half::f16;
//!
//! let dev = Device::default_device()?;
//! let x = dev.upload(&[f16::from_f32(1.0); 1000])?;
//! let out = scan(&dev, &x, ScanOptions { want_total: true, ..Default::default() })?;
//! assert_eq!(out.total(), Some(1000.0));
//! # Ok::<(), ascend_scan::Error>(())
//! ```
//!
//! Blocking and stream-ordered forms: every operation returns its results
//! when the device is done; the `*_on` forms (`scan_on`, `reduce_on`,
//! `copy_on`, `compress_on`, `run_heads_on`, `split_on`, `sort_on`, `topk_on`,
//! `multinomial_on`, `top_p_sample_on`, `segmented_scan_on`,
//! `segmented_sum_on`, `spmv_on`, `spmv_axpby_on`, `softmax_on`)
//! only enqueue on a [`Stream`], writing caller-owned buffers and using a
//! reusable [`Workspace`], so a loop allocates and waits only where it says
//! so (see [`Stream`]).
//!
//! Every public item is documented (`deny(missing_docs)`), each operation
//! with its numerics: accumulator type, rounding and error bound, and what
//! it does with NaN, infinities and -0.0.
#![deny(missing_docs)]
//!
//! Layers (each uses only the ones before it): `error`; `runtime` (the FFI
//! boundary: backends, the loader and its manifest checks, the kernels'
//! launch functions); `device` (devices, buffers); `stream` (streams,
//! events, workspaces: the stream-ordered API); `ops` (one module per
//! operation family) and `matrices` (host-side test matrices).
mod device;
mod error;
pub mod matrices;
mod ops;
mod runtime;
mod stream;

// The simulator's SoC profiles, its record of a launch and the cost model
// that replays it (docs/cost-model.md).
pub use ascendc_sim::{
    cost::CostError, model_launch, model_launches, CostParams, LaunchReport, ModelReport, Soc,
    SocProfile, Task,
};
pub use device::{BorrowedBuffer, Device, DeviceBuffer, Element};
pub use error::{Error, Result};
pub use ops::copy::{copy, copy_on};
pub use ops::logits::{
    sample_logits, sample_logits_on, sample_logits_per_row, sample_logits_workspace_bytes,
    LogitsCheck, LogitsInput, LogitsPerRow, LogitsRows, LogitsSampling, RowTopK,
};
pub use ops::reduce::{
    reduce, reduce_max, reduce_min, reduce_on, reduce_sum, reduce_workspace_bytes, ReduceResult,
};
pub use ops::runs::{
    max_by_key, min_by_key, run_heads, run_heads_on, sum_by_key, unique, unique_consecutive, ByKey,
    RunKey, Runs, Unique,
};
pub use ops::sample::{
    check_row_totals, multinomial, multinomial_on, multinomial_reference,
    multinomial_with_uniforms, multinomial_workspace_bytes, uniform, uniforms, uniforms_on,
    SampleOptions, SampleWeight, MAX_SAMPLE_CATEGORIES, MAX_SAMPLE_DRAWS, SAMPLE_TILE,
};
pub use ops::scan::{
    auto_policy_soc, cum_extreme_on, cum_extreme_workspace_bytes, cummax, cummin, scan, scan_on,
    scan_workspace_bytes, Accumulator, Algorithm, Batch, CumExtremes, Extreme, ScanInput, ScanOp,
    ScanOptions, ScanOutput, MAX_BATCH_ROWS, MAX_I8_SCAN_LEN, MAX_SCAN_LEN,
};
pub use ops::segextrema::{
    segmented_extrema_on, segmented_extrema_workspace_bytes, segmented_max, segmented_min,
    ExtremaValue, SegmentExtrema, MAX_EXTREMA_LEN,
};
pub use ops::segscan::{
    segmented_scan, segmented_scan_on, segmented_scan_workspace_bytes, segmented_sum,
    segmented_sum_on, segmented_sum_workspace_bytes, RevSpec, SegScanAlgorithm, SegScanOptions,
    SegSumAlgorithm, SegSumOptions, SegmentCheck, SegmentSums, SegmentedInput, SegmentedSumInput,
    Segments,
};
pub use ops::softmax::{softmax, softmax_on, softmax_workspace_bytes, SoftmaxInput, Temperature};
pub use ops::sort::{
    argsort, argsort_on, argsort_workspace_bytes, sort, sort_on, sort_pairs, sort_pairs_on,
    sort_pairs_workspace_bytes, sort_workspace_bytes, topk, topk_on, topk_workspace_bytes,
    SortAlgorithm, SortKey, SortOptions, SortValue, Sorted, SortedPairs, TopkKey, TopkOptions,
    MAX_SORT_LEN,
};
pub use ops::split::{
    compress, compress_on, compress_with, compress_workspace_bytes, split, split_on, split_with,
    split_workspace_bytes, CompressOptions, Compressed, Split, SplitCount, SplitOptions,
    SplitValue, MAX_SPLIT_LEN,
};
pub use ops::spmv::{
    spmv, spmv_axpby, spmv_axpby_on, spmv_on, spmv_workspace_bytes, Csr, SpmvCheck, SpmvValue,
    MAX_SPMV_DIM,
};
pub use ops::topp::{
    top_p_sample, top_p_sample_on, top_p_sample_per_row, top_p_sample_workspace_bytes, TopPCheck,
    TopPOptions, TopPPerRow, TopPProb, TopPRows,
};
pub use runtime::BackendKind;
pub use stream::{Event, Stream, Workspace};

/// The README's Rust examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// True when every kernel of the catalogue has a launch entry in this build.
pub fn all_kernels_linked() -> bool {
    algos::catalogue()
        .iter()
        .all(|k| runtime::has_entry(&k.name()))
}
