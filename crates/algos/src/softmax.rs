//! SOFTMAX of rows divided by a temperature, on the vector cores
//! (docs/algorithms.md, section "Softmax (SOFTMAX)").
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of the SOFTMAX kernels.
#[derive(Debug, Clone, Copy, PartialEq, Tiling)]
#[repr(C)]
pub struct SoftmaxTiling {
    /// Rows.
    pub rows: u64,
    /// Entries per row.
    pub n: u64,
    /// Pieces each row is cut into (1 when there are rows enough for the
    /// cores).
    pub pieces: u64,
    /// Entries per piece (a multiple of 64; the last piece of a row takes
    /// the rest).
    pub piece_len: u64,
    /// Pieces per vector core (pieces are numbered row by row).
    pub per_core: u64,
    /// Entries per row of the keep's values and indices (with `keep`).
    pub keep_width: u64,
    /// 1: row r is divided by `temperatures[r]`; 0: every row is multiplied
    /// by `scale`.
    pub per_row: u32,
    /// The f32 reciprocal of the temperature of every row (without
    /// `per_row`).
    pub scale: f32,
    /// 1: row r keeps only its `keep_k[r]` largest logits (0: all), the
    /// last of them at `keep_values[r * keep_width + keep_k[r] - 1]`; 0:
    /// every entry counts.
    pub keep: u32,
    /// 1: that last kept entry's position in the row is in `keep_indices`
    /// (at the same place); 0: it is `keep_k[r] - 1` (rows already in the
    /// top-k order).
    pub keep_by_index: u32,
    /// With `keep`: every row keeps this many (`keep_k` unused); 0: row r
    /// keeps `keep_k[r]`.
    pub keep_count: u32,
    /// Unused (keeps the size a multiple of 8).
    pub reserved: u32,
}

/// What the rows of a SOFTMAX keep (sampling's top-k; docs/algorithms.md,
/// "Softmax (SOFTMAX)"): each row's count and the values (and positions)
/// of its largest logits in the top-k order, `width` per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftmaxKeep {
    /// Entries per row of the values (and positions).
    pub width: u64,
    /// Whether the positions come from an index array (else the row is
    /// itself in the top-k order).
    pub by_index: bool,
    /// Every row keeps this many (1..=width); `None`: each row's count
    /// comes from the launch's `keep_k`.
    pub count: Option<u32>,
}

/// A SOFTMAX kernel instance for one logit type (the probabilities are f32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Softmax {
    dtype: DType,
}

/// Elements per vector chunk.
pub const SOFTMAX_CHUNK: u64 = 4096;
/// At most this many pieces per row (their partial maxima and sums are
/// combined by the scalar unit).
const MAX_PIECES: u64 = 64;
/// The cost of a piece beyond its chunks, in chunks (its scalar set-up and
/// the combination of its partials), used to choose the piece count.
const PIECE_COST_CHUNKS: u64 = 1;

impl Softmax {
    /// Logit types: f16, bf16 and f32.
    pub const DTYPES: [DType; 3] = [DType::F16, DType::Bf16, DType::F32];

