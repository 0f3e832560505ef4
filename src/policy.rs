//! `Algorithm::Auto`: the fastest modeled algorithm of the nearest measured
//! shape, from the table `cargo xtask bench --policy` generates
//! (src/policy_table.rs).
use crate::policy_table::{CELLS, SOC};
use crate::scan::Algorithm;

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

/// The SoC profile the policy table was modeled on.
pub fn auto_policy_soc() -> &'static str {
    SOC
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
fn nearest(dtype: PolicyDType, rows: usize, n: usize) -> Option<&'static Cell> {
    CELLS
        .iter()
        .filter(|c| c.dtype == dtype && (c.rows == 1) == (rows == 1))
        .min_by(|a, b| distance(a, rows, n).total_cmp(&distance(b, rows, n)))
}

/// What `Algorithm::Auto` runs for `rows` arrays of `n` elements of `dtype`.
pub(crate) fn choose(dtype: algos::DType, rows: usize, n: usize) -> Algorithm {
    let dtype = match dtype {
        algos::DType::I8 => PolicyDType::I8,
        _ => PolicyDType::F16,
    };
    nearest(dtype, rows, n)
        .and_then(|c| c.times.first())
        .map_or(FALLBACK, |&(a, _)| a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_covers_both_dtypes_and_batches() {
        for dtype in [PolicyDType::F16, PolicyDType::I8] {
            assert!(CELLS.iter().any(|c| c.dtype == dtype && c.rows == 1));
            assert!(CELLS.iter().any(|c| c.dtype == dtype && c.rows > 1));
        }
    }

    /// Auto never picks an algorithm the table shows more than 10% slower
    /// than the fastest for a measured shape.
    #[test]
    fn auto_is_within_ten_percent_of_the_fastest_on_every_measured_shape() {
        for cell in CELLS {
            let dtype = match cell.dtype {
                PolicyDType::F16 => algos::DType::F16,
                PolicyDType::I8 => algos::DType::I8,
            };
            let picked = choose(dtype, cell.rows as usize, 1usize << cell.log2_n);
            let best = cell.times.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
            let Some(&(_, t)) = cell.times.iter().find(|(a, _)| *a == picked) else {
                panic!(
                    "{picked} is not a candidate of {:?} {} x 2^{}",
                    cell.dtype, cell.rows, cell.log2_n
                );
            };
            assert!(
                t <= 1.1 * best,
                "{:?} {} x 2^{}: Auto picks {picked} at {t:e} s, fastest {best:e} s",
                cell.dtype,
                cell.rows,
                cell.log2_n
            );
        }
    }

    #[test]
    fn candidates_are_sorted_fastest_first() {
        for cell in CELLS {
            assert!(cell.times.windows(2).all(|w| w[0].1 <= w[1].1));
        }
    }
}
