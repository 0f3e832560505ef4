//! RADIXSORT (docs/algorithms.md, section "RadixSort (RADIXSORT)"): LSD
//! radix sort of keys with their indices, one kernel launch per digit.
//!
//! A pass is a stable counting sort of every row by one digit of the keys'
//! sort code, on all vector cores: phase 1 counts the digit values per row
//! piece, SyncAll, phase 2 sorts every tile into its digit groups (one
//! GatherMask per digit value: the stable split of docs/algorithms.md,
//! section "Split and Compress", generalised from 2 to 2^b groups) and
//! writes each group at its scanned offset. With 1-bit digits this is the
//! published split sort (16 passes for 16-bit keys); with 4-bit digits a
//! 16-bit key takes 4 passes, a 32-bit key 8.
//!
//! Sort code (as wide as the key, its order the key order, ties only
//! between keys that compare equal): unsigned keys as they are, signed keys
//! as signed, floats as `sign ? -|x| : |x|` on the magnitude bits with
//! every NaN mapped above +inf (so NaN sorts last, whatever its sign bit)
//! and -0.0 equal to +0.0 (kept in input order, as torch's stable sort
//! does). Descending order sorts the bitwise NOT of the code: reversed,
//! still stable, NaN first.
use soc::SocProfile;
use tiling_derive::Tiling;

use crate::kernel::{AlgoError, DType, Kernel, KernelType, LaunchPlan};
use crate::render::render_entry;

/// Tiling of one RADIXSORT pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Tiling)]
#[repr(C)]
pub struct RadixTiling {
    /// Keys per row.
    pub n: u64,
    /// Rows (each sorted on its own).
    pub rows: u64,
    /// Tiles per row (`ceil(n / tile)`, the key type's tile; tiles never
    /// cross rows).
    pub tiles_per_row: u64,
    /// Tiles per vector core (the last core takes the rest).
    pub per_core: u64,
    /// Byte offset in a count set of the per-row counts (64 bytes per row;
    /// the per-core slots come first).
    pub row_totals_offset: u64,
    /// Bytes of the count set.
    pub set_bytes: u64,
    /// Lowest bit of the digit in the sort code.
    pub shift: u32,
    /// Bits per digit (1 or 4).
    pub digit_bits: u32,
    /// Significant bits of the sort code (8 or 16).
    pub key_bits: u32,
    /// 1: descending order.
    pub descending: u32,
    /// 1: make the indices (0..n per row) instead of reading them (the
    /// first pass of a sort of keys alone).
    pub first_pass: u32,
    /// 1: write the sorted keys; 0: only the indices (the last pass of an
    /// argsort).
    pub store_keys: u32,
    /// 0: one pass of the sort (the launch sorts by one digit). Else the
    /// whole sort of rows of at most a tile, this many rows to a tile, in
    /// one launch (`RadixSort::plan_rows`, or `RadixSort::plan_network`).
    pub rows_per_tile: u64,
    /// Byte offset in the workspace of the per-core scratch of the values
    /// (rows mode; the keys' scratch is at 0).
    pub scratch_vals_offset: u64,
    /// 1: rows mode by the bitonic network (`RadixSort::plan_network`).
    pub network: u32,
    /// log2 of the network's padded row length.
    pub row_bits: u32,
}

/// Keys per tile of 8- and 16-bit keys (a multiple of 128: CompareScalar on
/// half takes whole 256-byte repeats).
pub const RADIX_TILE: u64 = 4096;
/// Keys per tile of 32-bit keys: their keys and sort codes take twice the
/// unified buffer per key.
pub const RADIX_TILE_WIDE: u64 = 2048;
/// Longest row: indices are i32.
pub const MAX_SORT_LEN: u64 = i32::MAX as u64;
/// Most rows in one tile of the on-chip sort: the row of a position is one
/// 4-bit digit.
pub const MAX_ROWS_PER_TILE: u64 = 16;
/// Longest row of the sorting network ([`RadixSort::plan_network`]): its
/// tiles of [`NETWORK_LANES`] lanes hold rows 8 to a 32-byte block.
pub const NETWORK_MAX_ROW: u64 = 512;
/// Lanes (padded keys) of a tile of the sorting network.
pub const NETWORK_LANES: u64 = 4096;
/// A network tile's fixed cost in lanes of work: its 200-odd vector
/// instructions' issue and barriers, whatever the tile's size. The
/// conservative cost model gives about 4.5 us a tile plus 2.3 ns a lane
/// (`cargo xtask bench`, [4096, 256] in tiles of 2048 and 4096 lanes).
const NETWORK_TILE_COST_LANES: u64 = 2048;
/// Bytes of a digit-count slot (16 i32).
const SLOT_BYTES: u64 = 64;

