//! SPLIT / SPLITIND and COMPRESS (docs/algorithms.md, section "Split and
//! Compress (SPLIT, SPLITIND, COMPRESS)") on the vector cores, with the scan
//! of the flags fused in (reduce-then-scan over the cores, like OPSCAN's
//! multi-core structure).
//!
//! Phase 1: every vector core counts the non-zero flags of its range (and
//! records a negative flag, else 0, and the largest flag: a flag outside
//! 0/1 shows at one end) into a 32-byte GM slot. SyncAll.
//! Phase 2: every core sums the counts of the earlier cores (its exclusive
//! scan of the flags at its first element) and, tile by tile, compacts the
//! flag-1 elements (and for SPLIT the flag-0 elements) with counter-mode
//! GatherMask and writes them at their scanned offsets with DataCopyPad
//! (byte-exact). Flag-1 element i lands at `scan(f)[i]`, flag-0 element i at
//! `ones + i - scan(f)[i]`.
//!
//! Values move as bit patterns: all 16-bit types share one kernel, all
//! 32-bit types another.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of the SPLIT and COMPRESS kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SplitTiling {
    /// Elements (values and flags).
    pub n: u64,
    /// Elements per wave (COMPRESS: the flags of a wave are still in L2
    /// when phase 2 re-reads them; SPLIT: one wave of `n`, its flag-0
    /// elements need the total count of ones).
    pub wave_len: u64,
    /// Elements per vector core in a wave, a multiple of the tile (the last
    /// core takes the rest).
    pub per_core: u64,
    /// Byte offset in the workspace of the flag-bit cache.
    pub bits_offset: u64,
    /// 1 to write the original indices.
    pub want_indices: u32,
    /// 1 (SPLIT whose traffic exceeds the L2): phase 1 writes the flags as
    /// bits (one bit per element, 512 bytes per tile) at `bits_offset`, and
    /// phase 2 reads them instead of the flags.
    pub bit_cache: u32,
}

/// Which operation a kernel performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SplitKind {
    /// COMPRESS (masked select): only the flag-1 elements.
    Compress,
    /// SPLITIND (stable partition): flag-1 elements, then flag-0 elements.
    Split,
}

impl SplitKind {
    /// Both kinds.
    pub const ALL: [SplitKind; 2] = [SplitKind::Compress, SplitKind::Split];

    /// Lower-case name (kernel names).
    pub fn tag(self) -> &'static str {
        match self {
            SplitKind::Compress => "compress",
            SplitKind::Split => "split",
        }
    }
}

/// A SPLIT or COMPRESS kernel instance for one value width (16 or 32 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitInd {
    kind: SplitKind,
    bits: u32,
}

/// COMPRESS is SPLITIND without the flag-0 half: the same kernel family.
pub type Compress = SplitInd;

/// Elements per tile (a multiple of 128: CompareScalar on half takes whole
/// 256-byte repeats).
pub const SPLIT_TILE: u64 = 4096;
/// Longest input: indices are i32.
pub const MAX_SPLIT_LEN: u64 = i32::MAX as u64;

/// Bytes of one core's slot (per wave) in the workspace: i32 count of
/// non-zero flags, i32 smallest flag, i32 largest flag, padding.
pub const SPLIT_SLOT_BYTES: u64 = 32;
/// Share of the L2 (in tenths) a COMPRESS wave may fill.
const WAVE_L2_TENTHS: u64 = 9;

impl SplitInd {
    /// Value types: every 16- and 32-bit type (moved as bit patterns).
    pub const DTYPES: [DType; 6] = [
        DType::F16,
        DType::Bf16,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::F32,
    ];
    /// Value widths with a kernel.
    pub const WIDTHS: [u32; 2] = [16, 32];

    /// The kernel of `kind` for values of `dtype`.
    pub fn new(kind: SplitKind, dtype: DType) -> Result<SplitInd, AlgoError> {
        let bits = match dtype.size() {
            2 => 16,
            4 => 32,
            _ => {
                return Err(AlgoError::UnsupportedDtype {
                    algorithm: "SplitInd",
                    dtype,
                    reason: "values must be 16- or 32-bit (f16, bf16, i16, u16, i32, f32)".into(),
                })
            }
        };
        Ok(SplitInd { kind, bits })
    }

    /// The kind of this kernel.
    pub fn kind(&self) -> SplitKind {
        self.kind
    }

