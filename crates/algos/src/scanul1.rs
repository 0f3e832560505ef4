//! SCANUL1: single-core scan where the cube computes each whole s*s-tile
//! scan (docs/algorithms.md, section "ScanUL1 (SCANUL1)").
//!
//! `scan(tile) = A @ U + L- @ (A @ 1)`. The precision trap: the row sums
//! `A @ 1` (f32 in L0C) cannot re-enter the cube as f16 operands (f16 is
//! exact only to 2048). Our fix: the in-tile carries `R = L- @ c` are computed
//! with f32 operands (as `c^T @ U-`, `U-` strictly upper triangular, so `c`
//! loads as a plain row) and broadcast onto every column of the tile by a
//! second f32 product `R @ E` (E: one row of ones) accumulated onto `A @ U`
//! in L0C. Every step adds in f32, so the result is as accurate as an f32
//! sequential sum. Row sums and carries travel through two small GM vectors
//! (L2-resident) because A2 has no L0C -> L0A path.
//!
//! Only f16 and bf16 input: int8 operands cannot carry int32 row sums (and the cube has
//! no int32 or f32-from-int32 path), so an int8 SCANUL1 would not be exact.
//! Tile edges 16, 32, 64: at s = 128 the f32 `U-` (64 KiB) does not fit L0B
//! beside U.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;
use crate::scanu::{one_bytes, row_tiles, scan_accumulator, RING_SLOTS};

/// Tiling of the SCANUL1 kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct ScanUL1Tiling {
    /// Elements of each row.
    pub n: u64,
    /// Rows (independent arrays, stored one after the other).
    pub rows: u32,
    /// Number of s*s tiles per row (the last may be partial).
    pub tiles: u32,
    /// 1 for an exclusive scan, 0 for inclusive.
    pub exclusive: u32,
    /// Slots of the AIC -> AIV ring.
    pub ring_slots: u32,
    /// Byte offset of s zero inputs in the constants (U transposed at 0).
    pub zeros_offset: u32,
    /// Byte offset of 1 (s x 16 ones, given transposed, input type) in the constants.
    pub ones_offset: u32,
    /// Byte offset of U- (strictly upper ones, s x s f32, given transposed) in the constants.
    pub ustrict_offset: u32,
    /// Byte offset of E (8 x s f32, first row ones, given transposed) in the constants.
    pub e_offset: u32,
    /// Byte offset of the tile's in-tile carries (s f32 per AI core) in the
    /// workspace, after the tile's row sums (s f32 per AI core, zeroed by the
    /// host: [`ScanUL1::zeroed_workspace_bytes`]) at its start.
    pub carries_offset: u32,
    /// Byte offset of the rings (one per AI core) in the workspace.
    pub ring_offset: u32,
}

/// A SCANUL1 kernel instance: input type and tile edge s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanUL1 {
    dtype: DType,
    s: u32,
}

/// Most AI cores of an A2 part (the per-core scratch vectors are laid out for
/// this many; the 910B1..B4 have 20..24).
const MAX_CORES: u64 = 32;

/// The regions of the constants (U transposed at 0, then `zeros` ..
/// `e`, ending at `constants`) and of the workspace (the row sums at 0,
/// then `carries` and `ring`), each 512-byte aligned.
struct Layout {
    zeros: u64,
    ones: u64,
    ustrict: u64,
    e: u64,
    constants: u64,
    carries: u64,
    ring: u64,
}

impl ScanUL1 {
    /// Supported tile edges.
    pub const TILE_EDGES: [u32; 3] = [16, 32, 64];
    /// Supported input types.
    pub const DTYPES: [DType; 2] = [DType::F16, DType::Bf16];