    /// A SOFTMAX instance for `dtype`.
    pub fn new(dtype: DType) -> Result<Softmax, AlgoError> {
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "Softmax",
                dtype,
                reason: "logits are f16, bf16 or f32".into(),
            });
        }
        Ok(Softmax { dtype })
    }

    /// Plans `rows` rows of `n` logits, every row multiplied by `scale`
    /// (`None`: each row divided by its own temperature, given to the
    /// launch), keeping every entry or what `keep` says. Each row is cut into the number of pieces (1..=64) that
    /// spreads the pieces most evenly over the vector cores; the workspace
    /// holds one 32-byte slot per piece (its maximum and sum).
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        n: u64,
        scale: Option<f32>,
        keep: Option<SoftmaxKeep>,
    ) -> Result<LaunchPlan<SoftmaxTiling>, AlgoError> {
        if rows == 0 || n == 0 {
            return Err(AlgoError::InvalidArgument {
                name: if rows == 0 { "rows" } else { "n" },
                reason: "an empty input needs no launch".into(),
            });
        }
        if let Some(c) = keep.and_then(|k| k.count) {
            if c == 0 || u64::from(c) > keep.map_or(0, |k| k.width) {
                return Err(AlgoError::InvalidArgument {
                    name: "keep",
                    reason: format!("every row keeps {c}: must be in 1..= the keep's width"),
                });
            }
        }
        let cores = u64::from(soc.vector_cores.max(1));
        let chunks = n.div_ceil(SOFTMAX_CHUNK);
        // The most loaded core's chunks (plus the pieces' own cost) for each
        // piece count; the fewest pieces among the best.
        let cost = |pieces: u64| {
            let len = n.div_ceil(pieces).div_ceil(64) * 64;
            let pieces = n.div_ceil(len);
            let per_core = (rows * pieces).div_ceil(cores);
            per_core * (len.div_ceil(SOFTMAX_CHUNK) + PIECE_COST_CHUNKS)
        };
        let best = (1..=MAX_PIECES.min(chunks))
            .min_by_key(|&p| (cost(p), p))
            .unwrap_or(1);
        let piece_len = n.div_ceil(best).div_ceil(64) * 64;
        let pieces = n.div_ceil(piece_len);
        let total = rows * pieces;
        let per_core = total.div_ceil(cores);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: total.div_ceil(per_core) as u32,
            workspace_bytes: total * 32,
            tiling: SoftmaxTiling {
                rows,
                n,
                pieces,
                piece_len,
                per_core,
                keep_width: keep.map_or(0, |k| k.width),
                per_row: u32::from(scale.is_none()),
                scale: scale.unwrap_or(1.0),
                keep: u32::from(keep.is_some()),
                keep_by_index: u32::from(keep.is_some_and(|k| k.by_index)),
                keep_count: keep.and_then(|k| k.count).unwrap_or(0),
                reserved: 0,
            },
        })
    }
}

impl Kernel for Softmax {
    fn name(&self) -> String {
        format!("softmax_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &[
            "logits",
            "temperatures",
            "keep_k",
            "keep_values",
            "keep_indices",
            "probs",
            "workspace",
        ]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SoftmaxTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "softmax_kernel.h",
            &format!(
                "Softmax (docs/algorithms.md, Softmax): {} logits to f32 probabilities, chunks of \
                 {SOFTMAX_CHUNK}.",
                self.dtype
            ),
            &format!("Softmax<{}, {SOFTMAX_CHUNK}>", self.dtype.cpp()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_every_row_and_spread_over_the_cores() {
        let soc = soc::Soc::Ascend910B4.profile();
        let cores = u64::from(soc.vector_cores);
        for (rows, n) in [
            (1, 1),
            (1, 129280),
            (3, 5000),
            (96, 129280),
            (256, 32000),
            (4096, 7),
        ] {
            let p = Softmax::new(DType::F32)
                .unwrap()
                .plan(&soc, rows, n, Some(0.5), None)
                .unwrap();
            let t = p.tiling;
            assert_eq!(t.piece_len % 64, 0);
            assert!(t.pieces * t.piece_len >= n && (t.pieces - 1) * t.piece_len < n);
            assert!(t.pieces <= MAX_PIECES);
            let total = rows * t.pieces;
            assert!(u64::from(p.block_dim) * t.per_core >= total);
            assert!(u64::from(p.block_dim - 1) * t.per_core < total);
            assert!(u64::from(p.block_dim) <= cores);
            assert_eq!(p.workspace_bytes, total * 32);
            assert_eq!((t.per_row, t.scale), (0, 0.5));
            assert_eq!((t.keep, t.keep_by_index, t.keep_width), (0, 0, 0));
        }
        // One long row runs on every core.
        let one = Softmax::new(DType::F16)
            .unwrap()
            .plan(&soc, 1, 129280, None, None)
            .unwrap();
        assert!(u64::from(one.block_dim) >= cores / 2, "{one:?}");
        assert_eq!(one.tiling.per_row, 1);
        assert!(Softmax::new(DType::I8).is_err());
        assert!(Softmax::new(DType::F16)
            .unwrap()
            .plan(&soc, 0, 5, None, None)
            .is_err());
    }
}
