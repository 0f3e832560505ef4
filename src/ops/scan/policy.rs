//! `Algorithm::Auto`: the fastest modeled algorithm of the nearest measured
//! shape, from the table `cargo xtask bench --policy` generates
//! (`policy_table`, handed in by the caller).
use super::algorithm::Algorithm;

/// Input types of the policy table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PolicyDType {
    F16,
    I8,
}

/// One measured shape: every candidate's modeled time, fastest first.
pub(crate) struct Cell {
    pub dtype: PolicyDType,
    pub rows: u32,
    pub log2_n: u32,
    pub times: &'static [(Algorithm, f64)],
}

/// Used when the table has no entry for the input type.
const FALLBACK: Algorithm = Algorithm::ScanU { s: 128 };

/// Distance between two shapes in log2 space (rows and length weigh alike).
fn distance(cell: &Cell, rows: usize, n: usize) -> f64 {
    let lr = (rows.max(1) as f64).log2() - f64::from(cell.rows).log2();
    let ln = (n.max(1) as f64).log2() - f64::from(cell.log2_n);
    lr.abs() + ln.abs()
}

/// The nearest measured shape of `dtype` (one-row shapes for one row: a
/// batch of one is a plain scan).
fn nearest(cells: &[Cell], dtype: PolicyDType, rows: usize, n: usize) -> Option<&Cell> {
    cells
        .iter()
        .filter(|c| c.dtype == dtype && (c.rows == 1) == (rows == 1))
        .min_by(|a, b| distance(a, rows, n).total_cmp(&distance(b, rows, n)))
}

/// What `Algorithm::Auto` runs for `rows` arrays of `n` elements of `dtype`,
/// by the measurements `cells`.
pub(crate) fn choose(cells: &[Cell], dtype: algos::DType, rows: usize, n: usize) -> Algorithm {
    let dtype = match dtype {
        algos::DType::I8 => PolicyDType::I8,
        _ => PolicyDType::F16,
    };
    nearest(cells, dtype, rows, n)
        .and_then(|c| c.times.first())
        .map_or(FALLBACK, |&(a, _)| a)
}
