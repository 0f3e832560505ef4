//! OPSCAN: scans on the vector cores (docs/algorithms.md, section
//! "VectorScan (OPSCAN kernels)"):
//! max and min (the cube can only add), and sums of f32 input (the cube has
//! no f32 scan path worth its quarter rate) or of any input when asked for.
//! Tiles are transposed with Gather and scanned with row-wise vector ops
//! (the VECCUMSUM structure), with a log-step scan of the lane totals for
//! long rows.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;
use crate::scanu::scan_accumulator;

/// An operator of the vector-unit scans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VectorOp {
    /// `+`, identity 0.
    Sum,
    /// `max`, identity -inf (f32) / `i32::MIN` (i32).
    Max,
    /// `min`, identity +inf (f32) / `i32::MAX` (i32).
    Min,
}

impl VectorOp {
    /// The operators other than `+`.
    pub const MAX_MIN: [VectorOp; 2] = [VectorOp::Max, VectorOp::Min];

    /// Lower-case name (kernel names).
    pub fn tag(self) -> &'static str {
        match self {
            VectorOp::Sum => "sum",
            VectorOp::Max => "max",
            VectorOp::Min => "min",
        }
    }

    /// The device-side operator struct (templates/device/blocks_ops.h).
    pub fn cpp_struct(self) -> &'static str {
        match self {
            VectorOp::Sum => "OpSum",
            VectorOp::Max => "OpMax",
            VectorOp::Min => "OpMin",
        }
    }

    /// The AscendC vector API.
    pub fn cpp_api(self) -> &'static str {
        match self {
            VectorOp::Sum => "Add",
            VectorOp::Max => "Max",
            VectorOp::Min => "Min",
        }
    }
}

/// Tiling of the OPSCAN kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct OpScanTiling {
    /// Elements in all rows.
    pub n: u64,
    /// Elements per row (>= 1).
    pub row_len: u64,
    /// Elements per vector core (the last core takes the rest).
    pub per_core: u64,
    /// Lanes of a tile (rows per tile for short rows, 256 for long rows).
    pub lanes: u32,
    /// Elements per lane.
    pub width: u32,
    /// 1: lanes are segments of one long row (carries between lanes and
    /// tiles); 0: lanes are whole rows.
    pub segments: u32,
    /// 1 for an exclusive scan.
    pub exclusive: u32,
    /// 1 to write the row totals.
    pub want_total: u32,
    /// Elements between the totals of consecutive rows (1, or 8 when cores
    /// split rows and so write the totals of neighbouring rows).
    pub total_stride: u32,
    /// 1 when some core starts inside a row: phase 1 and SyncAll run.
    pub sync: u32,
    /// 1 (with `sync`, one row, at most [`OpScan::hold_tiles`] tiles per
    /// core): each core scans its tiles first and keeps them in UB across
    /// SyncAll, then adds its carry and stores them: one read of x, no phase 1.
    pub hold: u32,
}

/// An OPSCAN kernel instance: input type and operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpScan {
    dtype: DType,
    op: VectorOp,
}

/// Elements per tile.
pub const OPSCAN_TILE: u64 = 4096;
/// Most lanes of a tile of short rows.
const MAX_LANES: u64 = 1024;
/// Lanes of a tile of a long row: 256 lanes x 16 positions balance the
/// width - 1 dependent row ops against the log2(lanes) steps of the lane scan
/// (modeled: about half the vector time of 64 x 64).
const SEG_LANES: u64 = 256;
/// What a tile of one row (lanes as segments) costs in dependent row ops of
/// a tile of short rows: modeled, 4 rows of 256 take 16.6 us one tile each
/// and 25.2 us as one tile's lanes; 2048 rows of 256, 84.1 us and 67.4 us.
const SEG_ROUNDS: u64 = 24;
/// Longest row whose lanes are whole rows: up to here the width - 1 row ops
/// over 16+ rows per tile beat a 256-lane tile per row with its lane scan
/// (modeled, 1000 rows of 160: 7.6 us vs 14.5 us).
pub const OPSCAN_SHORT_ROW: u64 = 256;
/// Fewest elements per core when several long rows are split over cores:
/// below two tiles, the reduce phase and SyncAll cost more than the split
/// saves (modeled at n = 4096: about 3 us on one core, 6 us on 16).
const MIN_SPLIT: u64 = 2 * OPSCAN_TILE;
/// A row of at most this many tiles is scanned on one core (no SyncAll):
/// modeled, 2 tiles take 17.4 us on one core, 19.4 us on two.
const ONE_CORE_TILES: u64 = 2;
/// Cores split rows in groups of this many (8 f32/i32 = one 32-byte block).
const ROW_GROUP: u64 = 8;

