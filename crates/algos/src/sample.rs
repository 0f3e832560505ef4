//! WEIGHTED SAMPLING (multinomial with replacement, docs/algorithms.md,
//! section "Weighted sampling (multinomial)") on the vector cores, by
//! descending one fixed fp32 pair-sum tree.
//!
//! The tree of a row: the weights (as f32, zero-padded to a power of two)
//! are the leaves; every inner node is the fp32 sum of its two children
//! (`PairReduceSum`, one rounding per node). The kernel keeps every sixth
//! height of it as a *level* in the workspace: level `l + 1` holds the sums
//! of the aligned blocks of [`SAMPLE_BLOCK`] = 64 entries of level `l`
//! (level 0 is the weights). Phase 1 builds the pair tree of every tile of
//! [`SAMPLE_TILE`] = 4096 weights and writes its height-6 nodes (level 1)
//! and its root (level 2); phase 2 (rows past `SAMPLE_TILE^2` weights) does
//! the same over chunks of 4096 tile sums (levels 3 and 4).
//!
//! A draw starts at the top level (the lowest of levels 2 to 4 with at most
//! `SAMPLE_TILE` entries per row; its tree is built once per row and core) and descends it
//! to an entry; then, level by level, it loads the 64-entry block under that
//! entry (at most 256 bytes), rebuilds the block's six-level pair tree (its
//! root equals the entry above bit for bit: the same additions in the same
//! order) and descends it. A row of n > 4096 weights takes
//! `max(2, ceil(log64(n / 4096)))` block reads per draw (3 for 2^24 < n <=
//! 2^30),
//! and draws go 64 at a time (one DMA per block,
//! one sync per level, the 64 block trees built by the same vector
//! instructions), so many draws per row cost a few hundred bytes each,
//! never a tile re-sum.
//!
//! Rows of at most `SAMPLE_TILE` weights (top level 0) need neither phase
//! nor SyncAll: the draw phase loads many such rows at a time and sums and
//! checks each itself.
//!
//! The descent, with `v = fl(u * T)` (`T` the root) and a running prefix
//! `P = 0`: at a node with children sums `L` and `R`, go left if `R == 0` or
//! (`L > 0` and `v < fl(P + L)`); otherwise go right and set `P = fl(P + L)`.
//! Why this is robust where a searched float scan is not:
//! - it never reads a scan, so no prefix can "decrease": every comparison is
//!   against `fl(P + L)` along the one path, and the result is a fixed
//!   function of (weights, u) that a CPU reference reproduces bit for bit;
//! - it never ends on a zero weight: a node whose sum is > 0 has a child
//!   whose sum is > 0 (a float sum of non-negative terms is 0 only if all
//!   are 0); the rule goes left only when `R == 0` (so `L > 0`) or `L > 0`,
//!   and right only when `R > 0`, so by induction from the root (`T > 0`,
//!   checked) the leaf reached has a positive weight, for every `v`
//!   (also `v >= T`, NaN or negative: the rightmost or leftmost positive one);
//! - zero padding changes nothing: a padded subtree sums to exactly 0, so
//!   the rule steps over it, and cutting the tree into levels, tiles and
//!   blocks keeps it the same tree.
//!
//! Accuracy: leaf i is reached for u * T in [P_i, P_i + w_i) (exact prefix
//! sums) up to the roundings on its path: the ends move by at most
//! (3 * depth + 3) * 2^-24 * T to first order (depth = log2 of the padded
//! row; see src/ops/sample.rs), plus the 2^-24 step of a 24-bit uniform.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Leaves per chunk of a level (a power of two; 4096 f32 leaves plus their
/// pair tree take 33 KiB of UB).
pub const SAMPLE_TILE: u64 = 4096;
/// Entries per block of a level: a draw reads one block per level below the
/// top (a power of two dividing [`SAMPLE_TILE`]; 64 = 6 tree levels).
pub const SAMPLE_BLOCK: u64 = 64;
/// Most categories per row: indices are i32.
pub const MAX_SAMPLE_CATEGORIES: u64 = i32::MAX as u64;
/// Most draws of one launch (rows * draws per row): the output indices are
/// addressed as one array.
pub const MAX_SAMPLE_DRAWS: u64 = i32::MAX as u64;

