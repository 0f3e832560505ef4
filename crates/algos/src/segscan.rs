//! SEGSCAN: the segmented scan in one launch on every AI core (docs/algorithms.md,
//! section "SegScan (SEGSCAN) and REVSPEC"), in the reduce-then-scan shape of
//! RTSCAN, with the two REVSPEC variants.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;
use crate::rtscan::wave_split;
use crate::scanu::{scan_accumulator, ScanU};

/// Tiling of the SEGSCAN kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct SegScanTiling {
    /// Elements to scan.
    pub n: u64,
    /// Number of s*s tiles (the last may be partial).
    pub tiles: u32,
    /// Tiles per AI core (block) and wave; each of its two vector cores
    /// owns half of them (the first ceil(T/2), or the rest).
    pub tiles_per_block: u32,
    /// 1 for an exclusive scan, 0 for inclusive.
    pub exclusive: u32,
    /// Slots of each vector core's ring.
    pub ring_slots: u32,
    /// Byte offset of the value type's s zeros in the constants (after its
    /// U transposed at 0).
    pub zeros_offset: u32,
    /// Byte offset of the flags' (int8) U transposed in the constants.
    pub flag_constants_offset: u32,
    /// Byte offset of the flags' s zeros, from `flag_constants_offset`.
    pub flag_zeros_offset: u32,
    /// Byte offset of the rings (two per AI core) in the workspace, after
    /// the per-vector-core aggregates (32 bytes per core and wave) at its
    /// start.
    pub ring_offset: u32,
    /// Unused (keeps the struct a multiple of 8 bytes).
    pub reserved: u32,
    /// Waves of the input (each aggregated, then scanned, while it fits L2).
    pub waves: u32,
    /// Tiles per wave (`tiles` when there is one wave).
    pub tiles_per_wave: u32,
}

/// How a tile's speculative (unsegmented) scan is corrected to the
/// segmented one (REVSPEC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RevSpec {
    /// One masked fill per segment of the tile (O(segment length) vector work
    /// plus a few scalar reads per segment): cheap at low segment density.
    Simple,
    /// The values before every start compacted (GatherMask) and gathered
    /// back by each element's start count (one Gather per tile): work
    /// independent of the density.
    Vector,
}

impl RevSpec {
    /// Both variants.
    pub const ALL: [RevSpec; 2] = [RevSpec::Simple, RevSpec::Vector];

    fn tag(self) -> &'static str {
        match self {
            RevSpec::Simple => "simple",
            RevSpec::Vector => "vec",
        }
    }
}

/// Ring slots per vector core (each slot: a tile of row scans of the values,
/// and for the vector REVSPEC one of the flags: s*s x 4 bytes each).
const RING_SLOTS: u32 = 4;

/// 32 bytes per vector core and wave: the aggregate of its range.
const SLOT_BYTES: u64 = 32;

/// A SEGSCAN kernel instance: value type, tile edge s, REVSPEC variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegScan {
    tile: ScanU,
    flags: ScanU,
    revspec: RevSpec,
}

impl SegScan {
    /// Supported tile edges of the vector REVSPEC: two cube scans per tile
    /// (values and flags) must fit L0C double buffered, which s = 128 does
    /// not (2 x 2 x 64 KiB). The simple REVSPEC scans only the values.
    pub const TILE_EDGES: [u32; 2] = [32, 64];
    /// Supported tile edges of the simple REVSPEC.
    pub const SIMPLE_TILE_EDGES: [u32; 3] = [32, 64, 128];