/// The digit widths offered: 1 bit (the published one-bit split sort) and
/// 4 bits (16 digit values per pass).
pub const DIGIT_BITS: [u32; 2] = [1, 4];

/// What a sort's passes read and write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RadixSortOptions {
    /// Largest first.
    pub descending: bool,
    /// The first pass makes the indices (0..n per row); else it reads them
    /// (a sort carrying given indices or 4-byte values).
    pub make_indices: bool,
    /// The last pass leaves the keys out (an argsort: only the indices are
    /// wanted).
    pub indices_only: bool,
}

/// One RADIXSORT pass kernel for one key type and one width of what moves
/// with the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RadixSort {
    key: DType,
    value_bytes: u32,
}

impl RadixSort {
    /// Key types: 8-, 16- and 32-bit integers, f16, bf16, f32.
    pub const DTYPES: [DType; 9] = [
        DType::U8,
        DType::I8,
        DType::U16,
        DType::I16,
        DType::F16,
        DType::Bf16,
        DType::U32,
        DType::I32,
        DType::F32,
    ];

    /// Widths in bytes of the values a pass moves with the keys: 4 (the
    /// i32 indices it may make, or 4-byte values) or 2 (2-byte values).
    pub const VALUE_BYTES: [u32; 2] = [4, 2];

    /// The pass kernel for keys of `key` carrying i32 indices (or 4-byte
    /// values).
    pub fn new(key: DType) -> Result<RadixSort, AlgoError> {
        Self::with_values(key, 4)
    }

    /// The pass kernel for keys of `key` carrying values of `value_bytes`
    /// bytes (see [`Self::VALUE_BYTES`]).
    pub fn with_values(key: DType, value_bytes: u32) -> Result<RadixSort, AlgoError> {
        if !Self::DTYPES.contains(&key) {
            return Err(AlgoError::UnsupportedDtype {
                algorithm: "RadixSort",
                dtype: key,
                reason: "keys must be u8, i8, u16, i16, u32, i32, f16, bf16 or f32".into(),
            });
        }
        if !Self::VALUE_BYTES.contains(&value_bytes) {
            return Err(AlgoError::InvalidArgument {
                name: "values",
                reason: format!("{value_bytes}-byte values: a sort carries 2- or 4-byte values"),
            });
        }
        Ok(RadixSort { key, value_bytes })
    }

    /// Bits of the sort code (the key width).
    pub fn key_bits(&self) -> u32 {
        8 * self.key.size() as u32
    }

    /// Keys per tile.
    pub fn tile(&self) -> u64 {
        if self.key.size() == 4 {
            RADIX_TILE_WIDE
        } else {
            RADIX_TILE
        }
    }

    /// Passes for digits of `digit_bits` bits.
    pub fn passes(&self, digit_bits: u32) -> u32 {
        self.key_bits().div_ceil(digit_bits)
    }