/// Tiling of the SAMPLE kernels.
///
/// The levels of a row: level 0 is the weights; an entry of level `l + 1`
/// is the sum of an aligned block of [`SAMPLE_BLOCK`] entries of level `l`
/// (the tree's nodes at height `6 (l + 1)`). Levels 1 to 4 live in the
/// workspace, row-major, each 32-byte aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SampleTiling {
    /// Rows (independent distributions).
    pub rows: u64,
    /// Categories per row (weights per row, >= 1).
    pub n: u64,
    /// Draws per row (>= 1).
    pub draws: u64,
    /// Level-1 entries per row: sums of blocks of `SAMPLE_BLOCK` weights.
    pub blocks: u64,
    /// Level-2 entries per row: sums of tiles of `SAMPLE_TILE` weights.
    pub tiles: u64,
    /// Level-3 entries per row: sums of blocks of `SAMPLE_BLOCK` tile sums.
    pub tile_blocks: u64,
    /// Level-4 entries per row: sums of chunks of `SAMPLE_TILE` tile sums.
    pub chunks: u64,
    /// Phase 1: tiles (of all rows, row-major) per vector core.
    pub tiles_per_core: u64,
    /// Phase 2: chunks per vector core (0 when the top level is below 3).
    pub chunks_per_core: u64,
    /// Phase 3: draws (of all rows, row-major) per vector core.
    pub draws_per_core: u64,
    /// Byte offsets in the workspace of levels 2, 3 and 4 (level 1 at 0).
    pub tiles_offset: u64,
    /// See `tiles_offset`.
    pub tile_blocks_offset: u64,
    /// See `tiles_offset`.
    pub chunks_offset: u64,
    /// Byte offset in the workspace of the row totals (one f32 per row,
    /// NaN when a row holds a negative weight).
    pub totals_offset: u64,
    /// The level a draw starts from: 0 when n <= `SAMPLE_TILE` (no phases
    /// 1 and 2), else the lowest of levels 2 to 4 with at most `SAMPLE_TILE`
    /// entries per row.
    pub top_level: u32,
    /// Padding (0).
    pub reserved: u32,
}

/// A SAMPLE kernel instance for one weight type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    dtype: DType,
}

impl Sample {
    /// Weight types: f16, bf16 and f32 (all summed in f32).
    pub const DTYPES: [DType; 3] = [DType::F16, DType::Bf16, DType::F32];

