//! `cargo xtask bench`: every operation on the simulator, modeled on a SoC
//! profile, side by side with a modeled COPY that moves the same HBM traffic.
//!
//! Writes target/bench/results.json, results.md, bandwidth.svg and bandwidth.png.
//! All times and bandwidths are *modeled* (the cost model of ascendc-sim); the
//! only measured number is the simulator's wall time.
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context as _};
use ascend_scan::matrices::{sparse_attention, AttentionPattern, HostCsr};
use ascend_scan::{
    compress, copy, cummax, multinomial, reduce_max, reduce_sum, run_heads, sample_logits,
    sample_logits_on, sample_logits_per_row, sample_logits_workspace_bytes, scan, segmented_max,
    segmented_scan, segmented_sum, softmax, sort, split_with, spmv, sum_by_key, top_p_sample,
    top_p_sample_on, top_p_sample_workspace_bytes, topk, Algorithm, Batch, Csr, Device,
    LogitsCheck, LogitsPerRow, LogitsRows, LogitsSampling, RevSpec, RowTopK, SampleOptions, ScanOp,
    ScanOptions, SegScanAlgorithm, SegScanOptions, SegSumAlgorithm, SegSumOptions, Segments, Soc,
    SocProfile, SoftmaxInput, SortAlgorithm, SortOptions, SplitOptions, Temperature, TopPCheck,
    TopPOptions, TopPProb, TopPRows, TopkKey, TopkOptions, Workspace, MAX_I8_SCAN_LEN,
};
use ascendc_sim::cost::{assumptions, assumptions_markdown, pipe_name, Assumption};
use ascendc_sim::{model_launches, CostParams, LaunchReport, ModelProfile, ModelReport};
use half::f16;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// Options of the bench task.
#[derive(Debug, Clone)]
pub struct BenchArgs {
    /// A few sizes only (well under 5 minutes on a 2-core machine).
    pub quick: bool,
    /// Largest log2(n) (default 26).
    pub max_log2: Option<u32>,
    /// SoC profile name.
    pub soc: String,
    /// Only the operations whose label contains this text (e.g. "RTSCAN s=128 f16"),
    /// or one of several texts separated by '|'.
    pub only: Option<String>,
    /// Print where the slowest cores' modeled time goes, per launch
    /// (conservative profile).
    pub profile: bool,
    /// With `profile`: also write each profiled core's timeline to
    /// target/bench/timeline/<kernel>-<core>.txt.
    pub timeline: bool,
    /// With `profile`: the nth core of each type instead of the slowest.
    pub core: Option<usize>,
}

/// The cost parameters of both model profiles of a SoC: every row is modeled
/// twice from the same recorded traces (no second simulation).
#[derive(Debug, Clone)]
pub(crate) struct Profiles {
    pub(crate) nominal: CostParams,
    pub(crate) conservative: CostParams,
}

impl Profiles {
    pub(crate) fn of(profile: &SocProfile) -> Profiles {
        Profiles {
            nominal: CostParams::for_profile(profile, ModelProfile::Nominal),
            conservative: CostParams::for_profile(profile, ModelProfile::Conservative),
        }
    }
}

/// SCANU (one AI core: 1 AIC + 1 AIV) and VECCUMSUM (one vector core) are
/// single-core algorithms: their simulator wall time grows with n, so their
/// sweeps stop earlier than those of the multi-core kernels.
const SINGLE_CORE_MAX_LOG2: u32 = 24;
const SINGLE_CORE_MAX_LOG2_QUICK: u32 = 20;
const QUICK_SIZES: [u32; 3] = [12, 16, 20];
/// Extra --quick sizes of the multi-core kernels (COPY, REDUCE, MCSCAN, RTSCAN, OPSCAN,
/// COMPRESS, SPLIT).
const QUICK_MULTI_EXTRA: [u32; 2] = [22, 24];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum ScanAlgo {
    ScanU,
    ScanUL1,
    McScan,
    ReduceThenScan,
    VecCumSum,
    VectorScan,
}

/// The sampling parameters of a SAMPLE_LOGITS bench row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogitsParams {
    /// Every row: top_k 50, top_p 0.9.
    TopK,
    /// Every row: top_p 0.9.
    TopP,
    /// Per row: greedy rows and top_k 20, 50 or 100 (the draw on the top-k).
    MixedTopK,
    /// Per row: greedy rows, rows without top_k, the rest with (the draw on
    /// whole rows).
    MixedWhole,
    /// MixedTopK's parameters on the device, through the stream form
    /// (`sample_logits_on`, the uniforms computed on the device): a serving
    /// loop's decode step.
    MixedOnDevice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    Copy,
    ReduceF16,
    ReduceI8,
    ScanF16 {
        algo: ScanAlgo,
        s: u32,
    },
    ScanI8 {
        algo: ScanAlgo,
        s: u32,
    },
    /// REDUCE max (vector cores).
    ReduceMaxF16,
    /// OPSCAN max (vector cores).
    MaxScanF16,
    MaxScanI8,
    /// cummax: OPSCAN max, then its positions (OPSCAN indices mode).
    CumMaxF16,
    /// COMPRESS f16 values, random flags (half of them 1), no indices.
    CompressF16,
    /// SPLIT f16 values, random flags, without / with indices (SPLITIND).
    SplitF16 {
        indices: bool,
    },
    /// RADIXSORT of random f16 keys with i32 indices, 1- or 4-bit digits.
    SortF16 {
        digit_bits: u32,
    },
    /// RADIXSORT of random f32 keys with i32 indices, 4-bit digits.
    SortF32,
    /// RADIXSORT of `rows` rows of `n` random f16 keys with i32 indices
    /// (rows that fit a tile: one launch on chip).
    SortRowsF16 {
        rows: u32,
        n: u32,
    },

    /// MULTINOMIAL f16 weights, one draw per row: one row of n (a sweep)
    /// or `rows` rows of a vocabulary of VOCAB (a fixed shape).
    MultinomialF16 {
        rows: u32,
    },
    /// MULTINOMIAL f16 weights, many draws from one row: MANY_DRAWS draws
    /// from a row of MANY_DRAWS_N weights (a fixed shape).
    MultinomialDrawsF16,
    /// TOPP sampling (p = 0.9) of `rows` rows of `vocab` probabilities,
    /// f32 or f16, with min_p = MIN_P or without, with every row's kept
    /// count (the stream form with `TopPCheck::with_kept_count`) or without.
    TopP {
        rows: u32,
        vocab: u32,
        f32: bool,
        min_p: bool,
        count: bool,
    },
    /// SOFTMAX (temperature SOFTMAX_T) of `rows` rows of SOFTMAX_VOCAB
    /// logits, f16 or f32, to f32 probabilities.
    Softmax {
        rows: u32,
        f32: bool,
    },
    /// sample_logits of `rows` rows of SOFTMAX_VOCAB f32 logits
    /// (temperature SOFTMAX_T, top_p 0.9, with top_k 50 or without), or
    /// sample_logits_per_row of a mixed batch.
    SampleLogits {
        rows: u32,
        params: LogitsParams,
    },
    /// TOPK (k = 50, sorted) of `rows` rows of VOCAB f16 (or f32) keys.
    TopK {
        rows: u32,
        f32: bool,
    },
    /// Segmented scan (inclusive) of SEG_N f16 values, random flags with
    /// `ppm` ones per million.
    SegScanF16 {
        algo: SegAlgo,
        ppm: u32,
    },
    /// Segmented sum of SEG_N f16 values, random flags with `ppm` ones per million.
    SegSumF16 {
        algo: SegSumAlgorithm,
        ppm: u32,
    },
    /// Segmented sum (SEGSUM, the only one for f32) of SEG_N f32 values,
    /// random flags with `ppm` ones per million.
    SegSumF32 {
        ppm: u32,
    },
    /// The segmented scan (`scan`, Auto) or sum (Auto) of SEG_N f16 values
    /// with the segments of random flags at `ppm` ones per million given as
    /// offsets (checked and turned into flags on the device).
    SegOffsetsF16 {
        scan: bool,
        ppm: u32,
    },
    /// Segmented max (SEGEXTREMA: values and indices) of SEG_N f16 values
    /// with the segments of random flags at `ppm` ones per million given as
    /// offsets.
    SegMaxF16 {
        ppm: u32,
    },
    /// CSR SpMV (f32 values, i32 columns) of the blocked sparse-attention
    /// matrix with 65536 rows, block edge `block`, `random` random blocks
    /// per block-row; n is the nonzero count.
    SpmvF32 {
        block: u32,
        random: u32,
    },
    /// The run-start flags (RUNHEADS) of SEG_N i32 keys in runs that start
    /// at random flags (RUNS_PPM per million).
    RunHeadsI32,
    /// The sums of SEG_N f16 values by the same i32 keys (`sum_by_key`:
    /// RUNHEADS, COMPRESS of the keys, the segmented sum).
    SumByKeyI32,
}

/// Run starts per million keys of the RUNHEADS and SUM_BY_KEY rows (1%).
const RUNS_PPM: u32 = 10_000;