    /// A SCANUL1 instance; `s` must be 16, 32 or 64 and `dtype` f16 or bf16.
    pub fn new(dtype: DType, s: u32) -> Result<ScanUL1, AlgoError> {
        if !Self::TILE_EDGES.contains(&s) {
            return Err(AlgoError::InvalidArgument {
                name: "s",
                reason: format!(
                    "tile edge {s} is not one of 16, 32, 64 (at 128 the f32 carry matrix does not fit L0B)"
                ),
            });
        }
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "ScanUL1",
                dtype,
                reason:
                    "SCANUL1 takes f16 or bf16: int8 cube operands cannot carry the int32 row sums \
                         exactly (use ScanU or a multi-core scan for int8)"
                        .into(),
            });
        }
        Ok(ScanUL1 { dtype, s })
    }

    /// Tile edge.
    pub fn s(&self) -> u32 {
        self.s
    }

    fn layout(&self) -> Layout {
        let s = u64::from(self.s);
        let e = self.dtype.size() as u64;
        let align = |v: u64| v.div_ceil(512) * 512;
        let zeros = align(s * s * e);
        let ones = align(zeros + s * e);
        let ustrict = align(ones + 16 * s * e);
        let e_off = align(ustrict + s * s * 4);
        let carries = align(MAX_CORES * s * 4);
        Layout {
            zeros,
            ones,
            ustrict,
            e: e_off,
            constants: e_off + s * 8 * 4,
            carries,
            ring: align(carries + MAX_CORES * s * 4),
        }
    }

    /// The kernel's `constants` argument, uploaded once per device: U^T and
    /// the ones in the input type, U-^T and E^T in f32.
    pub fn constants(&self) -> Vec<u8> {
        let s = self.s as usize;
        let l = self.layout();
        let one16 = one_bytes(self.dtype);
        let one32 = 1.0f32.to_le_bytes();
        let mut out = vec![0u8; l.constants as usize];
        let mut put = |at: usize, v: &[u8]| out[at..at + v.len()].copy_from_slice(v);
        for n in 0..s {
            // U^T: row n has ones in columns 0..=n.
            for k in 0..=n {
                put((n * s + k) * 2, one16);
            }
            // U-^T: row n has ones in columns 0..n.
            for k in 0..n {
                put(l.ustrict as usize + (n * s + k) * 4, &one32);
            }
            // E^T: row n is [1, 0, ..., 0] (8 wide).
            put(l.e as usize + n * 8 * 4, &one32);
        }
        for i in 0..16 * s {
            put(l.ones as usize + i * 2, one16);
        }
        out
    }

    /// Bytes at the start of the workspace that the host zeroes before every
    /// launch: the row sums, of which a partial first tile writes only its
    /// valid rows while the carries' matmul reads all s (times U-'s zeros
    /// below the diagonal: a NaN or infinity left there would make the
    /// tile's carries NaN and send it down the vector side's rescan).
    pub fn zeroed_workspace_bytes(&self) -> u64 {
        MAX_CORES * u64::from(self.s) * 4
    }

    /// Plan a scan of `rows >= 1` arrays of `n >= 1` elements each (row r on
    /// AI core r mod cores); each row's total lands in its own 32-byte slot of
    /// the `total` buffer.
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u32,
        n: u64,
        exclusive: bool,
    ) -> Result<LaunchPlan<ScanUL1Tiling>, AlgoError> {
        let tile = u64::from(self.s * self.s);
        let tiles = row_tiles(rows, n, tile)?;
        let l = self.layout();
        let block_dim = rows.min(soc.cube_cores).min(MAX_CORES as u32);
        let ring_bytes = u64::from(block_dim) * u64::from(RING_SLOTS) * tile * 4;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim,
            workspace_bytes: l.ring + ring_bytes,
            tiling: ScanUL1Tiling {
                n,
                rows,
                tiles,
                exclusive: u32::from(exclusive),
                ring_slots: RING_SLOTS,
                zeros_offset: l.zeros as u32,
                ones_offset: l.ones as u32,
                ustrict_offset: l.ustrict as u32,
                e_offset: l.e as u32,
                carries_offset: l.carries as u32,
                ring_offset: l.ring as u32,
            },
        })
    }
}

impl Kernel for ScanUL1 {
    fn name(&self) -> String {
        format!("scanul1_{}_s{}", self.dtype.tag(), self.s)
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAic1_1
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "y", "total", "constants", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<ScanUL1Tiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        let acc = scan_accumulator(self.dtype);
        render_entry(
            self,
            "scanul1_kernel.h",
            &format!(
                "ScanUL1 (docs/algorithms.md, ScanUL1): {} -> {acc}, tile edge s = {}.",
                self.dtype, self.s
            ),
            &format!("ScanUL1<{}, {}, {}>", self.dtype.cpp(), acc.cpp(), self.s),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_int8_and_s128_with_reasons() {
        assert!(matches!(
            ScanUL1::new(DType::I8, 64),
            Err(AlgoError::UnsupportedDtype { .. })
        ));
        assert!(matches!(
            ScanUL1::new(DType::F16, 128),
            Err(AlgoError::InvalidArgument { name: "s", .. })
        ));
    }

    #[test]
    fn constants_hold_the_matrices() {
        let k = ScanUL1::new(DType::F16, 16).unwrap();
        let c = k.constants();
        let l = k.layout();
        let f32_at =
            |at: u64| f32::from_le_bytes(c[at as usize..at as usize + 4].try_into().unwrap());
        // U-^T row 3: ones in columns 0..3, zero at 3.
        assert_eq!(f32_at(l.ustrict + (3 * 16 + 2) * 4), 1.0);
        assert_eq!(f32_at(l.ustrict + (3 * 16 + 3) * 4), 0.0);
        assert_eq!(f32_at(l.e + 5 * 8 * 4), 1.0);
        assert_eq!(f32_at(l.e + (5 * 8 + 1) * 4), 0.0);
        assert_eq!(
            &c[l.ones as usize..l.ones as usize + 2],
            one_bytes(DType::F16)
        );
    }
}