    /// A SAMPLE instance for weights of `dtype`.
    pub fn new(dtype: DType) -> Result<Sample, AlgoError> {
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "Sample",
                dtype,
                reason: "weights must be f16, bf16 or f32".into(),
            });
        }
        Ok(Sample { dtype })
    }

    /// Plans `draws` draws from each of `rows` rows of `n` weights: phase 1
    /// spreads the tiles of all rows evenly over the vector cores (several
    /// rows per core when rows are short, several cores per row when they
    /// are long) and writes levels 1 and 2, phase 2 likewise the chunks of
    /// tile sums (levels 3 and 4, rows past `SAMPLE_TILE^2` weights only),
    /// phase 3 the draws. The workspace holds levels 1 to 4 and the row
    /// totals, each 32-byte aligned: about `n / 16` bytes per row.
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        n: u64,
        draws: u64,
    ) -> Result<LaunchPlan<SampleTiling>, AlgoError> {
        for (name, value) in [("rows", rows), ("n", n), ("draws", draws)] {
            if value == 0 {
                return Err(AlgoError::InvalidArgument {
                    name,
                    reason: "must be at least 1 (nothing to launch)".into(),
                });
            }
        }
        if n > MAX_SAMPLE_CATEGORIES {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: format!(
                    "{n} categories: at most {MAX_SAMPLE_CATEGORIES} (indices are i32)"
                ),
            });
        }
        let total_draws = rows.checked_mul(draws).filter(|&d| d <= MAX_SAMPLE_DRAWS);
        let Some(total_draws) = total_draws else {
            return Err(AlgoError::InvalidArgument {
                name: "draws",
                reason: format!("{rows} rows x {draws} draws: at most {MAX_SAMPLE_DRAWS} in all"),
            });
        };
        let cores = u64::from(soc.vector_cores.max(1));
        let tiles = n.div_ceil(SAMPLE_TILE);
        let lens = [
            n,
            n.div_ceil(SAMPLE_BLOCK),
            tiles,
            tiles.div_ceil(SAMPLE_BLOCK),
            tiles.div_ceil(SAMPLE_TILE),
        ];
        // Level 1 is never the top: the top's entries carry the negative
        // weight check (NaN), which phase 1 puts in the tile sums (level 2).
        let top_level = if n <= SAMPLE_TILE {
            0
        } else {
            (2..5)
                .find(|&l| lens[l] <= SAMPLE_TILE)
                .expect("level 4 holds at most 2^31 / 2^24 entries") as u32
        };
        let all_tiles = if top_level == 0 { 0 } else { rows * tiles };
        let all_chunks = if top_level < 3 { 0 } else { rows * lens[4] };
        let tiles_per_core = all_tiles.div_ceil(cores);
        let chunks_per_core = all_chunks.div_ceil(cores);
        let draws_per_core = total_draws.div_ceil(cores);
        // Every phase's items spread over the same cores (a core may have
        // nothing to do in a phase; all take part in the SyncAlls).
        let block_dim = all_tiles
            .div_ceil(tiles_per_core.max(1))
            .max(total_draws.div_ceil(draws_per_core));
        let mut offsets = [0u64; 5];
        let mut at = 0;
        for level in 1..5 {
            offsets[level] = at;
            at += align32(rows * lens[level] * 4);
        }
        // The row totals go out with aclrtMemcpyAsync: a 64-byte boundary.
        let at = at.next_multiple_of(64);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: at + align32(rows * 4),
            tiling: SampleTiling {
                rows,
                n,
                draws,
                blocks: lens[1],
                tiles,
                tile_blocks: lens[3],
                chunks: lens[4],
                tiles_per_core,
                chunks_per_core,
                draws_per_core,
                tiles_offset: offsets[2],
                tile_blocks_offset: offsets[3],
                chunks_offset: offsets[4],
                totals_offset: at,
                top_level,
                reserved: 0,
            },
        })
    }
}

fn align32(bytes: u64) -> u64 {
    bytes.div_ceil(32) * 32
}

impl Kernel for Sample {
    fn name(&self) -> String {
        format!("sample_{}", self.dtype.tag())
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["weights", "uniforms", "indices", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SampleTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "sample_kernel.h",
            &format!(
                "Sampling (docs/algorithms.md, Sampling): {} weights, chunks of {SAMPLE_TILE}.",
                self.dtype
            ),
            &format!("Sample<{}, {SAMPLE_TILE}>", self.dtype.cpp()),
        )
    }
}

/// Tiling of [`Uniforms`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct UniformsTiling {
    /// Uniforms to write (rows x draws, row-major).
    pub count: u64,
    /// Draws per row.
    pub draws: u64,
    /// The generator's seed.
    pub seed: u64,
    /// Uniforms per vector core (a multiple of 8).
    pub per_core: u64,
}

/// The counter-based uniforms of the seeded draws, on the device: `u[r *
/// draws + j] = uniform(seed, r, j)` (SplitMix64's mixer twice, the top 24
/// bits times 2^-24; the host's `ascend_scan::uniform` bit for bit), so a
/// stream-ordered draw needs no upload. Each vector core computes its range
/// on the scalar unit (64-bit integer arithmetic) into UB tiles of
/// [`UNIFORMS_TILE`] and writes them: scalar work per uniform, meant for
/// the few draws of a sampling step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Uniforms;

/// Uniforms per UB tile of [`Uniforms`].
pub const UNIFORMS_TILE: u64 = 1024;

impl Uniforms {
    /// Plans `rows x draws` uniforms under `seed` (at least one).
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        draws: u64,
        seed: u64,
    ) -> Result<LaunchPlan<UniformsTiling>, AlgoError> {
        let count = rows.checked_mul(draws).filter(|&c| c > 0).ok_or_else(|| {
            AlgoError::InvalidArgument {
                name: "draws",
                reason: format!("{rows} rows x {draws} draws: at least one, within u64"),
            }
        })?;
        let cores = u64::from(soc.vector_cores.max(1));
        let per_core = count.div_ceil(cores).div_ceil(8) * 8;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: count.div_ceil(per_core) as u32,
            workspace_bytes: 0,
            tiling: UniformsTiling {
                count,
                draws,
                seed,
                per_core,
            },
        })
    }
}