impl OpScan {
    /// Input types of max and min: f16, bf16 and f32 (f32 results; NaN
    /// propagates as in `torch.cummax`), i8 and i32 (i32 results).
    pub const DTYPES: [DType; 5] = [DType::F16, DType::Bf16, DType::F32, DType::I8, DType::I32];
    /// Input types of sums: also bf16 and f32 (f32 results).
    pub const SUM_DTYPES: [DType; 4] = [DType::F16, DType::Bf16, DType::I8, DType::F32];

    /// An OPSCAN instance.
    pub fn new(dtype: DType, op: VectorOp) -> Result<OpScan, AlgoError> {
        let ok = if op == VectorOp::Sum {
            Self::SUM_DTYPES.contains(&dtype)
        } else {
            Self::DTYPES.contains(&dtype)
        };
        if !ok {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "OpScan",
                dtype,
                reason: format!(
                    "vector {} scans take {}",
                    op.tag(),
                    if op == VectorOp::Sum {
                        "f16, bf16, i8 or f32"
                    } else {
                        "f16, bf16, f32, i8 or i32"
                    }
                ),
            });
        }
        Ok(OpScan { dtype, op })
    }

    /// Most tiles a core keeps in UB across SyncAll (the output queue's
    /// buffers, templates/device/opscan_kernel.h `kHoldTiles`): 4 for sums
    /// of 1- and 2-byte inputs, 2 where the input tiles or the NaN masks
    /// take the room.
    pub fn hold_tiles(&self) -> u64 {
        if self.op == VectorOp::Sum && self.dtype.size() <= 2 {
            4
        } else {
            2
        }
    }

    /// Plans the scans of `rows` rows of `row_len >= 1` elements each.
    ///
    /// Rows of at most 256 elements are tiles' lanes; rows are split over
    /// the cores in groups of 8. Longer rows are scanned in tiles of 256
    /// segments; with at least 8 rows per core the rows are split in groups
    /// of 8, otherwise the flattened input is split into equal ranges (a
    /// multiple of 256 elements) and, when some range starts inside a row, a
    /// reduce phase and SyncAll hand the carries over.
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        row_len: u64,
        exclusive: bool,
        want_total: bool,
    ) -> Result<LaunchPlan<OpScanTiling>, AlgoError> {
        if rows == 0 || row_len == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: "an empty scan needs no launch".into(),
            });
        }
        let n = rows
            .checked_mul(row_len)
            .ok_or(AlgoError::InvalidArgument {
                name: "n",
                reason: format!("{rows} rows of {row_len} elements overflow"),
            })?;
        let cores = u64::from(soc.vector_cores.max(1));
        let groups = rows.div_ceil(ROW_GROUP);
        // Elements per core and the totals' stride, with lanes as rows
        // (short) or as segments of a row.
        let split = |short: bool| {
            if short || groups >= cores {
                return (groups.div_ceil(cores) * ROW_GROUP * row_len, 1);
            }
            let stride = if rows > 1 { ROW_GROUP as u32 } else { 1 };
            let per_core = n.div_ceil(cores).div_ceil(SEG_LANES) * SEG_LANES;
            // One row: a core holds its tiles across SyncAll, so one tile
            // per core is worth the split, but a short row is faster on one
            // core without SyncAll.
            let min_split = match rows {
                1 if n <= ONE_CORE_TILES * OPSCAN_TILE => n.div_ceil(SEG_LANES) * SEG_LANES,
                1 => OPSCAN_TILE,
                _ => MIN_SPLIT,
            };
            (per_core.max(min_split), stride)
        };
        let short_lanes =
            (OPSCAN_TILE / row_len.min(OPSCAN_TILE) / ROW_GROUP * ROW_GROUP).min(MAX_LANES);
        let short = row_len <= OPSCAN_SHORT_ROW && {
            // Lanes as rows cost row_len - 1 dependent row ops per tile,
            // however few rows fill it; a tile per row costs SEG_ROUNDS.
            // Few rows are faster one tile each.
            let rows_per_core = |short| split(short).0.div_ceil(row_len).min(rows);
            (row_len - 1) * rows_per_core(true).div_ceil(short_lanes)
                <= SEG_ROUNDS * rows_per_core(false)
        };
        let (lanes, width) = if short {
            (short_lanes, row_len)
        } else {
            (
                SEG_LANES,
                row_len.div_ceil(SEG_LANES).min(OPSCAN_TILE / SEG_LANES),
            )
        };
        let (per_core, total_stride) = split(short);
        let block_dim = n.div_ceil(per_core);
        let sync = !short && (1..block_dim).any(|k| (k * per_core) % row_len != 0);
        let hold = sync && rows == 1 && per_core.div_ceil(lanes * width) <= self.hold_tiles();
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            // One 32-byte slot per core: the op over its part of a row (phase 1).
            workspace_bytes: block_dim * 32,
            tiling: OpScanTiling {
                n,
                row_len,
                per_core,
                lanes: lanes as u32,
                width: width as u32,
                segments: u32::from(!short),
                exclusive: u32::from(exclusive),
                want_total: u32::from(want_total),
                total_stride,
                sync: u32::from(sync),
                hold: u32::from(hold),
            },
        })
    }
}

