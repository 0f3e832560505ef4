//! Segments given as CSR-style offsets, on the device (docs/algorithms.md,
//! section "Segments given as offsets"): the two vector kernels that let the
//! segmented operations take offsets on a stream, with no host round trip.
//!
//! - [`SegFlags`] checks the offsets (`offsets[0] = 0`, never decreasing,
//!   the last entry equal to the number of elements n) and writes the start
//!   flags of the n elements (1 where a segment starts).
//! - [`SegEnds`] writes every segment's sum from the inclusive segmented
//!   scan y: `sums[k] = y[offsets[k+1] - 1]`, 0 for an empty segment. The
//!   values are moved bit for bit (Gather and Select), so one kernel serves
//!   the f32 and the i32 accumulators.
//! - [`SegSpread`] writes every segment's sum from the dense sums of the
//!   non-empty segments (SEGSUM's output by SegFlags's flags): the j-th
//!   non-empty segment gets `dense[j]`, an empty one 0.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of [`SegFlags`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SegFlagsTiling {
    /// Elements (flags to write).
    pub n: u64,
    /// Entries of the offsets (segments + 1, at least 1).
    pub entries: u64,
    /// Elements per vector core (a multiple of [`SegFlags::FLAG_TILE`]).
    pub per_core: u64,
    /// Segments per vector core whose offsets pair the core checks (a
    /// multiple of [`SEGOFFSETS_ROWS`]).
    pub checks_per_core: u64,
}

/// Tiling of [`SegEnds`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SegEndsTiling {
    /// Segments (sums to write).
    pub segments: u64,
    /// Elements of the scan y.
    pub n: u64,
    /// Segments per vector core (a multiple of 8).
    pub per_core: u64,
}

/// Tiling of [`SegSpread`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SegSpreadTiling {
    /// Segments (sums to write).
    pub segments: u64,
    /// Entries of the dense sums (at least the non-empty segments).
    pub dense_len: u64,
    /// Segments per vector core (a multiple of 8).
    pub per_core: u64,
}

/// Segments per step of [`SegSpread`] (a power of two: its scan takes
/// log2 steps).
pub const SEGSPREAD_ROWS: u64 = 1024;

/// Entries of the offsets a vector core loads per step.
pub const SEGOFFSETS_CHUNK: u64 = 2048;
/// Segments per step: their entries (one more), padded to 64, fit a chunk.
pub const SEGOFFSETS_ROWS: u64 = SEGOFFSETS_CHUNK - 64;
/// Bytes of the UB window through which [`SegEnds`] gathers from y.
pub const SEGOFFSETS_WINDOW_BYTES: u64 = 64 * 1024;
/// Elements of y per segment above which [`SegEnds`] reads the ends of a
/// chunk one by one with the scalar unit instead of streaming y through
/// windows: a scalar GM read costs a data-cache miss (114-228 ns in the
/// cost model), streaming costs about 0.2 ns per 4-byte element per core
/// (1/40 of the 910B4's 800 GB/s), so the cross-over is near 300; below it
/// the windows win.
pub const SEGENDS_SPARSE: u64 = 256;

/// Offsets to start flags, with the offsets' check. Each vector core writes
/// the flags of its range of elements (zeros, then a 1 at every entry that
/// falls in the range, found by a binary search and written by the scalar
/// unit: work per segment, not per element) and checks the pairs of entries
/// of its range of segments. Every launched core writes its slot of
/// [`SegFlags::SLOT_WORDS`] int32 of `check` (so `check` needs no zeroing
/// before the launch):
/// - word 0: 1 + the index of the first entry below its predecessor (0 for
///   none), words 1 and 2: that entry and its predecessor;
/// - core 0 only: word 3 = 1 (the check ran), words 4 and 5: the first and
///   the last entry, words 6 and 7: n and the index of the last entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegFlags;

/// Segment sums from the inclusive segmented scan y (4-byte values, moved
/// bit for bit): `sums[k] = y[offsets[k+1] - 1]`, 0 for an empty segment
/// (offsets[k+1] = offsets[k]). Each vector core takes a range of segments in
/// chunks; per chunk it gathers y at the chunk's segment ends through UB
/// windows of y (the ends of a chunk span a contiguous stretch of y, read
/// once), or, past [`SEGENDS_SPARSE`] elements per segment, reads each end
/// with the scalar unit. The offsets must have passed [`SegFlags`]'s check (the same
/// stream, before): invalid offsets give unspecified sums, never an access
/// outside y.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegEnds;

