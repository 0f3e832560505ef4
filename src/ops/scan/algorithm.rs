//! The scan algorithms a caller can choose.

/// Which scan algorithm to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Let the library choose: the fastest algorithm of the nearest shape in
    /// the policy table that `cargo xtask bench --policy` models and commits
    /// (src/ops/scan/policy_table.rs); [`Algorithm::auto_for`] tells which.
    #[default]
    Auto,
    /// SCANU with tile edge s (16, 32, 64 or 128): one cube core computes
    /// s-wide row scans, one vector core propagates the carry.
    ScanU {
        /// Tile edge.
        s: u32,
    },
    /// MCSCAN with tile edge s (16, 32, 64 or 128), the published multi-core
    /// scan: every AI core scans its block's tiles on the cube while its
    /// vector cores sum the block; after SyncAll the vector cores add the
    /// carries. About 16 bytes of HBM traffic per f16 element.
    McScan {
        /// Tile edge.
        s: u32,
    },
    /// Reduce-then-scan with tile edge s (16, 32, 64 or 128): the vector
    /// cores sum each block, SyncAll, then the cube scans tiles into a small
    /// per-core ring in GM (L2-resident) from which the vector cores add the
    /// carries and write the result once. About 8 bytes of HBM traffic per
    /// f16 element.
    ReduceThenScan {
        /// Tile edge.
        s: u32,
    },
    /// VECCUMSUM with tile edge s (16, 32 or 64): the vector-only baseline on
    /// one vector core (transpose by Gather, row-wise adds, carry).
    VecCumSum {
        /// Tile edge.
        s: u32,
    },
    /// The vector-unit scan (OPSCAN) on every vector core: the only sum for
    /// f32 input (the cube scans take f16, bf16 and i8), and the algorithm
    /// of max and min scans.
    VectorScan,
    /// SCANUL1 with tile edge s: the cube computes each whole s*s-tile scan
    /// (`A @ U + L- @ (A @ 1)`, the `L-` step with f32 operands so row sums
    /// past 2048 stay accurate); the vector core adds one carry per tile.
    ScanUL1 {
        /// Tile edge.
        s: u32,
    },
}

impl Algorithm {
    /// The constant d of the algorithm's f32 error bound for float inputs:
    /// element i of a row (inclusive) is within (d + i/d + 2) * 2^-24 *
    /// sum_{j<=i} |x_j| of the exact prefix sum (d bounds the depth of the
    /// addition tree inside a tile, i/d the carries between tiles). `None`
    /// for `Auto` (resolve it with [`Algorithm::auto_for`] first).
    ///
    /// Exclusive scans: element i is the exact sum of `x[..i]` within the
    /// same expression with the magnitude `sum_{j<i} |x_j|` (no algorithm
    /// subtracts `x[i]` from an inclusive value).
    pub fn error_depth(self) -> Option<u32> {
        match self {
            Algorithm::Auto => None,
            Algorithm::ScanUL1 { s } => Some(2 * s),
            Algorithm::VectorScan => Some(256),
            a => a.tile_edge(),
        }
    }

    /// The tile edge s, `None` for `Auto`.
    pub fn tile_edge(self) -> Option<u32> {
        match self {
            Algorithm::Auto | Algorithm::VectorScan => None,
            Algorithm::ScanU { s }
            | Algorithm::McScan { s }
            | Algorithm::ReduceThenScan { s }
            | Algorithm::VecCumSum { s }
            | Algorithm::ScanUL1 { s } => Some(s),
        }
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            Algorithm::Auto => return f.write_str("Auto"),
            Algorithm::VectorScan => return f.write_str("VECTORSCAN"),
            Algorithm::ScanU { .. } => "SCANU",
            Algorithm::McScan { .. } => "MCSCAN",
            Algorithm::ReduceThenScan { .. } => "RTSCAN",
            Algorithm::VecCumSum { .. } => "VECCUMSUM",
            Algorithm::ScanUL1 { .. } => "SCANUL1",
        };
        match self.tile_edge() {
            Some(s) => write!(f, "{name} s={s}"),
            None => f.write_str(name),
        }
    }
}