impl Kernel for OpScan {
    fn name(&self) -> String {
        format!("opscan_{}_{}", self.op.tag(), self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "y", "totals", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<OpScanTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let acc = scan_accumulator(self.dtype);
        render_entry(
            self,
            "opscan_kernel.h",
            &format!(
                "OpScan (docs/algorithms.md, OpScan): {} scans, {} -> {acc}; tiles of {OPSCAN_TILE}, \
                 {MAX_LANES} lanes of short rows, {SEG_LANES} lanes of a long row.",
                self.op.tag(),
                self.dtype
            ),
            &format!(
                "OpScan<ascend_scan::{}, {}, {}, {OPSCAN_TILE}, {MAX_LANES}, {SEG_LANES}>",
                self.op.cpp_struct(),
                self.dtype.cpp(),
                acc.cpp()
            ),
        )
    }
}

/// The indices of a max or min scan (`torch.cummax` / `torch.cummin`): the
/// OPSCAN kernel in its indices mode (templates/device/opscan_kernel.h,
/// `OpScanIndices`), launched after the inclusive value scan `values` of
/// `x`. Each position's index is the last position at or before it whose
/// input equals its value (or is a NaN, once the values are NaN): a max scan
/// of those positions, on the value scan's tiles and cores. One kernel per
/// input type serves max and min.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpScanIndices {
    dtype: DType,
}

impl OpScanIndices {
    /// The kernel for inputs of `dtype` (one of [`OpScan::DTYPES`]).
    pub fn new(dtype: DType) -> Result<OpScanIndices, AlgoError> {
        OpScan::new(dtype, VectorOp::Max)?;
        Ok(OpScanIndices { dtype })
    }

