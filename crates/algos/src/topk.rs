//! Top-k by a bounded radix select (docs/algorithms.md, section "Top-k"):
//! one launch reads each row twice (block maxima, then the compaction of
//! the candidates at or above their k-th largest) and selects among the
//! candidates only.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::radix::MAX_SORT_LEN;
use crate::render::render_entry;

/// Tiling of the TOPK kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct TopKTiling {
    /// Rows of the batch.
    pub rows: u64,
    /// Keys per row.
    pub n: u64,
    /// Keys selected per row (1..=n).
    pub k: u64,
    /// Pieces per row of the rows from `shared_from` on: 1 (every row whole
    /// on one core), or one piece per core.
    pub pieces: u64,
    /// Keys per piece (a multiple of 128; the last piece takes the rest).
    pub piece_len: u64,
    /// Consecutive whole rows per core, below `shared_from`.
    pub rows_per_core: u64,
    /// The first row cut into pieces (`rows` when none is).
    pub shared_from: u64,
    /// 1: the k largest keys; 0: the k smallest.
    pub largest: u32,
    /// 1: the kernel writes each row's k keys in order (k <= [`TopK::MAX_SORTED_K`]).
    pub sorted: u32,
}

/// Pieces start at multiples of the largest chunk (128 keys: one f16 repeat).
const BLOCK: u64 = 128;
/// Pieces per row (the owner reads every piece's count slot).
const MAX_PIECES: u64 = 64;
/// Fewest keys worth a piece of their own.
const MIN_PIECE: u64 = 4096;
/// Bytes of a piece's count slot.
const SLOT_BYTES: u64 = 32;

/// The TOPK kernel for keys of one type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopK {
    key: DType,
}

impl TopK {
    /// Key types (those of the radix sort but the 32-bit integers, whose
    /// values fp32 order values do not hold exactly).
    pub const DTYPES: [DType; 7] = [
        DType::U8,
        DType::I8,
        DType::U16,
        DType::I16,
        DType::F16,
        DType::Bf16,
        DType::F32,
    ];

    /// Largest k the kernel writes in order itself (`sorted`): it ranks each
    /// selected key by compares against the others, k vector compares per
    /// key; larger k are sorted by RADIXSORT passes after it.
    pub const MAX_SORTED_K: u64 = 128;

    /// The kernel for keys of `key`.
    pub fn new(key: DType) -> Result<TopK, AlgoError> {
        if !Self::DTYPES.contains(&key) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "TopK",
                dtype: key,
                reason: "keys must be 8- or 16-bit integers, f16, bf16 or f32".into(),
            });
        }
        Ok(TopK { key })
    }

    /// Plans the selection of the `k` largest (or smallest) keys of each of
    /// `rows` rows of `n` (in order when `sorted`, k at most
    /// [`TopK::MAX_SORTED_K`]; else beyond the k-th in index order, then
    /// its ties in index order): whole rows per core when there are at least as
    /// many rows as vector cores; the rows past the last whole multiple of
    /// the core count (all rows when there are fewer) are each cut into up
    /// to `cores / those rows` pieces of at least 4096 keys, one per core,
    /// when that makes at least 3 pieces a row (48 rows on 40 cores: one
    /// whole row each, then 8 rows in 5 pieces). The workspace
    /// holds a 32-byte count slot per piece, the rows' chunk maxima (4 bytes
    /// per 64 keys at most) and room for every key as a candidate (fp32 order
    /// value, i32 index, the key's bits widened to at least 16: 10 bytes per
    /// key, 12 for f32).
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        n: u64,
        k: u64,
        largest: bool,
        sorted: bool,
    ) -> Result<LaunchPlan<TopKTiling>, AlgoError> {
        if rows == 0 || n == 0 {
            return Err(AlgoError::InvalidArgument {
                name: if rows == 0 { "rows" } else { "n" },
                reason: "an empty input needs no launch".into(),
            });
        }
        if k == 0 || k > n {
            return Err(AlgoError::InvalidArgument {
                name: "k",
                reason: format!("k = {k}: must be in 1..={n} (the row length)"),
            });
        }
        if sorted && k > Self::MAX_SORTED_K {
            return Err(AlgoError::InvalidArgument {
                name: "k",
                reason: format!(
                    "k = {k}: the kernel orders at most {} keys per row",
                    Self::MAX_SORTED_K
                ),
            });
        }
        if n > MAX_SORT_LEN {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: format!("{n} keys per row: at most {MAX_SORT_LEN} (indices are i32)"),
            });
        }
        let cores = u64::from(soc.vector_cores.max(1));
        // Every core takes `whole` rows; the `rest` rows left are cut into pieces.
        let (whole, rest) = (rows / cores, rows % cores);
        // A piece still costs a whole row's selection and two SyncAll rounds,
        // so halving the rows left after whole ones saves nothing (modeled:
        // TOPK f16 [96, 128256] 132.45 us in halves, 131.54 whole): they are
        // cut only into 3 or more pieces.
        let pieces = cores
            .checked_div(rest)
            .map_or(1, |p| p.min(n.div_ceil(MIN_PIECE)).clamp(1, MAX_PIECES));
        let pieces = if whole > 0 && pieces < 3 { 1 } else { pieces };
        let piece_len = n.div_ceil(pieces).div_ceil(BLOCK) * BLOCK;
        // Pieces past the row's end would be empty: drop them (3 or more
        // pieces of at least 4096 keys stay 3 or more).
        let pieces = n.div_ceil(piece_len);
        let (rows_per_core, shared_from, block_dim) = if pieces > 1 {
            // Every launched core joins the pieces' two SyncAll rounds.
            let dim = if whole == 0 { rest * pieces } else { cores };
            (whole, whole * cores, dim)
        } else {
            let per = rows.div_ceil(cores);
            (per, rows, rows.div_ceil(per))
        };
        let workspace_bytes = self.layout(rows, n, pieces).iter().sum();
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes,
            tiling: TopKTiling {
                rows,
                n,
                k,
                pieces,
                piece_len,
                rows_per_core,
                shared_from,
                largest: u32::from(largest),
                sorted: u32::from(sorted),
            },
        })
    }

    /// Bytes of the workspace's parts, in order (each a multiple of 512,
    /// as the kernel computes them): slots, block maxima, candidates' order
    /// values, indices and keys.
    fn layout(&self, rows: u64, n: u64, pieces: u64) -> [u64; 5] {
        let bits = self.key.size().max(2) as u64;
        let up = |b: u64| b.div_ceil(512) * 512;
        [
            up(rows * pieces * SLOT_BYTES),
            up(rows * n.div_ceil(64) * 4),
            up(rows * n * 4),
            up(rows * n * 4),
            up(rows * n * bits),
        ]
    }
}