    /// Plans pass `pass` (0 = least significant digit) over `rows` rows of
    /// `n >= 1` keys: equal ranges of whole tiles over the vector cores. The
    /// workspace holds two 64-byte count slots per core, then one per row.
    pub fn plan(
        &self,
        soc: &SocProfile,
        rows: u64,
        n: u64,
        digit_bits: u32,
        pass: u32,
        options: RadixSortOptions,
    ) -> Result<LaunchPlan<RadixTiling>, AlgoError> {
        if !DIGIT_BITS.contains(&digit_bits) {
            return Err(AlgoError::InvalidArgument {
                name: "digit_bits",
                reason: format!("{digit_bits}: digits have 1 or 4 bits"),
            });
        }
        if pass >= self.passes(digit_bits) {
            return Err(AlgoError::InvalidArgument {
                name: "pass",
                reason: format!(
                    "pass {pass} of {} for {}-bit keys",
                    self.passes(digit_bits),
                    self.key_bits()
                ),
            });
        }
        if options.make_indices && self.value_bytes != 4 {
            return Err(AlgoError::InvalidArgument {
                name: "make_indices",
                reason: "indices are i32: a sort carrying 2-byte values reads them".into(),
            });
        }
        if n == 0 || rows == 0 {
            return Err(AlgoError::InvalidArgument {
                name: if n == 0 { "n" } else { "rows" },
                reason: "an empty input needs no launch".into(),
            });
        }
        if n > MAX_SORT_LEN {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: format!("{n} keys per row: at most {MAX_SORT_LEN} (indices are i32)"),
            });
        }
        let tiles_per_row = n.div_ceil(self.tile());
        let tiles = rows
            .checked_mul(tiles_per_row)
            .ok_or(AlgoError::InvalidArgument {
                name: "rows",
                reason: format!("{rows} rows of {n} keys overflow"),
            })?;
        let (per_core, block_dim) = spread(soc, tiles);
        let row_totals_offset = (block_dim * 2 * SLOT_BYTES).div_ceil(512) * 512;
        let set_bytes = (row_totals_offset + rows * SLOT_BYTES).div_ceil(512) * 512;
        Ok(LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: set_bytes,
            tiling: RadixTiling {
                n,
                rows,
                tiles_per_row,
                per_core,
                row_totals_offset,
                set_bytes,
                shift: pass * digit_bits,
                digit_bits,
                key_bits: self.key_bits(),
                descending: u32::from(options.descending),
                first_pass: u32::from(options.make_indices && pass == 0),
                store_keys: u32::from(
                    !(options.indices_only && pass + 1 == self.passes(digit_bits)),
                ),
                rows_per_tile: 0,
                scratch_vals_offset: 0,
                network: 0,
                row_bits: 0,
            },
        })
    }

    /// Whether [`Self::plan_rows`] takes rows of `n` keys.
    pub fn fits_rows(&self, n: u64, options: RadixSortOptions) -> bool {
        n >= 1 && n <= self.tile() && options.make_indices && self.value_bytes == 4
    }

    /// Plans the whole sort of `rows` rows of `1 <= n <= tile` keys in one
    /// launch of 4-bit passes on chip: whole rows to a tile (at most
    /// [`MAX_ROWS_PER_TILE`], so the row of a position is one 4-bit digit),
    /// equal ranges of tiles over the vector cores. The workspace is each
    /// core's scratch copy of one tile (keys, then values at
    /// `scratch_vals_offset`), L2-resident. Only for sorts that make their
    /// indices.
    pub fn plan_rows(
        &self,
        soc: &SocProfile,
        rows: u64,
        n: u64,
        options: RadixSortOptions,
    ) -> Result<LaunchPlan<RadixTiling>, AlgoError> {
        if !self.fits_rows(n, options) || rows == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: format!(
                    "{rows} rows of {n} keys: the on-chip sort takes rows of 1..={} keys, making the indices",
                    self.tile()
                ),
            });
        }
        let rows_per_tile = (self.tile() / n).min(MAX_ROWS_PER_TILE);
        let mut plan = self.one_launch(soc, rows, n, options, rows_per_tile);
        let cores = u64::from(plan.block_dim);
        let t = &mut plan.tiling;
        t.scratch_vals_offset = (cores * self.tile() * self.key.size() as u64).div_ceil(512) * 512;
        t.set_bytes = t.scratch_vals_offset + (cores * self.tile() * 4).div_ceil(512) * 512;
        plan.workspace_bytes = t.set_bytes;
        Ok(plan)
    }

    /// The whole sort of `rows` rows of `n` keys in one launch,
    /// `rows_per_tile` whole rows to a tile, equal ranges of tiles over the
    /// vector cores; no workspace yet.
    fn one_launch(
        &self,
        soc: &SocProfile,
        rows: u64,
        n: u64,
        options: RadixSortOptions,
        rows_per_tile: u64,
    ) -> LaunchPlan<RadixTiling> {
        let (per_core, block_dim) = spread(soc, rows.div_ceil(rows_per_tile));
        LaunchPlan {
            kernel: self.name(),
            block_dim: block_dim as u32,
            workspace_bytes: 0,
            tiling: RadixTiling {
                n,
                rows,
                tiles_per_row: 1,
                per_core,
                row_totals_offset: 0,
                set_bytes: 0,
                shift: 0,
                digit_bits: 4,
                key_bits: self.key_bits(),
                descending: u32::from(options.descending),
                first_pass: 1,
                store_keys: u32::from(!options.indices_only),
                rows_per_tile,
                scratch_vals_offset: 0,
                network: 0,
                row_bits: 0,
            },
        }
    }

    /// Whether [`Self::plan_network`] takes rows of `n` keys.
    pub fn fits_network(&self, n: u64, options: RadixSortOptions) -> bool {
        self.key.size() == 2
            && (1..=NETWORK_MAX_ROW).contains(&n)
            && options.make_indices
            && self.value_bytes == 4
    }

    /// Plans the whole sort of `rows` rows of `1 <= n <=`
    /// [`NETWORK_MAX_ROW`] 16-bit keys in one launch by a bitonic sorting
    /// network on chip: each row padded to a power of two, whole rows to a
    /// tile of [`NETWORK_LANES`] lanes, equal ranges of tiles over the
    /// vector cores, no workspace. Only for sorts that make their indices.
    pub fn plan_network(
        &self,
        soc: &SocProfile,
        rows: u64,
        n: u64,
        options: RadixSortOptions,
    ) -> Result<LaunchPlan<RadixTiling>, AlgoError> {
        if !self.fits_network(n, options) || rows == 0 {
            return Err(AlgoError::InvalidArgument {
                name: "n",
                reason: format!(
                    "{rows} rows of {n} {} keys: the sorting network takes rows of 1..={NETWORK_MAX_ROW} 16-bit keys, making the indices",
                    self.key
                ),
            });
        }
        let padded = n.next_power_of_two();
        // Rows side by side in 32-byte blocks: a power of two from 8 to a
        // tile, the one whose busiest core has the least work (big tiles
        // spread the fixed cost, small ones spread short batches over more
        // cores); the largest on ties.
        let most = (NETWORK_LANES / padded).min(rows.next_power_of_two().max(8));
        let cores = u64::from(soc.vector_cores.max(1));
        let busiest = |per_tile: u64| {
            let lanes = (per_tile * padded).max(64);
            rows.div_ceil(per_tile).div_ceil(cores) * (lanes + NETWORK_TILE_COST_LANES)
        };
        let rows_per_tile = (3..=most.trailing_zeros())
            .rev()
            .map(|b| 1u64 << b)
            .min_by_key(|&per_tile| busiest(per_tile))
            .unwrap_or(8);
        let mut plan = self.one_launch(soc, rows, n, options, rows_per_tile);
        plan.tiling.network = 1;
        plan.tiling.row_bits = padded.trailing_zeros();
        Ok(plan)
    }
}