    /// Plans the indices of `rows` rows of `row_len >= 1` elements: the
    /// tiles and cores of the inclusive value scan, without totals.
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        row_len: u64,
    ) -> Result<LaunchPlan<OpScanTiling>, AlgoError> {
        let values =
            OpScan::new(self.dtype, VectorOp::Max)?.plan(soc, rows, row_len, false, false)?;
        Ok(LaunchPlan {
            kernel: self.name(),
            ..values
        })
    }
}

impl Kernel for OpScanIndices {
    fn name(&self) -> String {
        format!("opscan_indices_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "values", "indices", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<OpScanTiling>()
    }
    fn family(&self) -> String {
        "OpScanIndices".into()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let acc = scan_accumulator(self.dtype);
        render_entry(
            self,
            "opscan_kernel.h",
            &format!(
                "OpScan indices (docs/algorithms.md, OpScan): positions of the max/min scan ({acc}) of \
                 {} input, for cummax/cummin.",
                self.dtype
            ),
            &format!(
                "OpScanIndices<{}, {}, {OPSCAN_TILE}, {MAX_LANES}, {SEG_LANES}>",
                self.dtype.cpp(),
                acc.cpp()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(rows: u64, len: u64) -> OpScanTiling {
        let soc = soc::Soc::Ascend910B4.profile();
        OpScan::new(DType::F16, VectorOp::Max)
            .unwrap()
            .plan(&soc, rows, len, false, true)
            .unwrap()
            .tiling
    }

    #[test]
    fn ranges_keep_cores_out_of_each_others_blocks() {
        for (rows, len) in [
            (1, 1),
            (1, 5000),
            (3, 100_001),
            (300, 4097),
            (65535, 1),
            (7, 33),
        ] {
            let t = plan(rows, len);
            // y is f32: a range boundary on a 32-byte block needs 8 | per_core.
            assert_eq!(t.per_core % 8, 0, "rows={rows} len={len}");
            assert!(t.lanes as u64 * t.width as u64 <= OPSCAN_TILE);
            if t.segments == 0 {
                assert_eq!(t.per_core % (8 * len), 0);
                assert_eq!(t.sync, 0);
            }
        }
        assert_eq!(plan(1, 1 << 20).sync, 1);
        assert_eq!(plan(1, 1 << 20).total_stride, 1);
        assert_eq!(plan(3, 100_001).total_stride, 8);
        assert_eq!(plan(400, 4097).sync, 0);
    }

    #[test]
    fn one_row_holds_at_most_two_tiles_per_core() {
        // Up to two tiles: one core, no SyncAll.
        let t = plan(1, 8192);
        assert_eq!((t.per_core, t.sync, t.hold), (8192, 0, 0));
        // Then a tile per core at least, held while no core gets three.
        let t = plan(1, 8193);
        assert_eq!((t.per_core, t.sync, t.hold), (4096, 1, 1));
        assert_eq!(plan(1, 1 << 18).hold, 1);
        assert_eq!(plan(1, 80 * 4096).hold, 1);
        assert_eq!(plan(1, 80 * 4096 + 1).hold, 0);
        // Several rows keep the reduce phase.
        assert_eq!(plan(3, 100_001).hold, 0);
        // Sums of 2-byte inputs hold up to four tiles.
        let soc = soc::Soc::Ascend910B4.profile();
        let sum = OpScan::new(DType::F16, VectorOp::Sum).unwrap();
        let hold = |n| sum.plan(&soc, 1, n, false, true).unwrap().tiling.hold;
        assert_eq!((hold(160 * 4096), hold(160 * 4096 + 1)), (1, 0));
    }

    #[test]
    fn empty_scans_are_not_planned() {
        let soc = soc::Soc::Ascend910B4.profile();
        let a = OpScan::new(DType::I8, VectorOp::Min).unwrap();
        assert!(a.plan(&soc, 1, 0, false, false).is_err());
        assert!(OpScan::new(DType::U16, VectorOp::Min).is_err());
        assert!(OpScan::new(DType::I32, VectorOp::Sum).is_err());
    }
}
