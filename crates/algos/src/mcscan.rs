//! MCSCAN: the published multi-core scan (docs/algorithms.md, section "MCScan (MCSCAN)").
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{multicore_scan_kernel, AlgoError, DType, Kernel, LaunchPlan};
use crate::scanu::ScanU;

/// Tiling of the MCSCAN kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct McScanTiling {
    /// Elements to scan.
    pub n: u64,
    /// Number of s*s tiles (the last may be partial).
    pub tiles: u32,
    /// Tiles per AI core (block); the last block may hold fewer.
    pub tiles_per_block: u32,
    /// 1 for an exclusive scan, 0 for inclusive.
    pub exclusive: u32,
    /// Byte offset of the s zero elements in the constants (the workspace
    /// holds the per-vector-core sums, 32 bytes each).
    pub zeros_offset: u32,
}

/// How a multi-core scan splits its tiles over the AI cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockSplit {
    pub tiles: u32,
    pub tiles_per_block: u32,
    pub block_dim: u64,
}

/// Whole tiles of `tile` elements, as evenly as possible over at most all
/// AI cores (every block holds at least one tile).
pub(crate) fn block_split(soc: &SocProfile, n: u64, tile: u64) -> Result<BlockSplit, AlgoError> {
    if n == 0 {
        return Err(AlgoError::InvalidArgument {
            name: "n",
            reason: "an empty scan needs no launch".into(),
        });
    }
    let tiles = n.div_ceil(tile);
    let blocks = tiles.min(u64::from(soc.cube_cores));
    let tiles_per_block = tiles.div_ceil(blocks);
    let too_long = || AlgoError::InvalidArgument {
        name: "n",
        reason: format!("{n} elements need too many tiles"),
    };
    Ok(BlockSplit {
        tiles: u32::try_from(tiles).map_err(|_| too_long())?,
        tiles_per_block: u32::try_from(tiles_per_block).map_err(|_| too_long())?,
        block_dim: tiles.div_ceil(tiles_per_block),
    })
}

/// An MCSCAN kernel instance: input type and tile edge s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McScan {
    tile: ScanU,
}

impl McScan {
    /// Supported tile edges.
    pub const TILE_EDGES: [u32; 4] = ScanU::TILE_EDGES;

    /// An MCSCAN instance; `s` must be 16, 32, 64 or 128.
    pub fn new(dtype: DType, s: u32) -> Result<McScan, AlgoError> {
        Ok(McScan {
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
    ) -> Result<LaunchPlan<McScanTiling>, AlgoError> {
        let s = u64::from(self.tile.s());
        let split = block_split(soc, n, s * s)?;
        let sums_bytes = 2 * split.block_dim * 32;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: split.block_dim as u32,
            workspace_bytes: sums_bytes,
            tiling: McScanTiling {
                n,
                tiles: split.tiles,
                tiles_per_block: split.tiles_per_block,
                exclusive: u32::from(exclusive),
                zeros_offset: self.tile.zeros_offset() as u32,
            },
        })
    }
}

multicore_scan_kernel!(
    McScan,
    McScanTiling,
    prefix: "mcscan",
    title: "MCScan",
    body: "McScan"
);