    /// Plans the operation on `n >= 1` elements: equal ranges of whole tiles
    /// over the vector cores. COMPRESS runs in equal waves whose traffic
    /// fits in 90% of the L2, so that phase 2 finds the wave's flags in L2; SPLIT
    /// runs one wave (its flag-0 elements need the total of all flags). The
    /// workspace holds one 32-byte slot per core and wave
    /// ([`SPLIT_SLOT_BYTES`]; the host reads the count and the flag range
    /// from them after the launch), then, for a SPLIT past the L2, the
    /// flag-bit cache at `bits_offset`.
    pub fn plan(
        &self,
        soc: &SocProfile,
        n: u64,
        want_indices: bool,
    ) -> Result<LaunchPlan<SplitTiling>, AlgoError> {
        if n == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: "an empty input needs no launch".into(),
            });
        }
        if n > MAX_SPLIT_LEN {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: format!("{n} elements: at most {MAX_SPLIT_LEN} (indices are i32)"),
            });
        }
        let cores = u64::from(soc.vector_cores.max(1));
        let round = cores * SPLIT_TILE;
        // A wave's traffic at most: its flags, values read and (all) kept,
        // indices. Phase 1 leaves the wave's flags the newest lines of the
        // L2 (LRU), so they survive phase 2 while the wave fits in it.
        let max_wave = (soc.l2_bytes * WAVE_L2_TENTHS / 10 / self.wave_bytes(want_indices) / round)
            .max(1)
            * round;
        let wave_len = if self.kind == SplitKind::Compress && n > max_wave {
            // Equal waves of whole core ranges.
            n.div_ceil(n.div_ceil(max_wave)).div_ceil(round) * round
        } else {
            n
        };
        let per_core = wave_len.div_ceil(cores).div_ceil(SPLIT_TILE) * SPLIT_TILE;
        let block_dim = wave_len.div_ceil(per_core);
        let waves = n.div_ceil(wave_len);
        let bits_offset = (waves * block_dim * SPLIT_SLOT_BYTES).div_ceil(512) * 512;
        let bit_cache = self.kind == SplitKind::Split && n > max_wave;
        let bits_bytes = if bit_cache {
            n.div_ceil(SPLIT_TILE) * (SPLIT_TILE / 8)
        } else {
            0
        };
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: bits_offset + bits_bytes,
            tiling: SplitTiling {
                n,
                wave_len,
                per_core,
                bits_offset,
                want_indices: u32::from(want_indices),
                bit_cache: u32::from(bit_cache),
            },
        })
    }
}

impl SplitInd {
    /// Most bytes per element a wave moves: flags, values read and written,
    /// indices written.
    fn wave_bytes(&self, want_indices: bool) -> u64 {
        1 + 2 * u64::from(self.bits / 8) + if want_indices { 4 } else { 0 }
    }
}

impl Kernel for SplitInd {
    fn name(&self) -> String {
        format!("{}_b{}", self.kind.tag(), self.bits)
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "flags", "y", "indices", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SplitTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let (what, kind) = match self.kind {
            SplitKind::Compress => ("Compress", "kCompress"),
            SplitKind::Split => ("Split", "kSplit"),
        };
        let bits = self.bits;
        render_entry(
            self,
            "split_kernel.h",
            &format!(
                "{what} (docs/algorithms.md, Split/Compress): {bits}-bit values, tiles of {SPLIT_TILE}."
            ),
            &format!("Split<ascend_scan::SplitKind::{kind}, uint{bits}_t, {SPLIT_TILE}>"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_whole_tiles_and_cover_n() {
        let soc = soc::Soc::Ascend910B4.profile();
        let k = SplitInd::new(SplitKind::Split, DType::F16).unwrap();
        for n in [1, 31, 4096, 4097, 40 * 4096 + 3, 1 << 20] {
            let p = k.plan(&soc, n, true).unwrap();
            assert_eq!(p.tiling.per_core % SPLIT_TILE, 0);
            assert!(p.block_dim as u64 * p.tiling.per_core >= n);
            assert!((p.block_dim as u64 - 1) * p.tiling.per_core < n);
            assert!(p.block_dim <= soc.vector_cores);
            assert_eq!(p.tiling.want_indices, 1);
            assert_eq!(p.tiling.wave_len, n);
        }
        // COMPRESS in waves of whole core ranges, each within the L2.
        let c = SplitInd::new(SplitKind::Compress, DType::F16).unwrap();
        let n = 1 << 26;
        for want in [false, true] {
            let t = c.plan(&soc, n, want).unwrap().tiling;
            assert!(t.wave_len < n && t.wave_len * c.wave_bytes(want) <= soc.l2_bytes);
            assert_eq!(t.wave_len % (u64::from(soc.vector_cores) * SPLIT_TILE), 0);
            assert_eq!(t.per_core * u64::from(soc.vector_cores), t.wave_len);
        }
        // tests/it/split.rs compress_in_waves relies on three waves here
        // (f16 with indices: 9 bytes per element, 96 MiB L2).
        let n = (1 << 24) + (1 << 23) + 4097;
        let t = c.plan(&soc, n, true).unwrap().tiling;
        assert_eq!(n.div_ceil(t.wave_len), 3);
        // Everything fits in L2: one wave.
        assert_eq!(
            c.plan(&soc, 1 << 24, false).unwrap().tiling.wave_len,
            1 << 24
        );
        assert!(k.plan(&soc, 0, false).is_err());
        assert!(k.plan(&soc, MAX_SPLIT_LEN + 1, false).is_err());
        let c = SplitInd::new(SplitKind::Compress, DType::F32).unwrap();
        assert_eq!(c.name(), "compress_b32");
        assert_eq!(c.plan(&soc, 5, false).unwrap().tiling.want_indices, 0);
        assert!(SplitInd::new(SplitKind::Compress, DType::I8).is_err());
    }
}