/// Equal ranges of `tiles >= 1` tiles over the vector cores: (tiles per
/// core, cores used).
fn spread(soc: &SocProfile, tiles: u64) -> (u64, u64) {
    let per_core = tiles.div_ceil(u64::from(soc.vector_cores.max(1)));
    (per_core, tiles.div_ceil(per_core))
}

impl Kernel for RadixSort {
    fn name(&self) -> String {
        match self.value_bytes {
            4 => format!("radix_pass_{}", self.key.tag()),
            b => format!("radix_pass_{}_v{}", self.key.tag(), 8 * b),
        }
    }
    fn kernel_type(&self) -> KernelType {
        KernelType::MixAiv1_0
    }
    fn gm_params(&self) -> &'static [&'static str] {
        &["keys_in", "idx_in", "keys_out", "idx_out", "workspace"]
    }
    fn tiling_type(&self) -> crate::TilingType {
        crate::TilingType::of::<RadixTiling>()
    }
    fn render(&self) -> Result<String, askama::Error> {
        render_entry(
            self,
            "radix_kernel.h",
            &format!(
                "RadixSort (docs/algorithms.md, RadixSort): one pass, {} keys with {}-byte values, tiles of {}.",
                self.key,
                self.value_bytes,
                self.tile()
            ),
            &format!(
                "RadixSortPass<{}, {}, {}>",
                self.key.cpp(),
                self.tile(),
                if self.value_bytes == 4 { "int32_t" } else { "int16_t" }
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_every_row_and_passes_cover_the_key() {
        let soc = soc::Soc::Ascend910B4.profile();
        let k = RadixSort::new(DType::F16).unwrap();
        assert_eq!(k.passes(1), 16);
        assert_eq!(k.passes(4), 4);
        assert_eq!(RadixSort::new(DType::U8).unwrap().passes(4), 2);
        let opts = |descending, make_indices, indices_only| RadixSortOptions {
            descending,
            make_indices,
            indices_only,
        };
        for (rows, n) in [(1, 1), (1, 4097), (3, 5000), (1000, 7), (1, 1 << 22)] {
            let p = k
                .plan(&soc, rows, n, 4, 3, opts(true, true, false))
                .unwrap();
            let t = p.tiling;
            let tiles = rows * t.tiles_per_row;
            assert!(t.tiles_per_row * k.tile() >= n);
            assert!(u64::from(p.block_dim) * t.per_core >= tiles);
            assert!(u64::from(p.block_dim - 1) * t.per_core < tiles);
            assert!(p.block_dim <= soc.vector_cores);
            assert_eq!(
                (t.shift, t.first_pass, t.descending, t.store_keys),
                (12, 0, 1, 1)
            );
            assert!(p.workspace_bytes >= t.row_totals_offset + rows * 64);
        }
        let first = |make| {
            k.plan(&soc, 1, 5, 1, 0, opts(false, make, true))
                .unwrap()
                .tiling
        };
        assert_eq!((first(true).first_pass, first(false).first_pass), (1, 0));
        // An argsort leaves the keys out of its last pass only.
        let stores = |pass| {
            k.plan(&soc, 1, 5, 4, pass, opts(false, true, true))
                .unwrap()
                .tiling
                .store_keys
        };
        assert_eq!((stores(0), stores(2), stores(3)), (1, 1, 0));
        let bad = opts(false, true, false);
        assert!(k.plan(&soc, 1, 5, 4, 4, bad).is_err());
        assert!(k.plan(&soc, 1, 5, 2, 0, bad).is_err());
        assert!(k.plan(&soc, 1, 0, 4, 0, bad).is_err());
        assert!(k.plan(&soc, 1, MAX_SORT_LEN + 1, 4, 0, bad).is_err());
        let wide = RadixSort::new(DType::F32).unwrap();
        assert_eq!((wide.passes(4), wide.passes(1), wide.tile()), (8, 32, 2048));
        // 2-byte values: their own kernel, which never makes indices.
        let v16 = RadixSort::with_values(DType::F16, 2).unwrap();
        assert_eq!(v16.name(), "radix_pass_f16_v16");
        assert!(v16
            .plan(&soc, 1, 5, 4, 0, opts(false, true, false))
            .is_err());
        assert!(v16
            .plan(&soc, 1, 5, 4, 0, opts(false, false, false))
            .is_ok());
        assert!(RadixSort::with_values(DType::F16, 8).is_err());
        // Rows that fit a tile: whole rows to a tile, at most 16.
        let make = opts(true, true, false);
        for (rows, n, per_tile) in [(96, 1000, 4), (4096, 256, 16), (5, 1, 16), (3, 4096, 1)] {
            let p = k.plan_rows(&soc, rows, n, make).unwrap();
            let t = p.tiling;
            assert_eq!(
                (t.rows_per_tile, t.digit_bits, t.first_pass),
                (per_tile, 4, 1)
            );
            let tiles = rows.div_ceil(per_tile);
            assert!(u64::from(p.block_dim) * t.per_core >= tiles);
            assert!(u64::from(p.block_dim - 1) * t.per_core < tiles);
            assert!(t.scratch_vals_offset >= u64::from(p.block_dim) * 4096 * 2);
            assert!(p.workspace_bytes >= t.scratch_vals_offset + u64::from(p.block_dim) * 4096 * 4);
        }
        assert_eq!(
            wide.plan_rows(&soc, 7, 300, make)
                .unwrap()
                .tiling
                .rows_per_tile,
            6
        );
        // Not for rows past a tile, given values, or 2-byte values.
        assert!(k.plan_rows(&soc, 1, 4097, make).is_err());
        assert!(k
            .plan_rows(&soc, 1, 100, opts(false, false, false))
            .is_err());
        assert!(v16.plan_rows(&soc, 1, 100, make).is_err());
        // Short rows of 16-bit keys: the sorting network, rows padded to a
        // power of two, a power of two of them (at least 8) to a tile of at
        // most 4096 lanes: big tiles for big batches, small ones to spread
        // a short batch over the cores (40 vector cores).
        assert_eq!(soc.vector_cores, 40);
        for (rows, n, per_tile, bits) in [
            (4096, 256, 16, 8),
            (96, 256, 8, 8),
            (16384, 64, 64, 6),
            (4096, 512, 8, 9),
            (3, 5, 8, 3),
            (5000, 1, 128, 0),
        ] {
            let t = k.plan_network(&soc, rows, n, make).unwrap().tiling;
            assert_eq!(
                (t.network, t.rows_per_tile, t.row_bits, t.store_keys),
                (1, per_tile, bits, 1)
            );
        }
        assert!(k.plan_network(&soc, 1, NETWORK_MAX_ROW + 1, make).is_err());
        assert!(RadixSort::new(DType::U8)
            .unwrap()
            .plan_network(&soc, 1, 5, make)
            .is_err());
        assert!(wide.plan_network(&soc, 1, 5, make).is_err());
        assert!(v16.plan_network(&soc, 1, 5, make).is_err());
        assert_eq!(
            k.plan_network(&soc, 1, 5, opts(false, true, true))
                .unwrap()
                .tiling
                .store_keys,
            0
        );
        assert_eq!(
            wide.plan(&soc, 1, 4097, 4, 7, opts(false, true, false))
                .unwrap()
                .tiling
                .tiles_per_row,
            3
        );
    }
}