impl Kernel for TopK {
    fn name(&self) -> String {
        format!("topk_{}", self.key.tag())
    }
    fn kernel_type(&self) -> KernelType {
        // SyncAll between the phases of a row shared by cores needs a mix kernel type.
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["keys", "values", "indices", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<TopKTiling>()
    }
    fn family(&self) -> String {
        "TopK".into()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "topk_kernel.h",
            &format!(
                "Top-k (docs/algorithms.md, Top-k): block maxima bound the k-th key, the keys at or \
                 above the bound are compacted and a radix select among them picks the k, {} keys.",
                self.key
            ),
            &format!("TopK<{}>", self.key.cpp()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_rows() {
        let soc = soc::Soc::Ascend910B4.profile();
        let cores = u64::from(soc.vector_cores);
        let t = TopK::new(DType::F16).unwrap();
        for (rows, n, k) in [
            (1, 1, 1),
            (1, 129280, 50),
            (3, 5000, 7),
            (96, 128256, 50),
            (41, 128256, 50),
            (79, 128256, 50),
            (80, 128256, 50),
            (4096, 256, 256),
            (1, 4097, 3),
        ] {
            let plan = t.plan(&soc, rows, n, k, true, false).unwrap();
            let tt = plan.tiling;
            assert_eq!(tt.piece_len % BLOCK, 0);
            assert!(tt.pieces * tt.piece_len >= n);
            assert!((tt.pieces - 1) * tt.piece_len < n, "no empty piece");
            assert!(tt.pieces <= MAX_PIECES);
            let dim = u64::from(plan.block_dim);
            assert!(dim <= cores);
            // Whole rows below shared_from, one piece per core after it.
            assert!(dim * tt.rows_per_core >= tt.shared_from);
            assert!(tt.shared_from <= rows);
            assert!(dim >= (rows - tt.shared_from) * tt.pieces);
            assert_eq!(tt.pieces > 1, tt.shared_from < rows);
        }
        // 48 rows on 40 cores: a whole row each, then 8 rows in 5 pieces;
        // 96 rows would leave 16 rows in halves: 3 whole rows on 32 cores.
        let shape = |rows| {
            let t = t.plan(&soc, rows, 128256, 50, true, true).unwrap().tiling;
            (t.rows_per_core, t.shared_from, t.pieces)
        };
        assert_eq!(shape(48), (1, 40, 5));
        assert_eq!(shape(96), (3, 96, 1));
        assert_eq!(
            t.plan(&soc, 1, 129280, 50, true, true)
                .unwrap()
                .tiling
                .pieces,
            32
        );
        assert!(t.plan(&soc, 1, 5, 0, true, false).is_err());
        assert!(t.plan(&soc, 1, 5, 6, true, false).is_err());
        assert!(t.plan(&soc, 0, 5, 1, true, false).is_err());
        assert!(t.plan(&soc, 1, 500, 129, true, true).is_err());
        assert!(TopK::new(DType::I32).is_err());
        let f32_bytes = TopK::new(DType::F32)
            .unwrap()
            .plan(&soc, 2, 1000, 5, true, true)
            .unwrap()
            .workspace_bytes;
        let f16_bytes = t
            .plan(&soc, 2, 1000, 5, true, true)
            .unwrap()
            .workspace_bytes;
        assert_eq!(
            f32_bytes - f16_bytes,
            4096,
            "f32 candidates carry 4-byte bits"
        );
    }
}