/// The segmented scans of the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum SegAlgo {
    Vector,
    Simple,
    Sscr,
}

impl SegAlgo {
    fn algorithm(self) -> SegScanAlgorithm {
        match self {
            SegAlgo::Vector => SegScanAlgorithm::SegScan {
                revspec: RevSpec::Vector,
            },
            SegAlgo::Simple => SegScanAlgorithm::SegScan {
                revspec: RevSpec::Simple,
            },
            SegAlgo::Sscr => SegScanAlgorithm::Sscr,
        }
    }
    fn label(self) -> &'static str {
        match self {
            SegAlgo::Vector => "SEGSCAN revspec=vector",
            SegAlgo::Simple => "SEGSCAN revspec=simple",
            SegAlgo::Sscr => "SSCR",
        }
    }
}

/// Segment densities of the segmented rows (ones per million flags):
/// 0.01%, 0.1%, 1%, 10%, 100%.
const SEG_PPM: [u32; 5] = [100, 1_000, 10_000, 100_000, 1_000_000];

/// Length of the segmented rows (a fixed shape: 2^24, within SSCR's int8 limit).
const SEG_N: usize = 1 << 24;

fn density_label(ppm: u32) -> String {
    format!("{}%", f64::from(ppm) / 10_000.0)
}

/// Block edges of the SpMV rows (random blocks: 4).
const SPMV_BLOCKS: [u32; 4] = [2, 4, 16, 64];

/// The sparse-attention matrix of an SpMV row.
fn spmv_matrix(block: u32, random: u32) -> HostCsr {
    sparse_attention(AttentionPattern {
        rows: AttentionPattern::DEFAULT_ROWS,
        block: block as usize,
        random_blocks: random as usize,
        seed: 1,
    })
}

/// Batch sizes and vocabularies of the TOPP rows (Llama 2, Llama 3,
/// DeepSeek-V3, Qwen2).
const TOPP_ROWS: [u32; 4] = [1, 8, 96, 256];
/// Batch sizes of the f32 TOPP rows (vocabulary 129280).
const TOPP_F32_ROWS: [u32; 3] = [1, 8, 96];
const TOPP_VOCABS: [u32; 4] = [32_000, 128_256, 129_280, 151_936];
/// min_p of the TOPP rows with min-p (vLLM's examples use 0.05..0.1).
const MIN_P: f32 = 0.05;

/// Largest log2(n) of the radix sorts (the one-bit sort runs 16 passes:
/// its simulator wall time is 16 SPLITs).
const SORT_MAX_LOG2: u32 = 24;

/// Vocabulary of the fixed-shape MULTINOMIAL rows (Llama 3).
const VOCAB: usize = 128_256;
/// Logits per row of the SOFTMAX rows (DeepSeek-V3's vocabulary, as the TOPP
/// rows) and their temperature.
const SOFTMAX_VOCAB: usize = 129_280;
const SOFTMAX_T: f32 = 0.7;
/// The many-draws MULTINOMIAL shape: 2^24 + 7 categories (three block
/// levels below the top), two million draws.
const MANY_DRAWS_N: usize = (1 << 24) + 7;
const MANY_DRAWS: usize = 2_000_000;

impl ScanAlgo {
    fn name(self) -> &'static str {
        match self {
            ScanAlgo::ScanU => "SCANU",
            ScanAlgo::ScanUL1 => "SCANUL1",
            ScanAlgo::McScan => "MCSCAN",
            ScanAlgo::ReduceThenScan => "RTSCAN",
            ScanAlgo::VecCumSum => "VECCUMSUM",
            ScanAlgo::VectorScan => "VECTORSCAN",
        }
    }
    fn tile_edges(self) -> &'static [u32] {
        match self {
            ScanAlgo::ScanU | ScanAlgo::McScan | ScanAlgo::ReduceThenScan => &[16, 32, 64, 128],
            ScanAlgo::VecCumSum | ScanAlgo::ScanUL1 => &[16, 32, 64],
            // No tile edge (0 stands for none).
            ScanAlgo::VectorScan => &[0],
        }
    }
    fn algorithm(self, s: u32) -> Algorithm {
        match self {
            ScanAlgo::ScanU => Algorithm::ScanU { s },
            ScanAlgo::ScanUL1 => Algorithm::ScanUL1 { s },
            ScanAlgo::McScan => Algorithm::McScan { s },
            ScanAlgo::ReduceThenScan => Algorithm::ReduceThenScan { s },
            ScanAlgo::VecCumSum => Algorithm::VecCumSum { s },
            ScanAlgo::VectorScan => Algorithm::VectorScan,
        }
    }
    fn single_core(self) -> bool {
        !matches!(
            self,
            ScanAlgo::McScan | ScanAlgo::ReduceThenScan | ScanAlgo::VectorScan
        )
    }
    /// "NAME s=S" (or "NAME" without a tile edge).
    fn label(self, s: u32) -> String {
        if s == 0 {
            self.name().into()
        } else {
            format!("{} s={s}", self.name())
        }
    }
}