impl Kernel for Uniforms {
    fn name(&self) -> String {
        "seeded_uniforms".into()
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["u"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<UniformsTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "sample_kernel.h",
            &format!(
                "Sampling (docs/algorithms.md, Sampling): the seeded draws' uniforms, tiles of {UNIFORMS_TILE}."
            ),
            &format!("Uniforms<{UNIFORMS_TILE}>"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniforms_cover_every_draw() {
        let soc = soc::Soc::Ascend910B4.profile();
        for (rows, draws) in [(1u64, 1u64), (96, 1), (7, 1000), (1, 1 << 24)] {
            let p = Uniforms.plan(&soc, rows, draws, 5).unwrap();
            let t = p.tiling;
            assert_eq!((t.count, t.draws, t.seed), (rows * draws, draws, 5));
            assert_eq!(t.per_core % 8, 0);
            assert!(u64::from(p.block_dim) * t.per_core >= t.count);
            assert!(u64::from(p.block_dim - 1) * t.per_core < t.count);
            assert!(p.block_dim <= soc.vector_cores);
        }
        assert!(Uniforms.plan(&soc, 0, 1, 0).is_err());
        assert!(Uniforms.plan(&soc, u64::MAX, 2, 0).is_err());
    }

    #[test]
    fn levels_and_ranges_cover_the_work() {
        let soc = soc::Soc::Ascend910B4.profile();
        let k = Sample::new(DType::F16).unwrap();
        for (rows, n, draws, top) in [
            (1u64, 1u64, 1u64, 0u32),
            (1, 4096, 7, 0),
            (1, 4097, 1, 2),
            (1, 1 << 18, 1, 2),
            (96, 128_256, 1, 2),
            (1, 1 << 24, 3, 2),
            (1, (1 << 24) + 1, 3, 3),
            (1, 1 << 30, 1, 3),
            (1, (1 << 30) + 1, 1, 4),
            (1, MAX_SAMPLE_CATEGORIES, 1, 4),
            (5000, 10, 2, 0),
        ] {
            let p = k.plan(&soc, rows, n, draws).unwrap();
            let t = p.tiling;
            assert_eq!(t.top_level, top, "rows={rows} n={n}");
            assert!(p.block_dim >= 1 && p.block_dim <= soc.vector_cores);
            let cores = u64::from(p.block_dim);
            if top > 0 {
                assert!(t.tiles_per_core * cores >= rows * t.tiles);
            }
            if top > 2 {
                assert!(t.chunks_per_core * cores >= rows * t.chunks);
            }
            assert!(t.draws_per_core * cores >= rows * draws);
            let lens = [n, t.blocks, t.tiles, t.tile_blocks, t.chunks];
            // Each level sums blocks of the one below.
            assert!(lens.windows(2).all(|w| w[1] == w[0].div_ceil(SAMPLE_BLOCK)));
            // The top level fits one chunk; the one below does not (or is
            // level 1).
            assert!(lens[top as usize] <= SAMPLE_TILE);
            assert!(top == 0 || top == 2 || lens[top as usize - 1] > SAMPLE_TILE);
            let offsets = [
                t.tiles_offset,
                t.tile_blocks_offset,
                t.chunks_offset,
                t.totals_offset,
            ];
            assert!(offsets.iter().all(|o| o % 32 == 0));
            assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
            assert!(t.blocks * rows * 4 <= t.tiles_offset);
            assert!(t.totals_offset + rows * 4 <= p.workspace_bytes);
        }
        assert!(k.plan(&soc, 0, 5, 1).is_err());
        assert!(k.plan(&soc, 1, 0, 1).is_err());
        assert!(k.plan(&soc, 1, 5, 0).is_err());
        assert!(k.plan(&soc, 1, MAX_SAMPLE_CATEGORIES + 1, 1).is_err());
        assert!(k.plan(&soc, 1 << 20, 5, 1 << 12).is_err());
        assert!(Sample::new(DType::I8).is_err());
        assert_eq!(Sample::new(DType::Bf16).unwrap().name(), "sample_bf16");
    }
}