/// Segment sums from the dense sums of the non-empty segments (f32, in
/// segment order: SEGSUM's output by the flags [`SegFlags`] makes):
/// `sums[k] = dense[j]` when segment k is the j-th non-empty one, 0 when it
/// is empty. A2 has no vector scatter, so each segment computes its j: each
/// vector core counts the non-empty segments of its range (phase 1, into a
/// 32-byte slot of the workspace), SyncAll, then per chunk of
/// [`SEGSPREAD_ROWS`] segments copies its window of `dense` as it is when
/// no segment of the chunk is empty, else ranks the chunk's segments by a
/// Hillis-Steele scan of their non-empty marks and gathers. The offsets must
/// have passed [`SegFlags`]'s check (the same stream, before): invalid
/// offsets give unspecified sums, never an access outside `dense` or `sums`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegSpread;

/// Equal ranges of `count` items in whole multiples of `grain` over the
/// vector cores: (per core, cores used); (grain, 0) for no item.
fn split(soc: &SocProfile, count: u64, grain: u64) -> (u64, u64) {
    let cores = u64::from(soc.vector_cores.max(1));
    let per_core = count.div_ceil(cores).div_ceil(grain).max(1) * grain;
    (per_core, count.div_ceil(per_core))
}

fn check_i32(name: &'static str, count: u64) -> Result<(), AlgoError> {
    if count > i32::MAX as u64 {
        return Err(AlgoError::InvalidArgument {
            name,
            reason: format!("{count}: offsets are i32"),
        });
    }
    Ok(())
}

impl SegFlags {
    /// Elements of the flag tile a core writes per step.
    pub const FLAG_TILE: u64 = 4096;
    /// int32 words of a core's check slot (32 bytes).
    pub const SLOT_WORDS: usize = 8;

    /// Plans `n` elements with `entries >= 1` offsets: one check slot per
    /// core used (the workspace; the caller zeroes it).
    pub fn plan(
        &self,
        soc: &SocProfile,
        n: u64,
        entries: u64,
    ) -> Result<LaunchPlan<SegFlagsTiling>, AlgoError> {
        if entries == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "entries",
                reason: "offsets need at least one entry".into(),
            });
        }
        check_i32("n", n)?;
        check_i32("entries", entries)?;
        let (per_core, flag_cores) = split(soc, n, Self::FLAG_TILE);
        let (checks_per_core, check_cores) = split(soc, entries - 1, SEGOFFSETS_ROWS);
        let block_dim = flag_cores.max(check_cores).max(1);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: block_dim * Self::SLOT_WORDS as u64 * 4,
            tiling: SegFlagsTiling {
                n,
                entries,
                per_core,
                checks_per_core,
            },
        })
    }
}

impl SegFlags {
    /// Plans the check of `entries >= 1` offsets for `n` elements without
    /// the flags (for the operations that read the offsets themselves): the
    /// same slots, no element range per core.
    pub fn plan_check(
        &self,
        soc: &SocProfile,
        n: u64,
        entries: u64,
    ) -> Result<LaunchPlan<SegFlagsTiling>, AlgoError> {
        let mut plan = self.plan(soc, n, entries)?;
        let (_, check_cores) = split(soc, entries - 1, SEGOFFSETS_ROWS);
        plan.block_dim = check_cores.max(1) as u32;
        plan.workspace_bytes = u64::from(plan.block_dim) * Self::SLOT_WORDS as u64 * 4;
        plan.tiling.per_core = 0;
        Ok(plan)
    }
}

impl SegEnds {
    /// Plans `segments >= 1` sums from `n >= 1` scanned elements.
    pub fn plan(
        &self,
        soc: &SocProfile,
        segments: u64,
        n: u64,
    ) -> Result<LaunchPlan<SegEndsTiling>, AlgoError> {
        if segments == 0 || n == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "segments",
                reason: "no segment or no element needs no launch".into(),
            });
        }
        check_i32("segments", segments)?;
        check_i32("n", n)?;
        // Whole 32-byte blocks of sums per core (not whole chunks: a sparse
        // segmentation has few segments, and each spans much of y).
        let (per_core, block_dim) = split(soc, segments, 8);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: 0,
            tiling: SegEndsTiling {
                segments,
                n,
                per_core,
            },
        })
    }
}

impl SegSpread {
    /// Plans `segments >= 1` sums from `dense_len >= 1` dense sums: one
    /// 32-byte slot per core used (the workspace).
    pub fn plan(
        &self,
        soc: &SocProfile,
        segments: u64,
        dense_len: u64,
    ) -> Result<LaunchPlan<SegSpreadTiling>, AlgoError> {
        if segments == 0 || dense_len == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "segments",
                reason: "no segment or no element needs no launch".into(),
            });
        }
        check_i32("segments", segments)?;
        let (per_core, block_dim) = split(soc, segments, 8);
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: block_dim * 32,
            tiling: SegSpreadTiling {
                segments,
                dense_len,
                per_core,
            },
        })
    }
}