impl Op {
    fn label(self) -> String {
        match self {
            Op::Copy => "COPY f16".into(),
            Op::ReduceF16 => "REDUCE f16->f32".into(),
            Op::ReduceI8 => "REDUCE i8->i32".into(),
            Op::ScanF16 { algo, s } => format!("{} f16->f32 incl", algo.label(s)),
            Op::ScanI8 { algo, s } => format!("{} i8->i32 incl", algo.label(s)),
            Op::ReduceMaxF16 => "REDUCE max f16->f32".into(),
            Op::MaxScanF16 => "OPSCAN max f16->f32 incl".into(),
            Op::MaxScanI8 => "OPSCAN max i8->i32 incl".into(),
            Op::CumMaxF16 => "CUMMAX f16->f32 (+i32 indices)".into(),
            Op::CompressF16 => "COMPRESS f16 (f=1/2)".into(),
            Op::SplitF16 { indices: false } => "SPLIT f16".into(),
            Op::SplitF16 { indices: true } => "SPLITIND f16 (+i32 indices)".into(),
            Op::SortF16 { digit_bits } => {
                format!("RADIXSORT {digit_bits}-bit f16 (+i32 indices)")
            }
            Op::SortF32 => "RADIXSORT 4-bit f32 (+i32 indices)".into(),
            Op::SortRowsF16 { rows, n } => format!("RADIXSORT f16 {rows}x{n} (+i32 indices)"),
            Op::TopP {
                rows,
                vocab,
                f32,
                min_p,
                count,
            } => {
                let t = if f32 { "f32" } else { "f16" };
                let m = if min_p {
                    format!(", min_p={MIN_P}")
                } else {
                    String::new()
                };
                let c = if count { ", kept count" } else { "" };
                format!("TOPP {t} {rows}x{vocab} (p=0.9{m}{c})")
            }
            Op::TopK { rows, f32 } => {
                let key = if f32 { "f32" } else { "f16" };
                format!("TOPK {key} {rows}x{VOCAB} (k=50, sorted)")
            }
            Op::SampleLogits { rows, params } => {
                let p = match params {
                    LogitsParams::TopK => format!("T={SOFTMAX_T}, top_k=50, top_p=0.9"),
                    LogitsParams::TopP => format!("T={SOFTMAX_T}, top_p=0.9"),
                    LogitsParams::MixedTopK => "per row: 1/4 greedy, top_k 20..100".into(),
                    LogitsParams::MixedWhole => "per row: 1/4 greedy, 1/4 no top_k".into(),
                    LogitsParams::MixedOnDevice => {
                        "per row on the device: 1/4 greedy, top_k 20..100, stream form".into()
                    }
                };
                format!("SAMPLE_LOGITS f32 {rows}x{SOFTMAX_VOCAB} ({p})")
            }
            Op::Softmax { rows, f32 } => {
                let t = if f32 { "f32" } else { "f16" };
                format!("SOFTMAX {t} {rows}x{SOFTMAX_VOCAB} (T={SOFTMAX_T}, f32 out)")
            }
            Op::SegScanF16 { algo, ppm } => {
                format!(
                    "{} f16->f32 incl (flags {})",
                    algo.label(),
                    density_label(ppm)
                )
            }
            Op::SegSumF16 { algo, ppm } => {
                let name = match algo {
                    SegSumAlgorithm::Scd => "SEGSUM SCD",
                    SegSumAlgorithm::OnePass => "SEGSUM one pass",
                    _ => "SEGSUM bounded (SEGSCAN+compress)",
                };
                format!("{name} f16->f32 (flags {})", density_label(ppm))
            }
            Op::SegSumF32 { ppm } => {
                format!("SEGSUM one pass f32 (flags {})", density_label(ppm))
            }
            Op::SegOffsetsF16 { scan, ppm } => {
                let name = if scan {
                    "SEGSCAN auto f16->f32 incl"
                } else {
                    "SEGSUM auto f16->f32"
                };
                format!("{name} (offsets {})", density_label(ppm))
            }
            Op::SegMaxF16 { ppm } => {
                format!("SEGMAX f16 with indices (offsets {})", density_label(ppm))
            }
            Op::SpmvF32 { block, random } => {
                format!("SPMV f32 sparse-attention 65536 rows b={block} r={random} (n = nnz)")
            }
            Op::RunHeadsI32 => format!("RUNHEADS i32 keys (runs {})", density_label(RUNS_PPM)),
            Op::SumByKeyI32 => {
                format!(
                    "SUM_BY_KEY i32 keys f16->f32 values (runs {})",
                    density_label(RUNS_PPM)
                )
            }
            Op::MultinomialF16 { rows: 0 } => "MULTINOMIAL f16 1 row (1 draw)".into(),
            Op::MultinomialF16 { rows } => {
                format!("MULTINOMIAL f16 {rows}x{VOCAB} (1 draw/row)")
            }
            Op::MultinomialDrawsF16 => {
                format!("MULTINOMIAL f16 1x(2^24+7) ({MANY_DRAWS} draws)")
            }
        }
    }
    /// Minimal HBM traffic per element: read the input once, write the output
    /// once (a reduction writes one value: its floor is the input).
    fn floor_bytes_per_element(self) -> u64 {
        match self {
            Op::Copy => 4,
            Op::ReduceF16 | Op::ReduceMaxF16 => 2,
            Op::ReduceI8 => 1,
            Op::ScanF16 { .. } | Op::MaxScanF16 => 6,
            Op::ScanI8 { .. } | Op::MaxScanI8 => 5,
            // Read x, write the values and the indices.
            Op::CumMaxF16 => 10,
            // Read values (2) and flags (1), write the kept half (2 * 1/2).
            Op::CompressF16 => 4,
            // Read values and flags, write every value (and its i32 index).
            Op::SplitF16 { indices: false } => 5,
            Op::SplitF16 { indices: true } => 9,
            // Read the keys, write keys and indices.
            Op::SortF16 { .. } => 8,
            Op::SortF32 => 12,
            Op::SortRowsF16 { .. } => 8,
            // One read of the weights (the indices are 4 bytes per row; the
            // many-draws row's 8 MB of indices left out: a low floor).
            Op::MultinomialF16 { .. } | Op::MultinomialDrawsF16 => 2,
            // One read of the probabilities (the tokens are 4 bytes per row).
            Op::TopP { f32: false, .. } | Op::TopK { f32: false, .. } => 2,
            Op::TopP { f32: true, .. } | Op::TopK { f32: true, .. } => 4,
            // Read the logits once, write the f32 probabilities.
            Op::Softmax { f32: false, .. } => 6,
            Op::Softmax { f32: true, .. } => 8,
            // One read of the logits (the tokens are 4 bytes per row).
            Op::SampleLogits { .. } => 4,
            // Read values (2) and flags (1), write the f32 result (4).
            Op::SegScanF16 { .. } => 7,
            // Read values and flags (the sums are one per segment).
            Op::SegSumF16 { .. } => 3,
            Op::SegSumF32 { .. } => 5,
            // As with flags (the offsets, 4 B per segment, stand for them).
            Op::SegOffsetsF16 { scan: true, .. } => 7,
            Op::SegOffsetsF16 { scan: false, .. } => 3,
            // Read the values; the offsets and the results (10 B per
            // segment) counted as flags, as for the sums.
            Op::SegMaxF16 { .. } => 3,
            // Per nonzero: the f32 value and i32 column once, one f32 read of x.
            Op::SpmvF32 { .. } => 12,
            // Read the keys, write the int8 flags.
            Op::RunHeadsI32 => 5,
            // Read the keys and the values (the results are per run).
            Op::SumByKeyI32 => 6,
        }
    }
    /// The element count of a fixed-shape operation (swept ones: None).
    fn fixed_n(self) -> Option<usize> {
        match self {
            Op::MultinomialF16 { rows } if rows > 0 => Some(rows as usize * VOCAB),
            Op::MultinomialDrawsF16 => Some(MANY_DRAWS_N),
            Op::TopP { rows, vocab, .. } => Some(rows as usize * vocab as usize),
            Op::TopK { rows, .. } => Some(rows as usize * VOCAB),
            Op::Softmax { rows, .. } | Op::SampleLogits { rows, .. } => {
                Some(rows as usize * SOFTMAX_VOCAB)
            }
            Op::SortRowsF16 { rows, n } => Some(rows as usize * n as usize),
            Op::SegScanF16 { .. }
            | Op::SegSumF16 { .. }
            | Op::SegSumF32 { .. }
            | Op::SegOffsetsF16 { .. }
            | Op::SegMaxF16 { .. }
            | Op::RunHeadsI32
            | Op::SumByKeyI32 => Some(SEG_N),
            // The nonzero count (about 65536 * (5 + r) * b: the first and
            // last block-rows have fewer window blocks).
            Op::SpmvF32 { block, random } => Some(spmv_matrix(block, random).nnz()),
            _ => None,
        }
    }
    fn single_core(self) -> bool {
        match self {
            Op::Copy
            | Op::ReduceF16
            | Op::ReduceI8
            | Op::ReduceMaxF16
            | Op::MaxScanF16
            | Op::MaxScanI8
            | Op::CumMaxF16
            | Op::CompressF16
            | Op::SplitF16 { .. }
            | Op::SortF16 { .. }
            | Op::SortF32
            | Op::SortRowsF16 { .. }
            | Op::MultinomialF16 { .. }
            | Op::MultinomialDrawsF16
            | Op::TopP { .. }
            | Op::TopK { .. }
            | Op::Softmax { .. }
            | Op::SampleLogits { .. }
            | Op::SegScanF16 { .. }
            | Op::SegSumF16 { .. }
            | Op::SegSumF32 { .. }
            | Op::SegOffsetsF16 { .. }
            | Op::SegMaxF16 { .. }
            | Op::SpmvF32 { .. }
            | Op::RunHeadsI32
            | Op::SumByKeyI32 => false,
            Op::ScanF16 { algo, .. } | Op::ScanI8 { algo, .. } => algo.single_core(),
        }
    }
    fn max_log2(self, quick: bool, max: u32) -> u32 {
        let cap = match (self.single_core(), quick) {
            (false, _) => max,
            (true, true) => SINGLE_CORE_MAX_LOG2_QUICK,
            (true, false) => SINGLE_CORE_MAX_LOG2,
        };
        let cap = cap.min(max);
        if let Op::SortF16 { .. } | Op::SortF32 = self {
            return cap.min(SORT_MAX_LOG2);
        }
        if let Op::ScanI8 { .. } | Op::ReduceI8 = self {
            // i8 inputs longer than MAX_I8_SCAN_LEN are refused (i32 overflow).
            cap.min(MAX_I8_SCAN_LEN.ilog2())
        } else {
            cap
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Modeled {
    pub(crate) time_s: f64,
    hbm_read_bytes: u64,
    hbm_write_bytes: u64,
    l2_bytes: u64,
    l2_hit_bytes: u64,
    hbm_busy: f64,
    critical: String,
    busy: Vec<(String, f64)>,
    launches: usize,
    /// Whether the hazard checker watched (and passed) every launch.
    pub(crate) hazards_checked: bool,
}

/// An operation's launches modeled under both profiles.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Both {
    pub(crate) nominal: Modeled,
    pub(crate) conservative: Modeled,
}

/// Models the launches of one operation under both profiles.
pub(crate) fn modeled_both(
    reports: &[LaunchReport],
    profiles: &Profiles,
    n: u64,
) -> anyhow::Result<(Both, ModelReport, ModelReport)> {
    let (nominal, nr) = modeled(reports, &profiles.nominal, n)?;
    let (conservative, cr) = modeled(reports, &profiles.conservative, n)?;
    Ok((
        Both {
            nominal,
            conservative,
        },
        nr,
        cr,
    ))
}

/// The figures of one row under one profile.
#[derive(Debug, Clone, Serialize)]
struct Figures {
    /// Modeled time, seconds.
    modeled_time_s: f64,
    /// Minimal traffic / modeled time, GB/s.
    modeled_gbps: f64,
    /// Elements (keys) per modeled second, in units of 10^9.
    modeled_gelems: f64,
    /// Modeled HBM bytes per element.
    hbm_bytes_per_element: f64,
    /// Modeled L2 (requested GM) bytes per element.
    l2_bytes_per_element: f64,
    /// The modeled time and GB/s (its own 2x bytes over its time).
    copy_time_s: f64,
    copy_gbps: f64,
    /// modeled_gbps / copy_gbps, percent.
    pct_of_copy: f64,
    model: Modeled,
}

impl Figures {
    fn new(
        op: Op,
        n: usize,
        m: Modeled,
        report: &ModelReport,
        copy_bytes: u64,
        copy: &Modeled,
    ) -> Figures {
        let floor = op.floor_bytes_per_element();
        let gbps = (floor * n as u64) as f64 / m.time_s / 1e9;
        let copy_gbps = (2 * copy_bytes) as f64 / copy.time_s / 1e9;
        Figures {
            modeled_time_s: m.time_s,
            modeled_gbps: gbps,
            modeled_gelems: n as f64 / m.time_s / 1e9,
            hbm_bytes_per_element: report.hbm_bytes_per_element(),
            l2_bytes_per_element: report.l2_bytes_per_element(),
            copy_time_s: copy.time_s,
            copy_gbps,
            pct_of_copy: 100.0 * gbps / copy_gbps,
            model: m,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct Row {
    op: String,
    n: u64,
    log2_n: u32,
    /// Minimal HBM traffic of the operation, bytes per element.
    floor_bytes_per_element: u64,
    /// Bytes of the COPY run with the same minimal traffic (copy of floor*n/2 bytes).
    copy_bytes: u64,
    /// Simulator wall time of the operation, seconds (measured).
    sim_wall_s: f64,
    /// Every assumption at its nominal value.
    nominal: Figures,
    /// Every assumption at its pessimistic end (the figures the README quotes).
    conservative: Figures,
}

pub(crate) fn modeled(
    reports: &[LaunchReport],
    params: &CostParams,
    n: u64,
) -> anyhow::Result<(Modeled, ModelReport)> {
    if reports.is_empty() {
        bail!("the operation recorded no launch");
    }
    // Launches on one stream run one after the other (each with its overhead).
    let m = model_launches(reports, params, n)
        .with_context(|| format!("modeling {}", reports[0].kernel))?
        .context("the operation recorded no launch")?;
    let out = Modeled {
        hazards_checked: reports.iter().all(|r| r.hazards_checked),
        time_s: m.time_s,
        hbm_read_bytes: m.hbm_read_bytes,
        hbm_write_bytes: m.hbm_write_bytes,
        l2_bytes: m.l2_bytes,
        l2_hit_bytes: m.l2_hit_bytes,
        hbm_busy: m.hbm_busy,
        critical: m.critical.to_string(),
        busy: m
            .busy
            .iter()
            .map(|b| (format!("{} {}", b.core, pipe_name(b.pipe)), b.fraction))
            .collect(),
        launches: reports.len(),
    };
    Ok((out, m))
}

/// The f16 nearest to multiples of 1/10 in [-10, 10] (201 values: many ties).
fn tenths_f16(n: usize, seed: u64) -> Vec<f16> {
    bits(n, seed)
        .map(|v| f16::from_f32((v % 201) as f32 / 10.0 - 10.0))
        .collect()
}

/// Deterministic pseudo-random bits (xorshift).
pub(crate) fn bits(n: usize, seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n).map(move |_| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    })
}

struct Runner {
    dev: Device,
    profiles: Profiles,
    /// COPY results by byte count: (modeled under both profiles, wall).
    copies: HashMap<u64, (Both, f64)>,
}

impl Runner {
    fn run_copy(&mut self, bytes: u64) -> anyhow::Result<(Both, f64)> {
        if let Some(c) = self.copies.get(&bytes) {
            return Ok(c.clone());
        }
        let data: Vec<u8> = bits(bytes as usize, 7).map(|v| v as u8).collect();
        let x = self.dev.upload(&data)?;
        self.dev.take_reports();
        let t = Instant::now();
        let y = copy(&x)?;
        let wall = t.elapsed().as_secs_f64();
        drop(y);
        let (m, _, _) = modeled_both(&self.dev.take_reports(), &self.profiles, bytes)?;
        self.copies.insert(bytes, (m.clone(), wall));
        Ok((m, wall))
    }

    /// Uploads `rows` rows of probabilities and returns the wall time of
    /// one `top_p_sample` (p = 0.9, `min_p`) over them; with `count`, of
    /// `top_p_sample_on` with every row's kept count (its check and
    /// workspace made before the clock starts).
    fn time_top_p<T: TopPProb>(
        &mut self,
        probs: &[T],
        rows: usize,
        min_p: f32,
        count: bool,
    ) -> anyhow::Result<f64> {
        let x = self.dev.upload(probs)?;
        let o = TopPOptions {
            p: 0.9,
            top_k: None,
            min_p,
            seed: 1,
        };
        if count {
            let n = probs.len() / rows;
            let stream = self.dev.create_stream()?;
            let mut tokens = self.dev.alloc::<i32>(rows)?;
            let mut check = TopPCheck::with_kept_count(&self.dev, rows)?;
            let bytes = top_p_sample_workspace_bytes::<T>(&self.dev, rows, n, o)?;
            let mut ws = Workspace::new(&self.dev, bytes)?;
            self.dev.take_reports();
            let t = Instant::now();
            let batch = Batch::rows(&x, rows)?;
            top_p_sample_on(
                &stream,
                batch,
                o,
                TopPRows::default(),
                &mut tokens,
                &mut check,
                &mut ws,
            )?;
            stream.synchronize()?;
            check.download()?;
            return Ok(t.elapsed().as_secs_f64());
        }
        self.dev.take_reports();
        let t = Instant::now();
        let tokens = top_p_sample(&self.dev, Batch::rows(&x, rows)?, o)?;
        let wall = t.elapsed().as_secs_f64();
        debug_assert_eq!(tokens.len(), rows);
        Ok(wall)
    }

    /// Uploads `rows` rows of keys and returns the wall time of one `topk`
    /// (k = 50, sorted) over them.
    fn time_topk<K: TopkKey>(&mut self, keys: &[K], rows: usize) -> anyhow::Result<f64> {
        let x = self.dev.upload(keys)?;
        self.dev.take_reports();
        let t = Instant::now();
        let top = topk(
            &self.dev,
            Batch::rows(&x, rows)?,
            50,
            TopkOptions::default(),
        )?;
        let wall = t.elapsed().as_secs_f64();
        debug_assert_eq!(top.values.len(), rows * 50);
        Ok(wall)
    }

    fn time_softmax<T: SoftmaxInput>(&mut self, logits: &[T], rows: usize) -> anyhow::Result<f64> {
        let x = self.dev.upload(logits)?;
        self.dev.take_reports();
        let t = Instant::now();
        let probs = softmax(
            &self.dev,
            Batch::rows(&x, rows)?,
            Temperature::All(SOFTMAX_T),
        )?;
        let wall = t.elapsed().as_secs_f64();
        debug_assert_eq!(probs.len(), logits.len());
        Ok(wall)
    }

    /// Runs `op` on `n` elements: its launch reports and the simulator wall time.
    fn run_op(&mut self, op: Op, n: usize) -> anyhow::Result<(Vec<LaunchReport>, f64)> {
        let scan_opts = |algo: ScanAlgo, s| ScanOptions {
            exclusive: false,
            algorithm: algo.algorithm(s),
            want_total: false,
            ..Default::default()
        };
        let wall;
        match op {
            Op::Copy => {
                let data = tenths_f16(n, 1);
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let y = copy(&x)?;
                wall = t.elapsed().as_secs_f64();
                drop(y);
            }
            Op::ReduceF16 => {
                let data = tenths_f16(n, 4);
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let _sum = reduce_sum(&self.dev, &x)?;
                wall = t.elapsed().as_secs_f64();
            }
            Op::ReduceI8 => {
                let data: Vec<i8> = bits(n, 5).map(|v| v as i8).collect();
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let _sum = reduce_sum(&self.dev, &x)?;
                wall = t.elapsed().as_secs_f64();
            }
            Op::ScanF16 { algo, s } => {
                let data = tenths_f16(n, 2);
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let y = scan(&self.dev, &x, scan_opts(algo, s))?;
                wall = t.elapsed().as_secs_f64();
                drop(y);
            }
            Op::ReduceMaxF16 => {
                let data = tenths_f16(n, 4);
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let _max = reduce_max(&self.dev, &x)?;
                wall = t.elapsed().as_secs_f64();
            }
            Op::MaxScanF16 | Op::MaxScanI8 => {
                let opts = ScanOptions {
                    op: ScanOp::Max,
                    ..Default::default()
                };
                let t;
                let y = if op == Op::MaxScanF16 {
                    let data = tenths_f16(n, 2);
                    let x = self.dev.upload(&data)?;
                    self.dev.take_reports();
                    t = Instant::now();
                    scan(&self.dev, &x, opts)?.values.len()
                } else {
                    let data: Vec<i8> = bits(n, 3).map(|v| v as i8).collect();
                    let x = self.dev.upload(&data)?;
                    self.dev.take_reports();
                    t = Instant::now();
                    scan(&self.dev, &x, opts)?.values.len()
                };
                wall = t.elapsed().as_secs_f64();
                debug_assert_eq!(y, n);
            }
            Op::CumMaxF16 => {
                let data = tenths_f16(n, 2);
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let out = cummax(&self.dev, &x)?;
                wall = t.elapsed().as_secs_f64();
                drop(out);
            }
            Op::ScanI8 { algo, s } => {
                let data: Vec<i8> = bits(n, 3).map(|v| v as i8).collect();
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let y = scan(&self.dev, &x, scan_opts(algo, s))?;
                wall = t.elapsed().as_secs_f64();
                drop(y);
            }
            Op::CompressF16 | Op::SplitF16 { .. } => {
                let data: Vec<f16> = bits(n, 6).map(|v| f16::from_bits(v as u16)).collect();
                let flags: Vec<i8> = bits(n, 7).map(|v| (v >> 9 & 1) as i8).collect();
                let x = self.dev.upload(&data)?;
                let f = self.dev.upload(&flags)?;
                self.dev.take_reports();
                let t = Instant::now();
                let len = match op {
                    Op::SplitF16 { indices } => {
                        let opts = SplitOptions {
                            want_indices: indices,
                        };
                        split_with(&self.dev, &x, &f, opts)?.ones
                    }
                    _ => compress(&self.dev, &x, &f)?.count,
                };
                wall = t.elapsed().as_secs_f64();
                debug_assert!(len <= n);
            }
            Op::SortF16 { digit_bits } => {
                let data: Vec<f16> = bits(n, 8).map(|v| f16::from_bits(v as u16)).collect();
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let algorithm = if digit_bits == 1 {
                    SortAlgorithm::OneBit
                } else {
                    SortAlgorithm::MultiBit
                };
                let t = Instant::now();
                let sorted = sort(
                    &self.dev,
                    &x,
                    SortOptions {
                        descending: false,
                        algorithm,
                    },
                )?;
                wall = t.elapsed().as_secs_f64();
                drop(sorted);
            }
            Op::SortRowsF16 { rows, .. } => {
                let data: Vec<f16> = bits(n, 8).map(|v| f16::from_bits(v as u16)).collect();
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let sorted = sort(
                    &self.dev,
                    Batch::rows(&x, rows as usize)?,
                    SortOptions::default(),
                )?;
                wall = t.elapsed().as_secs_f64();
                drop(sorted);
            }
            Op::SortF32 => {
                let data: Vec<f32> = bits(n, 8).map(|v| f32::from_bits(v as u32)).collect();
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let sorted = sort(&self.dev, &x, SortOptions::default())?;
                wall = t.elapsed().as_secs_f64();
                drop(sorted);
            }
            Op::MultinomialF16 { .. } | Op::MultinomialDrawsF16 => {
                let (rows, draws) = match op {
                    Op::MultinomialF16 { rows } => ((rows as usize).max(1), 1),
                    _ => (1, MANY_DRAWS),
                };
                let data: Vec<f16> = bits(n, 8)
                    .map(|v| f16::from_f32((v % 1000) as f32 / 1000.0))
                    .collect();
                let x = self.dev.upload(&data)?;
                self.dev.take_reports();
                let t = Instant::now();
                let batch = Batch::rows(&x, rows)?;
                let drawn = multinomial(&self.dev, batch, draws, SampleOptions { seed: 1 })?;
                wall = t.elapsed().as_secs_f64();
                debug_assert_eq!(drawn.len(), rows * draws);
            }
            Op::TopK { rows, f32 } => {
                let rows = rows as usize;
                wall = if f32 {
                    self.time_topk(&softmax_rows_f32(rows, n / rows), rows)?
                } else {
                    self.time_topk(&softmax_rows(rows, n / rows), rows)?
                };
            }
            Op::SampleLogits { rows, params } => {
                let x = self.dev.upload(&bench_logits(n))?;
                let rows = rows as usize;
                let batch = Batch::rows(&x, rows)?;
                let options = LogitsSampling {
                    temperature: SOFTMAX_T,
                    top_k: (params == LogitsParams::TopK).then_some(50),
                    top_p: 0.9,
                    min_p: 0.0,
                    seed: 1,
                };
                // Mixed batches: row r greedy when r % 4 == 0; else top_k
                // 20, 50 or 100 (or 0, off, for r % 4 == 1 in MixedWhole),
                // temperatures 0.6..1.2, top_p 0.8..1.
                let whole = params == LogitsParams::MixedWhole;
                let t: Vec<f32> = (0..rows)
                    .map(|r| {
                        if r % 4 == 0 {
                            0.0
                        } else {
                            0.6 + (r % 7) as f32 * 0.1
                        }
                    })
                    .collect();
                let k: Vec<u32> = (0..rows)
                    .map(|r| {
                        if whole && r % 4 == 1 {
                            0
                        } else {
                            [20, 50, 100][r % 3]
                        }
                    })
                    .collect();
                let p: Vec<f32> = (0..rows).map(|r| 0.8 + (r % 5) as f32 * 0.05).collect();
                let per_row = LogitsPerRow {
                    temperature: Some(&t),
                    top_k: Some(&k),
                    top_p: Some(&p),
                    min_p: None,
                };
                // The stream form's inputs, made before the timed call.
                let k_i32: Vec<i32> = k.iter().map(|&k| k as i32).collect();
                let (t_dev, k_dev, p_dev) = (
                    self.dev.upload(&t)?,
                    self.dev.upload(&k_i32)?,
                    self.dev.upload(&p)?,
                );
                let rows_in = LogitsRows {
                    temperature: Some(&t_dev),
                    top_k: Some(RowTopK {
                        k: &k_dev,
                        max: 100,
                        some_off: false,
                    }),
                    top_p: Some(&p_dev),
                    ..Default::default()
                };
                let on_device = params == LogitsParams::MixedOnDevice;
                let (stream, mut workspace) = if on_device {
                    let len = n / rows;
                    let bytes = sample_logits_workspace_bytes::<f32>(
                        &self.dev, rows, len, &rows_in, options,
                    )?;
                    (
                        Some(self.dev.create_stream()?),
                        Some(Workspace::new(&self.dev, bytes)?),
                    )
                } else {
                    (None, None)
                };
                let mut check = LogitsCheck::new(&self.dev, rows)?;
                let mut tokens = self.dev.alloc::<i32>(rows)?;
                self.dev.take_reports();
                let t = Instant::now();
                match (params, &stream, &mut workspace) {
                    (LogitsParams::TopK | LogitsParams::TopP, _, _) => {
                        tokens = sample_logits(&self.dev, batch, options)?;
                    }
                    (LogitsParams::MixedOnDevice, Some(stream), Some(workspace)) => {
                        sample_logits_on(
                            stream,
                            batch,
                            rows_in,
                            options,
                            &mut tokens,
                            &mut check,
                            workspace,
                        )?;
                        stream.synchronize()?;
                        check.download()?;
                    }
                    _ => tokens = sample_logits_per_row(&self.dev, batch, per_row, options)?,
                }
                wall = t.elapsed().as_secs_f64();
                debug_assert_eq!(tokens.len(), rows);
            }
            Op::Softmax { rows, f32 } => {
                let rows = rows as usize;
                let logits = bench_logits(n);
                wall = if f32 {
                    self.time_softmax(&logits, rows)?
                } else {
                    let h: Vec<f16> = logits.iter().map(|&v| f16::from_f32(v)).collect();
                    self.time_softmax(&h, rows)?
                };
            }
            Op::TopP {
                rows,
                f32,
                min_p,
                count,
                ..
            } => {
                let rows = rows as usize;
                let min_p = if min_p { MIN_P } else { 0.0 };
                wall = if f32 {
                    self.time_top_p(&softmax_rows_f32(rows, n / rows), rows, min_p, count)?
                } else {
                    self.time_top_p(&softmax_rows(rows, n / rows), rows, min_p, count)?
                };
            }
            Op::SegScanF16 { ppm, .. }
            | Op::SegSumF16 { ppm, .. }
            | Op::SegSumF32 { ppm }
            | Op::SegOffsetsF16 { ppm, .. }
            | Op::SegMaxF16 { ppm } => {
                let data = tenths_f16(n, 9);
                let cut = u64::from(ppm);
                let flags: Vec<i8> = bits(n, 10).map(|v| i8::from(v % 1_000_000 < cut)).collect();
                let x = self.dev.upload(&data)?;
                let x32 = match op {
                    Op::SegSumF32 { .. } => {
                        let wide: Vec<f32> = data.iter().map(|v| v.to_f32()).collect();
                        Some(self.dev.upload(&wide)?)
                    }
                    _ => None,
                };
                let f = self.dev.upload(&flags)?;
                // The same segments as offsets: every start, position 0 included.
                let offsets: Vec<i32> = (0..n)
                    .filter(|&i| i == 0 || flags[i] == 1)
                    .chain([n])
                    .map(|i| i as i32)
                    .collect();
                let o = self.dev.upload(&offsets)?;
                self.dev.take_reports();
                let t = Instant::now();
                let segments = match op {
                    Op::SegOffsetsF16 { .. } | Op::SegMaxF16 { .. } => Segments::Offsets(&o),
                    _ => Segments::Flags(&f),
                };
                let len = match op {
                    Op::SegOffsetsF16 { scan: true, .. } => {
                        segmented_scan(&self.dev, &x, segments, SegScanOptions::default())?.len()
                    }
                    Op::SegOffsetsF16 { scan: false, .. } => {
                        segmented_sum(&self.dev, &x, segments, SegSumOptions::default())?.count
                    }
                    Op::SegScanF16 { algo, .. } => {
                        let options = SegScanOptions {
                            exclusive: false,
                            algorithm: algo.algorithm(),
                        };
                        segmented_scan(&self.dev, &x, segments, options)?.len()
                    }
                    Op::SegSumF16 { algo, .. } => {
                        segmented_sum(&self.dev, &x, segments, SegSumOptions { algorithm: algo })?
                            .count
                    }
                    Op::SegMaxF16 { .. } => segmented_max(&self.dev, &x, segments)?.values.len(),
                    Op::SegSumF32 { .. } => {
                        let x = x32.as_ref().expect("made above");
                        segmented_sum(&self.dev, x, segments, SegSumOptions::default())?.count
                    }
                    _ => unreachable!("a segmented op"),
                };
                wall = t.elapsed().as_secs_f64();
                debug_assert!(len <= n);
            }
            Op::RunHeadsI32 | Op::SumByKeyI32 => {
                // Keys: the number of run starts so far (a new key per run).
                let cut = u64::from(RUNS_PPM);
                let keys: Vec<i32> = bits(n, 10)
                    .scan(0i32, |k, v| {
                        *k += i32::from(v % 1_000_000 < cut);
                        Some(*k)
                    })
                    .collect();
                let k = self.dev.upload(&keys)?;
                let x = self.dev.upload(&tenths_f16(n, 9))?;
                self.dev.take_reports();
                let t = Instant::now();
                let len = if op == Op::RunHeadsI32 {
                    run_heads(&self.dev, &k)?.len()
                } else {
                    sum_by_key(&self.dev, &k, &x, SegSumOptions::default())?
                        .runs
                        .count
                };
                wall = t.elapsed().as_secs_f64();
                debug_assert!(len <= n);
            }
            Op::SpmvF32 { block, random } => {
                let a = spmv_matrix(block, random);
                debug_assert_eq!(a.nnz(), n);
                let csr = Csr::<f32>::upload(&self.dev, &a)?;
                let x: Vec<f32> = bits(a.shape.1, 12)
                    .map(|v| (v % 2048) as f32 / 1024.0 - 1.0)
                    .collect();
                let x = self.dev.upload(&x)?;
                self.dev.take_reports();
                let t = Instant::now();
                let y = spmv(&self.dev, &csr, &x)?;
                wall = t.elapsed().as_secs_f64();
                debug_assert_eq!(y.len(), a.shape.0);
            }
        }
        Ok((self.dev.take_reports(), wall))
    }
}

/// Prints, for each kernel launch of one row, where the modeled time of its
/// slowest cores (or the `nth` core of each type) goes (the events that
/// pushed their finish time out), and the work of their busiest pipe by event.
fn print_profile(
    label: &str,
    n: usize,
    reports: &[LaunchReport],
    params: &CostParams,
    timeline: Option<&Path>,
    nth: Option<usize>,
) -> anyhow::Result<()> {
    const TOP: usize = 24;
    println!("\n## {label}, n = {n} (conservative)");
    for r in reports
        .iter()
        .filter(|r| r.task == ascendc_sim::Task::Kernel)
    {
        for core in ascendc_sim::profile_launch(r, params, nth)? {
            let us = |cycles: f64| cycles / params.clock_hz * 1e6;
            let kind = if r.traces[core.core].is_cube {
                "AIC"
            } else {
                "AIV"
            };
            println!(
                "{} ({kind} {}): {:.2} us",
                r.kernel,
                r.traces[core.core].block_idx,
                us(core.cycles)
            );
            for (name, cycles) in core.by_event.iter().take(TOP) {
                println!("  {name:<28} {:>8.2} us", us(*cycles));
            }
            let (pipe, work) = core.busiest_pipe;
            println!("  busiest pipe {pipe}: {:.2} us of work", us(work));
            for (name, cycles) in core.busiest_by_event.iter().take(TOP / 2) {
                println!("    {name:<26} {:>8.2} us", us(*cycles));
            }
            if let Some(dir) = timeline {
                let block = r.traces[core.core].block_idx;
                let path = dir.join(format!("{}-{kind}{block}.txt", r.kernel));
                std::fs::create_dir_all(dir)?;
                std::fs::write(&path, timeline_text(&core.timeline, us))?;
                println!("  timeline: {}", path.display());
            }
        }
    }
    Ok(())
}

/// A core's timeline as text: one line per run of equal consecutive events
/// (their count, name and the finish time after the last, us), so that
/// phases (a tile loop, a scalar loop) read as a few lines.
fn timeline_text(events: &[(String, f64)], us: impl Fn(f64) -> f64) -> String {
    let mut out =
        String::from("# events that pushed the finish time out: count, name, finish (us)\n");
    let mut i = 0;
    while i < events.len() {
        let run = events[i..]
            .iter()
            .take_while(|(name, _)| *name == events[i].0)
            .count();
        let (name, end) = &events[i + run - 1];
        out += &format!("{run:>5} {name:<28} {:>10.2}\n", us(*end));
        i += run;
    }
    out
}

pub fn run(root: &Path, args: &BenchArgs) -> anyhow::Result<()> {
    let Some(soc) = Soc::from_name(&args.soc) else {
        bail!(
            "unknown --soc {}: expected one of Ascend910B1, Ascend910B2, Ascend910B3, Ascend910B4",
            args.soc
        );
    };
    let max = args.max_log2.unwrap_or(26);
    if !(5..=30).contains(&max) {
        bail!("--max {max}: expected 5..=30");
    }
    let dev = Device::simulated(soc)?;
    let profiles = Profiles::of(dev.profile());
    let mut ops = vec![
        Op::Copy,
        Op::ReduceF16,
        Op::ReduceI8,
        Op::ReduceMaxF16,
        Op::MaxScanF16,
        Op::MaxScanI8,
        Op::CumMaxF16,
        Op::CompressF16,
        Op::SplitF16 { indices: false },
        Op::SplitF16 { indices: true },
        Op::SortF16 { digit_bits: 4 },
        Op::SortF16 { digit_bits: 1 },
        Op::SortF32,
        Op::SortRowsF16 { rows: 96, n: 1000 },
        Op::SortRowsF16 { rows: 4096, n: 256 },
        Op::SortRowsF16 { rows: 16384, n: 64 },
        Op::SortRowsF16 { rows: 2048, n: 512 },
        Op::MultinomialF16 { rows: 0 },
        Op::MultinomialF16 { rows: 1 },
        Op::MultinomialF16 { rows: 96 },
        Op::MultinomialDrawsF16,
        Op::TopK {
            rows: 1,
            f32: false,
        },
        Op::TopK {
            rows: 96,
            f32: false,
        },
        Op::TopK {
            rows: 48,
            f32: false,
        },
        Op::TopK { rows: 1, f32: true },
        Op::TopK {
            rows: 96,
            f32: true,
        },
        Op::Softmax {
            rows: 1,
            f32: false,
        },
        Op::Softmax {
            rows: 96,
            f32: false,
        },
        Op::Softmax { rows: 1, f32: true },
        Op::SampleLogits {
            rows: 1,
            params: LogitsParams::TopK,
        },
        Op::SampleLogits {
            rows: 96,
            params: LogitsParams::TopK,
        },
        Op::SampleLogits {
            rows: 96,
            params: LogitsParams::TopP,
        },
        Op::SampleLogits {
            rows: 96,
            params: LogitsParams::MixedTopK,
        },
        Op::SampleLogits {
            rows: 96,
            params: LogitsParams::MixedWhole,
        },
        Op::SampleLogits {
            rows: 96,
            params: LogitsParams::MixedOnDevice,
        },
        Op::Softmax {
            rows: 96,
            f32: true,
        },
    ];
    for block in SPMV_BLOCKS {
        ops.push(Op::SpmvF32 { block, random: 4 });
    }
    for algo in [
        ScanAlgo::ReduceThenScan,
        ScanAlgo::McScan,
        ScanAlgo::ScanU,
        ScanAlgo::ScanUL1,
        ScanAlgo::VecCumSum,
        ScanAlgo::VectorScan,
    ] {
        for &s in algo.tile_edges() {
            ops.push(Op::ScanF16 { algo, s });
        }
        // SCANUL1 is f16 only (int8 operands cannot carry int32 row sums).
        if algo != ScanAlgo::ScanUL1 {
            for &s in algo.tile_edges() {
                ops.push(Op::ScanI8 { algo, s });
            }
        }
    }
    for ppm in SEG_PPM {
        for algo in [SegAlgo::Vector, SegAlgo::Simple, SegAlgo::Sscr] {
            ops.push(Op::SegScanF16 { algo, ppm });
        }
        for algo in [
            SegSumAlgorithm::OnePass,
            SegSumAlgorithm::SegScan,
            SegSumAlgorithm::Scd,
        ] {
            ops.push(Op::SegSumF16 { algo, ppm });
        }
        ops.push(Op::SegSumF32 { ppm });
        for scan in [true, false] {
            ops.push(Op::SegOffsetsF16 { scan, ppm });
        }
        ops.push(Op::SegMaxF16 { ppm });
    }
    ops.push(Op::RunHeadsI32);
    ops.push(Op::SumByKeyI32);
    for rows in TOPP_ROWS {
        for vocab in TOPP_VOCABS {
            ops.push(Op::TopP {
                rows,
                vocab,
                f32: false,
                min_p: false,
                count: false,
            });
        }
    }
    // What min_p and the kept count cost where it is felt: one long row
    // (latency) and a full batch.
    for (min_p, count) in [(true, false), (false, true)] {
        for rows in [1, 96] {
            ops.push(Op::TopP {
                rows,
                vocab: 129_280,
                f32: false,
                min_p,
                count,
            });
        }
    }
    for rows in TOPP_F32_ROWS {
        ops.push(Op::TopP {
            rows,
            vocab: 129_280,
            f32: true,
            min_p: false,
            count: false,
        });
    }
    if let Some(only) = &args.only {
        // Several texts separated by '|': a label containing any of them.
        ops.retain(|op| {
            let label = op.label();
            only.split('|').any(|t| label.contains(t))
        });
        if ops.is_empty() {
            bail!("--only {only}: no operation's label contains it");
        }
    }
    let mut jobs: Vec<(Op, u32)> = Vec::new();
    for &op in &ops {
        let cap = op.max_log2(args.quick, max);
        let sizes: Vec<u32> = if let Some(n) = op.fixed_n() {
            vec![n.ilog2()]
        } else if args.quick {
            let extra: &[u32] = if op.single_core() {
                &[]
            } else {
                &QUICK_MULTI_EXTRA
            };
            QUICK_SIZES
                .iter()
                .chain(extra)
                .copied()
                .filter(|l| *l <= cap)
                .collect()
        } else {
            (12..=cap).collect()
        };
        jobs.extend(sizes.into_iter().map(|l| (op, l)));
    }
    let notes = vec![
        format!(
            "SCANU and SCANUL1 (one AI core) and VECCUMSUM (one vector core) are single-core algorithms and their simulator wall time grows with n, so they are swept up to 2^{} (2^{} with --quick); COPY, REDUCE, MCSCAN, RTSCAN, OPSCAN, CUMMAX, COMPRESS, SPLIT and MULTINOMIAL (one row) up to 2^{max}; RADIXSORT up to 2^{} (G elem/s is its GKeys/s); MULTINOMIAL also at the fixed shapes 1 and 96 rows of a 128256 vocabulary; TOPP at {{1, 8, 96, 256}} rows x {{32000, 128256, 129280, 151936}} (% of COPY: of its one-read floor, 2 B per probability); TOPK at 1, 48 (f16) and 96 x 128256; the segmented operations at 2^24 elements and flag densities 0.01%, 0.1%, 1%, 10%, 100%.",
            SINGLE_CORE_MAX_LOG2.min(max),
            SINGLE_CORE_MAX_LOG2_QUICK.min(max),
            SORT_MAX_LOG2.min(max),
        ),
        format!(
            "i8 scans and reductions stop at 2^{} (longer inputs could overflow the i32 result and are refused).",
            MAX_I8_SCAN_LEN.ilog2()
        ),
        "SPMV: n is the nonzero count of the sparse-attention matrix (65536 rows, b x b blocks, 2 global + 3 window + r = 4 random blocks per block-row; nnz about 65536 * 9 * b); modeled GFLOP/s = 2 * G elem/s; its floor of 12 B per nonzero (f32 value, i32 column, one f32 x read) is the bandwidth roofline and % of COPY is % of that roofline.".into(),
        "Each operation is compared with a modeled COPY that moves the same minimal HBM traffic (a copy of floor*n/2 bytes), run in the same process on the same profile.".into(),
        "Every time and bandwidth is MODELED by the ascendc-sim cost model (docs/cost-model.md); only the simulator wall time is measured.".into(),
    ];

    let bar = ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut runner = Runner {
        dev,
        profiles,
        copies: HashMap::new(),
    };
    let started = Instant::now();
    let timeline = args.timeline.then(|| root.join("target/bench/timeline"));
    let mut rows = Vec::new();
    for (op, log2) in jobs {
        let n = op.fixed_n().unwrap_or(1usize << log2);
        bar.set_message(format!("{} n={n}", op.label()));
        let (reports, wall) = runner.run_op(op, n)?;
        let (m, nr, cr) = modeled_both(&reports, &runner.profiles, n as u64)?;
        if args.profile {
            bar.suspend(|| {
                print_profile(
                    &op.label(),
                    n,
                    &reports,
                    &runner.profiles.conservative,
                    timeline.as_deref(),
                    args.core,
                )
            })?;
        }
        drop(reports);
        let floor = op.floor_bytes_per_element();
        let copy_bytes = (floor * n as u64 / 2).div_ceil(32) * 32;
        let (cm, _) = runner.run_copy(copy_bytes)?;
        rows.push(Row {
            op: op.label(),
            n: n as u64,
            log2_n: log2,
            floor_bytes_per_element: floor,
            copy_bytes,
            sim_wall_s: wall,
            nominal: Figures::new(op, n, m.nominal, &nr, copy_bytes, &cm.nominal),
            conservative: Figures::new(op, n, m.conservative, &cr, copy_bytes, &cm.conservative),
        });
        bar.inc(1);
    }
    bar.finish_with_message("done");
    let total_wall = started.elapsed().as_secs_f64();
    // Numbers from launches the hazard checker did not watch
    // (ASCSIM_HAZARDS=0) prove nothing about a real NPU: shown, not written.
    let unchecked: Vec<String> = rows
        .iter()
        .filter(|r| {
            !r.nominal.model.hazards_checked
                || !runner
                    .copies
                    .values()
                    .all(|(c, _)| c.nominal.hazards_checked)
        })
        .map(|r| format!("{} n={}", r.op, r.n))
        .collect();
    if !unchecked.is_empty() {
        println!("{}", markdown(&soc.to_string(), &rows, &notes, total_wall));
        bail!(
            "refusing to publish: {} row(s) come from launches the hazard checker did not watch \
             (ASCSIM_HAZARDS=0): {}; nothing was written to target/bench",
            unchecked.len(),
            unchecked.join(", ")
        );
    }

    let out = root.join("target/bench");
    std::fs::create_dir_all(&out)?;
    let json = serde_json::json!({
        "soc": soc.to_string(),
        "quick": args.quick,
        "max_log2": max,
        "notes": notes,
        "bench_wall_s": total_wall,
        "cost_params_nominal": format!("{:?}", runner.profiles.nominal),
        "cost_params_conservative": format!("{:?}", runner.profiles.conservative),
        "rows": rows,
    });
    std::fs::write(
        out.join("results.json"),
        serde_json::to_string_pretty(&json)?,
    )?;
    let md = markdown(&soc.to_string(), &rows, &notes, total_wall);
    std::fs::write(out.join("results.md"), &md)?;
    plot(&out, &soc.to_string(), &rows)?;
    println!("{md}");
    println!(
        "wrote {}/results.json, results.md, bandwidth.svg, bandwidth.png",
        out.strip_prefix(root).unwrap_or(&out).display()
    );
    Ok(())
}

/// `rows` rows of `vocab` f16 probabilities shaped like a language model's
/// softmax (a few large entries, a long tail; each row sums to about 1).
fn softmax_rows(rows: usize, vocab: usize) -> Vec<f16> {
    softmax_rows_f32(rows, vocab)
        .into_iter()
        .map(f16::from_f32)
        .collect()
}

/// Logits in [-16, 16), steps of 1/256 (exact in f16).
fn bench_logits(n: usize) -> Vec<f32> {
    bits(n, 11)
        .map(|v| (v % 8192) as f32 / 256.0 - 16.0)
        .collect()
}

/// [`softmax_rows`] in f32 (distinct values, none rounded to 16 bits).
fn softmax_rows_f32(rows: usize, vocab: usize) -> Vec<f32> {
    let logits: Vec<f32> = bits(rows * vocab, 9)
        .map(|v| -((v % 4096) as f32) / 256.0)
        .collect();
    logits
        .chunks(vocab)
        .flat_map(|row| {
            let total: f32 = row.iter().map(|l| l.exp()).sum();
            row.iter().map(move |l| l.exp() / total)
        })
        .collect()
}

/// "2^k" for a power of two, else the count.
fn n_label(r: &Row) -> String {
    if r.n.is_power_of_two() {
        format!("2^{}", r.log2_n)
    } else {
        r.n.to_string()
    }
}

fn markdown(soc: &str, rows: &[Row], notes: &[String], wall: f64) -> String {
    let mut s = format!("# ascend-scan bench ({soc} profile, modeled)\n\n");
    for n in notes {
        s += &format!("- {n}\n");
    }
    s += &format!("- Bench wall time: {wall:.1} s.\n\n");
    s += "Two profiles model every row from the same traces: *cons.* (conservative: every ASSUMPTION of docs/cost-model.md at its pessimistic end; the README quotes these) and *nom.* (nominal). Each is compared with a COPY modeled under the same profile. Critical: the resource with the most busy time and its busy % of the modeled time.\n\n";
    s += "| operation | n | modeled us cons. | modeled us nom. | G elem/s cons. | GB/s cons. | COPY GB/s cons. | % of COPY cons. | % of COPY nom. | HBM B/elem cons. | floor B/elem | L2 B/elem | critical cons. | critical nom. | sim wall (s) |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|\n";
    for r in rows {
        let (c, nom) = (&r.conservative, &r.nominal);
        s += &format!(
            "| {} | {} | {:.2} | {:.2} | {:.3} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {} | {:.2} | {} | {} | {:.2} |\n",
            r.op,
            n_label(r),
            c.modeled_time_s * 1e6,
            nom.modeled_time_s * 1e6,
            c.modeled_gelems,
            c.modeled_gbps,
            c.copy_gbps,
            c.pct_of_copy,
            nom.pct_of_copy,
            c.hbm_bytes_per_element,
            r.floor_bytes_per_element,
            c.l2_bytes_per_element,
            c.model.critical,
            nom.model.critical,
            r.sim_wall_s
        );
    }
    s += "\nPipe busy fractions (conservative profile; per core type, averaged over its cores) at the largest n of each operation:\n\n";
    s += "| operation | n | busy | HBM busy |\n|---|---:|---|---:|\n";
    let mut last: Vec<&Row> = Vec::new();
    for r in rows {
        match last.iter_mut().find(|l| l.op == r.op) {
            Some(l) if l.n < r.n => *l = r,
            Some(_) => {}
            None => last.push(r),
        }
    }
    for r in last {
        let busy: Vec<String> = r
            .conservative
            .model
            .busy
            .iter()
            .map(|(p, f)| format!("{p} {:.0}%", 100.0 * f))
            .collect();
        s += &format!(
            "| {} | {} | {} | {:.0}% |\n",
            r.op,
            n_label(r),
            busy.join(", "),
            100.0 * r.conservative.model.hbm_busy
        );
    }
    s
}

fn plot(out: &Path, soc: &str, rows: &[Row]) -> anyhow::Result<()> {
    use plotters::prelude::*;
    use plotters::style::{register_font, FontStyle};
    // The PNG backend renders text with ab_glyph: it needs a font, taken from a
    // crates.io package (Ubuntu Light from epaint_default_fonts) so the plot
    // does not depend on system fonts.
    register_font(
        "sans-serif",
        FontStyle::Normal,
        epaint_default_fonts::UBUNTU_LIGHT,
    )
    .map_err(|_| anyhow::anyhow!("the bundled font does not load"))?;

    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows {
        match series.iter_mut().find(|(l, _)| *l == r.op) {
            Some((_, pts)) => pts.push((f64::from(r.log2_n), r.conservative.modeled_gbps)),
            None => series.push((
                r.op.clone(),
                vec![(f64::from(r.log2_n), r.conservative.modeled_gbps)],
            )),
        }
    }
    let x_min = rows.iter().map(|r| r.log2_n).min().unwrap_or(12) as f64;
    let x_max = rows.iter().map(|r| r.log2_n).max().unwrap_or(26) as f64;
    let y_max = rows
        .iter()
        .map(|r| r.conservative.modeled_gbps)
        .fold(1.0f64, f64::max)
        * 1.5;
    let title = format!("modeled bandwidth of the minimal traffic ({soc}, conservative)");

    fn draw<DB: DrawingBackend>(
        root: DrawingArea<DB, plotters::coord::Shift>,
        title: &str,
        series: &[(String, Vec<(f64, f64)>)],
        x: (f64, f64),
        y_max: f64,
    ) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x.0 - 0.5..x.1 + 0.5, (0.5..y_max).log_scale())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        chart
            .configure_mesh()
            .x_desc("n (elements)")
            .y_desc("modeled GB/s (log scale)")
            .x_labels((x.1 - x.0) as usize + 2)
            .x_label_formatter(&|v| format!("2^{}", v.round() as i64))
            .draw()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (i, (label, pts)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                .map_err(|e| anyhow::anyhow!("{e}"))?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(())
    }

    let svg = out.join("bandwidth.svg");
    draw(
        SVGBackend::new(&svg, (1000, 650)).into_drawing_area(),
        &title,
        &series,
        (x_min, x_max),
        y_max,
    )?;
    let png = out.join("bandwidth.png");
    draw(
        BitMapBackend::new(&png, (1000, 650)).into_drawing_area(),
        &title,
        &series,
        (x_min, x_max),
        y_max,
    )?;
    Ok(())
}

/// The headline rows of the sensitivity table in docs/cost-model.md.
fn headlines() -> Vec<(Op, usize)> {
    vec![
        (
            Op::ScanF16 {
                algo: ScanAlgo::ReduceThenScan,
                s: 128,
            },
            1 << 26,
        ),
        (
            Op::ScanF16 {
                algo: ScanAlgo::VectorScan,
                s: 0,
            },
            1 << 20,
        ),
        (Op::SortF16 { digit_bits: 4 }, 1 << 24),
        (
            Op::TopP {
                rows: 96,
                vocab: 129_280,
                f32: false,
                min_p: false,
                count: false,
            },
            96 * 129_280,
        ),
        (
            Op::SegScanF16 {
                algo: SegAlgo::Simple,
                ppm: 1_000,
            },
            SEG_N,
        ),
    ]
}

/// `cargo xtask bench --sensitivity`: runs the headline rows once each and
/// replays their traces with every assumption moved alone to its pessimistic
/// end (then all of them: the conservative profile). Writes
/// target/bench/sensitivity.md: the assumption table and the change of each
/// row's modeled time.
pub fn sensitivity(root: &Path, soc_name: &str) -> anyhow::Result<()> {
    let soc = Soc::from_name(soc_name).with_context(|| format!("unknown --soc {soc_name}"))?;
    let dev = Device::simulated(soc)?;
    let profile = dev.profile().clone();
    let profiles = Profiles::of(&profile);
    let list = assumptions(&profile);
    let mut runner = Runner {
        dev,
        profiles: profiles.clone(),
        copies: HashMap::new(),
    };
    // Per headline: label, nominal time, conservative time and critical,
    // the time with each assumption at its pessimistic end alone.
    let mut cols: Vec<(String, ModelReport, ModelReport, Vec<f64>)> = Vec::new();
    for (op, n) in headlines() {
        println!("{} n={n}: simulating", op.label());
        let (reports, _) = runner.run_op(op, n)?;
        if !reports.iter().all(|r| r.hazards_checked) {
            bail!("refusing to publish numbers from launches the hazard checker did not watch (ASCSIM_HAZARDS=0)");
        }
        let (_, nominal, conservative) = modeled_both(&reports, &profiles, n as u64)?;
        let mut times = Vec::new();
        for a in &list {
            let mut p = profiles.nominal.clone();
            a.apply(&mut p, a.pessimistic());
            let (m, _) = modeled(&reports, &p, n as u64)?;
            times.push(m.time_s);
        }
        let size = if n.is_power_of_two() {
            format!("2^{}", n.ilog2())
        } else {
            n.to_string()
        };
        cols.push((
            format!("{} {size}", op.label()),
            nominal,
            conservative,
            times,
        ));
    }
    let md = sensitivity_markdown(&soc.to_string(), &profile, &list, &cols);
    let out = root.join("target/bench");
    std::fs::create_dir_all(&out)?;
    std::fs::write(out.join("sensitivity.md"), &md)?;
    println!("{md}");
    println!("wrote target/bench/sensitivity.md");
    Ok(())
}

fn sensitivity_markdown(
    soc: &str,
    profile: &SocProfile,
    list: &[Assumption],
    cols: &[(String, ModelReport, ModelReport, Vec<f64>)],
) -> String {
    let mut s = format!(
        "# Cost-model assumptions and sensitivity ({soc} profile)\n\nGenerated by `cargo xtask bench --sensitivity --soc {soc}`.\n\n"
    );
    s += &assumptions_markdown(profile);
    s += "\nChange of the modeled time when one assumption alone moves from its nominal value to its pessimistic end (the others nominal); last row: all of them (the conservative profile).\n\n| assumption |";
    for (label, ..) in cols {
        s += &format!(" {label} |");
    }
    s += "\n|---|";
    s += &"---:|".repeat(cols.len());
    s += "\n| nominal modeled us (critical) |";
    for (_, nominal, ..) in cols {
        s += &format!(" {:.1} ({}) |", nominal.time_s * 1e6, nominal.critical);
    }
    for (i, a) in list.iter().enumerate() {
        s += &format!("\n| {} |", a.name);
        for (_, nominal, _, times) in cols {
            s += &format!(" {} |", change(times[i], nominal.time_s));
        }
    }
    s += "\n| **all (conservative)** |";
    for (_, nominal, conservative, _) in cols {
        s += &format!(" **{}** |", change(conservative.time_s, nominal.time_s));
    }
    s += "\n| conservative modeled us (critical) |";
    for (_, _, conservative, _) in cols {
        s += &format!(
            " {:.1} ({}) |",
            conservative.time_s * 1e6,
            conservative.critical
        );
    }
    s += "\n";
    s
}

/// "+12.3%" (or "0%" when it does not move).
fn change(t: f64, base: f64) -> String {
    let pct = 100.0 * (t / base - 1.0);
    if pct.abs() < 0.05 {
        "0%".into()
    } else {
        format!("{pct:+.1}%")
    }
}