    /// The tile edges of a REVSPEC variant.
    pub fn tile_edges(revspec: RevSpec) -> &'static [u32] {
        match revspec {
            RevSpec::Simple => &Self::SIMPLE_TILE_EDGES,
            RevSpec::Vector => &Self::TILE_EDGES,
        }
    }

    /// The tile edge the library runs: the largest that fits (fewer, larger
    /// cube matmuls and ring hand-offs per element).
    pub fn default_edge(revspec: RevSpec) -> u32 {
        *Self::tile_edges(revspec).last().expect("non-empty")
    }
    /// Supported value types (f16, bf16 -> f32; i8 -> i32).
    pub const DTYPES: [DType; 3] = ScanU::DTYPES;

    /// A SEGSCAN instance.
    pub fn new(dtype: DType, s: u32, revspec: RevSpec) -> Result<SegScan, AlgoError> {
        let edges = Self::tile_edges(revspec);
        if !edges.contains(&s) {
            return Err(AlgoError::InvalidArgument {
                name: "s",
                reason: format!(
                    "SEGSCAN ({revspec:?} REVSPEC) tile edge {s} is not one of {edges:?}"
                ),
            });
        }
        Ok(SegScan {
            tile: ScanU::new(dtype, s)?,
            flags: ScanU::new(DType::I8, s)?,
            revspec,
        })
    }

    /// Tile edge.
    pub fn s(&self) -> u32 {
        self.tile.s()
    }
    /// Value type.
    pub fn dtype(&self) -> DType {
        self.tile.dtype()
    }
    /// The REVSPEC variant.
    pub fn revspec(&self) -> RevSpec {
        self.revspec
    }

    /// Tiles of row scans per ring slot: the values', and for the vector
    /// REVSPEC the flags'.
    fn slot_scans(&self) -> u32 {
        match self.revspec {
            RevSpec::Simple => 1,
            RevSpec::Vector => 2,
        }
    }

    fn flag_constants_offset(&self) -> u64 {
        (self.tile.constants().len() as u64).div_ceil(512) * 512
    }

    /// The kernel's `constants` argument, uploaded once per device: U
    /// transposed and zeros of the value type (as for SCANU), then the same
    /// for the int8 flags.
    pub fn constants(&self) -> Vec<u8> {
        let mut out = self.tile.constants();
        out.resize(self.flag_constants_offset() as usize, 0);
        out.extend(self.flags.constants());
        out
    }

    /// Plan a segmented scan of `n >= 1` elements on all AI cores of `soc`.
    /// The `checks` buffer holds one 32-byte slot per vector core
    /// ([`SegScan::check_slots`]): a negative flag it read (else 0) and the
    /// largest flag.
    pub fn plan(
        &self,
        soc: &SocProfile,
        n: u64,
        exclusive: bool,
    ) -> Result<LaunchPlan<SegScanTiling>, AlgoError> {
        let s = u64::from(self.s());
        let tile = s * s;
        // Per element: the value, its flag, the result.
        let elem_bytes = (self.dtype().size() + 1 + scan_accumulator(self.dtype()).size()) as u64;
        let waves = wave_split(soc, n, tile, elem_bytes)?;
        let vectors = waves.block_dim * 2;
        let ring_offset = (waves.waves * vectors * SLOT_BYTES).div_ceil(512) * 512;
        let ring_bytes = vectors * u64::from(RING_SLOTS) * u64::from(self.slot_scans()) * tile * 4;
        let offset = |v: u64| {
            u32::try_from(v).map_err(|_| AlgoError::InvalidArgument {
                name: "n",
                reason: format!("{n} elements need a workspace past 4 GiB"),
            })
        };
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: waves.block_dim as u32,
            workspace_bytes: ring_offset + ring_bytes,
            tiling: SegScanTiling {
                n,
                tiles: waves.tiles,
                tiles_per_block: waves.tiles_per_block as u32,
                exclusive: u32::from(exclusive),
                ring_slots: RING_SLOTS,
                zeros_offset: self.tile.zeros_offset() as u32,
                flag_constants_offset: self.flag_constants_offset() as u32,
                flag_zeros_offset: self.flags.zeros_offset() as u32,
                ring_offset: offset(ring_offset)?,
                waves: waves.waves as u32,
                tiles_per_wave: waves.tiles_per_wave as u32,
                reserved: 0,
            },
        })
    }

    /// int32 words per vector core in the `checks` buffer (one 32-byte slot:
    /// smallest flag, largest flag).
    pub const CHECK_SLOT_WORDS: usize = 8;

    /// Vector cores of a plan (each writes one check slot).
    pub fn check_slots(plan: &LaunchPlan<SegScanTiling>) -> usize {
        plan.block_dim as usize * 2
    }
}

impl Kernel for SegScan {
    fn name(&self) -> String {
        format!(
            "segscan_{}_s{}_{}",
            self.dtype().tag(),
            self.s(),
            self.revspec.tag()
        )
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAic1_2
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "flags", "y", "checks", "constants", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<SegScanTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let (dtype, s) = (self.dtype(), self.s());
        let acc = scan_accumulator(dtype);
        let (revspec, variant) = match self.revspec {
            RevSpec::Simple => ("simple", "kSimple"),
            RevSpec::Vector => ("vector", "kVector"),
        };
        let slot_scans = self.slot_scans();
        render_entry(
            self,
            "segscan_kernel.h",
            &format!(
                "SegScan (docs/algorithms.md, SegScan): {dtype} -> {acc}, tile edge s = {s}, \
                 {revspec} REVSPEC, {slot_scans} row scan(s) per ring slot."
            ),
            &format!(
                "SegScan<{}, {}, {s}, ascend_scan::RevSpec::{variant}, {slot_scans}>",
                dtype.cpp(),
                acc.cpp()
            ),
        )
    }
}
