//! REDUCE-THEN-SCAN: the multi-core scan with an L2-resident AIC -> AIV
//! hand-off (docs/algorithms.md, section "RTScan, reduce-then-scan").
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{multicore_scan_kernel, AlgoError, DType, Kernel, LaunchPlan};
use crate::mcscan::block_split;
use crate::scanu::{scan_accumulator, ScanU};

/// Tiling of the REDUCE-THEN-SCAN kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct RtScanTiling {
    /// Elements to scan.
    pub n: u64,
    /// Number of s*s tiles (the last may be partial).
    pub tiles: u32,
    /// Tiles per AI core (block); the last block may hold fewer.
    pub tiles_per_block: u32,
    /// 1 for an exclusive scan, 0 for inclusive.
    pub exclusive: u32,
    /// Slots of each AI core's ring.
    pub ring_slots: u32,
    /// Byte offset of the s zero elements in the constants.
    pub zeros_offset: u32,
    /// Byte offset of the rings (one per AI core) in the workspace, after
    /// the per-vector-core sums (32 bytes each) at its start.
    pub ring_offset: u32,
    /// Waves of the input (each reduced, then scanned, while it fits L2).
    pub waves: u32,
    /// Tiles per wave (`tiles` when there is one wave).
    pub tiles_per_wave: u32,
}

/// A REDUCE-THEN-SCAN kernel instance: input type and tile edge s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceThenScan {
    tile: ScanU,
}

/// Whole tiles over the AI cores in waves: the input and output of one wave
/// take at most half the L2, so a wave's input is still there when it is read
/// a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WaveSplit {
    pub(crate) tiles: u32,
    pub(crate) waves: u64,
    pub(crate) tiles_per_wave: u64,
    pub(crate) tiles_per_block: u64,
    pub(crate) block_dim: u64,
}

/// Splits `n` elements into tiles of `tile`, waves of at most half the L2
/// (`elem_bytes` of traffic per element) and blocks (one per AI core).
pub(crate) fn wave_split(
    soc: &SocProfile,
    n: u64,
    tile: u64,
    elem_bytes: u64,
) -> Result<WaveSplit, AlgoError> {
    let split = block_split(soc, n, tile)?;
    let wave_tiles = (soc.l2_bytes / 2 / elem_bytes / tile).max(u64::from(soc.cube_cores));
    Ok(if u64::from(split.tiles) <= wave_tiles {
        WaveSplit {
            tiles: split.tiles,
            waves: 1,
            tiles_per_wave: u64::from(split.tiles),
            tiles_per_block: u64::from(split.tiles_per_block),
            block_dim: split.block_dim,
        }
    } else {
        let per_block = wave_tiles.div_ceil(u64::from(soc.cube_cores));
        WaveSplit {
            tiles: split.tiles,
            waves: u64::from(split.tiles).div_ceil(wave_tiles),
            tiles_per_wave: wave_tiles,
            tiles_per_block: per_block,
            block_dim: wave_tiles.div_ceil(per_block),
        }
    })
}

/// Ring slots per AI core: enough for the cube to run ahead, small enough
/// that all rings (20 x 4 x 64 KiB at s = 128) stay far inside L2.
const RING_SLOTS: u32 = 4;

impl ReduceThenScan {
    /// Supported tile edges.
    pub const TILE_EDGES: [u32; 4] = ScanU::TILE_EDGES;

    /// A REDUCE-THEN-SCAN instance; `s` must be 16, 32, 64 or 128.
    pub fn new(dtype: DType, s: u32) -> Result<ReduceThenScan, AlgoError> {
        Ok(ReduceThenScan {
            tile: ScanU::new(dtype, s)?,
        })
    }

    /// The kernel's `constants` argument (as for SCANU: U transposed, then zeros).
    pub fn constants(&self) -> Vec<u8> {
        self.tile.constants()
    }

    /// Plan a scan of `n >= 1` elements on all AI cores of `soc`.
    pub fn plan(
        &self,
        soc: &SocProfile,
        n: u64,
        exclusive: bool,
    ) -> Result<LaunchPlan<RtScanTiling>, AlgoError> {
        let s = u64::from(self.tile.s());
        let tile = s * s;
        let elem_bytes =
            (self.tile.dtype().size() + scan_accumulator(self.tile.dtype()).size()) as u64;
        let WaveSplit {
            tiles,
            waves,
            tiles_per_wave,
            tiles_per_block,
            block_dim,
        } = wave_split(soc, n, tile, elem_bytes)?;
        // Two sets (alternating by wave) of one 32-byte slot per vector core.
        let ring_offset = (2 * 2 * block_dim * 32).div_ceil(512) * 512;
        let ring_bytes = block_dim
            * u64::from(RING_SLOTS)
            * tile
            * scan_accumulator(self.tile.dtype()).size() as u64;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: ring_offset + ring_bytes,
            tiling: RtScanTiling {
                n,
                tiles,
                tiles_per_block: tiles_per_block as u32,
                exclusive: u32::from(exclusive),
                ring_slots: RING_SLOTS,
                zeros_offset: self.tile.zeros_offset() as u32,
                ring_offset: ring_offset as u32,
                waves: waves as u32,
                tiles_per_wave: tiles_per_wave as u32,
            },
        })
    }
}

multicore_scan_kernel!(
    ReduceThenScan,
    RtScanTiling,
    prefix: "rtscan",
    title: "RTScan",
    body: "RtScan"
);