impl Kernel for SegFlags {
    fn name(&self) -> String {
        "segflags".into()
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["offsets", "flags", "check"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SegFlagsTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let (chunk, tile) = (SEGOFFSETS_CHUNK, Self::FLAG_TILE);
        render_entry(
            self,
            "segoffsets_kernel.h",
            &format!(
                "Segments given as offsets (docs/algorithms.md): their check and start flags, \
                 chunks of {chunk} entries, flag tiles of {tile}."
            ),
            &format!("SegFlags<{chunk}, {tile}>"),
        )
    }
}

impl Kernel for SegEnds {
    fn name(&self) -> String {
        "segends".into()
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::AivOnly
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["offsets", "y", "sums"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SegEndsTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let chunk = SEGOFFSETS_CHUNK;
        let window = SEGOFFSETS_WINDOW_BYTES / 4;
        render_entry(
            self,
            "segoffsets_kernel.h",
            &format!(
                "Segments given as offsets (docs/algorithms.md): the segments' sums from the \
                 inclusive segmented scan, chunks of {chunk} entries, windows of {window}."
            ),
            &format!("SegEnds<{chunk}, {window}, {SEGENDS_SPARSE}>"),
        )
    }
}

impl Kernel for SegSpread {
    fn name(&self) -> String {
        "segspread".into()
    }
    fn kernel_type(&self) -> KernelType {
        // SyncAll between the count and the spread.
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["offsets", "dense", "sums", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SegSpreadTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "segoffsets_kernel.h",
            &format!(
                "Segments given as offsets (docs/algorithms.md): the segments' sums from the dense \
                 sums of the non-empty ones, chunks of {SEGSPREAD_ROWS} segments."
            ),
            &format!("SegSpread<{SEGSPREAD_ROWS}>"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_elements_and_segments() {
        let soc = soc::Soc::Ascend910B4.profile();
        for (n, entries) in [
            (0, 1),
            (1, 2),
            (5, 1),
            (8193, 3),
            (1 << 24, 1 << 24),
            (100, 40_000),
        ] {
            let p = SegFlags.plan(&soc, n, entries).unwrap();
            let t = p.tiling;
            assert_eq!(t.per_core % SegFlags::FLAG_TILE, 0);
            assert_eq!(t.checks_per_core % SEGOFFSETS_ROWS, 0);
            let cores = u64::from(p.block_dim);
            assert!(cores * t.per_core >= n && cores * t.checks_per_core >= entries - 1);
            assert!(p.block_dim >= 1 && p.block_dim <= soc.vector_cores);
            assert_eq!(p.workspace_bytes, cores * 32);
        }
        assert!(SegFlags.plan(&soc, 1, 0).is_err());
        let p = SegFlags.plan_check(&soc, 1 << 24, 3).unwrap();
        assert_eq!(
            (p.block_dim, p.tiling.per_core, p.tiling.n),
            (1, 0, 1 << 24)
        );
        let p = SegFlags.plan_check(&soc, 10, 1 << 20).unwrap();
        assert!(u64::from(p.block_dim) * p.tiling.checks_per_core >= (1 << 20) - 1);
        assert!(SegFlags.plan(&soc, 1 << 31, 2).is_err());
        for segments in [1, 4032, 4033, 1 << 22] {
            let p = SegEnds.plan(&soc, segments, 7).unwrap();
            let t = p.tiling;
            assert_eq!(t.per_core % 8, 0);
            assert!(u64::from(p.block_dim) * t.per_core >= segments);
            assert!(u64::from(p.block_dim - 1) * t.per_core < segments);
        }
        assert!(SegEnds.plan(&soc, 0, 7).is_err());
        for segments in [1, 8, 9, 1025, 1 << 24] {
            let p = SegSpread.plan(&soc, segments, 5).unwrap();
            let t = p.tiling;
            assert_eq!(t.per_core % 8, 0);
            let cores = u64::from(p.block_dim);
            assert!(cores * t.per_core >= segments && (cores - 1) * t.per_core < segments);
            assert!(p.block_dim <= soc.vector_cores && p.workspace_bytes == cores * 32);
        }
        assert!(SegSpread.plan(&soc, 0, 7).is_err());
        assert!(SegSpread.plan(&soc, 3, 0).is_err());
        assert!(SegEnds.plan(&soc, 3, 0).is_err());
    }
}
