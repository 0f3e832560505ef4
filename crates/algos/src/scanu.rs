//! SCANU: single-core scan with the cube unit (docs/algorithms.md, section "ScanU (SCANU)").
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of the SCANU kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct ScanUTiling {
    /// Elements of each row.
    pub n: u64,
    /// Rows (independent arrays, stored one after the other).
    pub rows: u32,
    /// Number of s*s tiles per row (the last may be partial).
    pub tiles: u32,
    /// 1 for an exclusive scan, 0 for inclusive.
    pub exclusive: u32,
    /// Slots of the AIC -> AIV ring in the workspace (the rings, one per AI
    /// core, fill the workspace from its start).
    pub ring_slots: u32,
    /// Byte offset of the s zero elements in the constants.
    pub zeros_offset: u32,
    /// Unused (keeps the struct a multiple of 8 bytes).
    pub reserved: u32,
}

/// Accumulator (output) type of a scan of `dtype`: i32 for i8 and i32, else f32.
pub fn scan_accumulator(dtype: DType) -> DType {
    if matches!(dtype, DType::I8 | DType::I32) {
        DType::I32
    } else {
        DType::F32
    }
}

/// 1 in a cube input type, little endian.
pub(crate) fn one_bytes(dtype: DType) -> &'static [u8] {
    match dtype {
        DType::F16 => &[0x00, 0x3c],
        DType::Bf16 => &[0x80, 0x3f],
        _ => &[1],
    }
}

/// The scans take f16 or bf16 (accumulating in f32) or i8 (accumulating in i32).
pub fn validate_scan_dtype(algorithm: &'static str, dtype: DType) -> Result<(), AlgoError> {
    if ScanU::DTYPES.contains(&dtype) {
        return Ok(());
    }
    Err(AlgoError::UnsupportedDtype {
        algorithm,
        dtype,
        reason: "scans take f16 or bf16 (accumulating in f32) or i8 (accumulating in i32)".into(),
    })
}

/// A SCANU kernel instance: input type and tile edge s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanU {
    dtype: DType,
    s: u32,
}

/// Ring depth of the AIC -> AIV hand-off: deep enough for the cube to run
/// ahead of the vector core, far below the 15 pending sets a flag holds.
pub(crate) const RING_SLOTS: u32 = 4;

impl ScanU {
    /// Supported tile edges.
    pub const TILE_EDGES: [u32; 4] = [16, 32, 64, 128];
    /// Supported input types (fp16 -> fp32, int8 -> int32).
    pub const DTYPES: [DType; 3] = [DType::F16, DType::Bf16, DType::I8];

    /// A SCANU instance; `s` must be 16, 32, 64 or 128.
    pub fn new(dtype: DType, s: u32) -> Result<ScanU, AlgoError> {
        if !Self::TILE_EDGES.contains(&s) {
            return Err(AlgoError::InvalidArgument {
                name: "s",
                reason: format!("tile edge {s} is not one of 16, 32, 64, 128"),
            });
        }
        if !Self::DTYPES.contains(&dtype) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "ScanU",
                dtype,
                reason: "the cube scan takes f16 or bf16 (accumulating in f32) or i8 (accumulating in i32)"
                    .into(),
            });
        }
        Ok(ScanU { dtype, s })
    }

    /// Input element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// Output (accumulator) element type.
    pub fn acc_dtype(&self) -> DType {
        scan_accumulator(self.dtype)
    }
    /// Tile edge.
    pub fn s(&self) -> u32 {
        self.s
    }

    pub(crate) fn zeros_offset(&self) -> u64 {
        (u64::from(self.s * self.s) * self.dtype.size() as u64).div_ceil(512) * 512
    }
    /// The kernel's `constants` argument, uploaded once per device (the
    /// kernels only read it): U transposed (row n has ones in columns
    /// 0..=n; lower triangular) in the input type, then s zeros.
    pub fn constants(&self) -> Vec<u8> {
        let s = self.s as usize;
        let one = one_bytes(self.dtype);
        let mut out = vec![0u8; self.zeros_offset() as usize + s * self.dtype.size()];
        for n in 0..s {
            for k in 0..=n {
                let at = (n * s + k) * one.len();
                out[at..at + one.len()].copy_from_slice(one);
            }
        }
        out
    }

    /// Plan a scan of `rows >= 1` arrays of `n >= 1` elements each. Rows go
    /// to the AI cores in pairs (one AI core for one or two rows); each row's
    /// total lands in its own 32-byte slot of the `total` buffer
    /// ([`ScanU::total_slot_elems`] accumulators per row).
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u32,
        n: u64,
        exclusive: bool,
    ) -> Result<LaunchPlan<ScanUTiling>, AlgoError> {
        let tile = u64::from(self.s * self.s);
        let tiles = row_tiles(rows, n, tile)?;
        let block_dim = rows.div_ceil(2).min(soc.cube_cores);
        // One ring per AI core; a slot holds tile k of both rows of a pair.
        let ring_bytes = u64::from(block_dim)
            * u64::from(RING_SLOTS)
            * 2
            * tile
            * self.acc_dtype().size() as u64;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim,
            workspace_bytes: ring_bytes,
            tiling: ScanUTiling {
                n,
                rows,
                tiles,
                exclusive: u32::from(exclusive),
                ring_slots: RING_SLOTS,
                zeros_offset: self.zeros_offset() as u32,
                reserved: 0,
            },
        })
    }

    /// Accumulators per row in the `total` buffer (one 32-byte slot).
    pub fn total_slot_elems(&self) -> usize {
        32 / self.acc_dtype().size()
    }
}

/// Tiles of `tile` elements in each of `rows >= 1` rows of `n >= 1`
/// elements (the last may be partial).
pub(crate) fn row_tiles(rows: u32, n: u64, tile: u64) -> Result<u32, AlgoError> {
    if n == 0 || rows == 0 {
        return Err(AlgoError::InvalidArgument {
            name: "n",
            reason: "an empty scan needs no launch".into(),
        });
    }
    u32::try_from(n.div_ceil(tile)).map_err(|_| AlgoError::InvalidArgument {
        name: "n",
        reason: format!("{n} elements need too many tiles"),
    })
}

impl Kernel for ScanU {
    fn name(&self) -> String {
        format!("scanu_{}_s{}", self.dtype.tag(), self.s)
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAic1_2
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["x", "y", "total", "constants", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<ScanUTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        // Vector chunks of at most 4096 accumulators (16 KiB) keep 2 x 2
        // buffers far inside UB.
        let chunk_rows = (4096 / self.s).min(self.s);
        let acc = self.acc_dtype();
        render_entry(
            self,
            "scanu_kernel.h",
            &format!(
                "ScanU (docs/algorithms.md, ScanU): {} -> {acc}, tile edge s = {}, \
                 vector chunks of {chunk_rows} rows.",
                self.dtype, self.s
            ),
            &format!(
                "ScanU<{}, {}, {}, {chunk_rows}>",
                self.dtype.cpp(),
                acc.cpp(),
                self.s
            ),
        )
    }
}
