//! Host-side CSR test matrices for [`spmv`](crate::spmv), shared by the
//! tests and the bench: blocked sparse-attention patterns and random
//! power-law row lengths, all seeded and deterministic (xorshift64*, no
//! dependency), plus an f64 reference product.
//!
//! ```
//! use ascend_scan::matrices::{sparse_attention, AttentionPattern};
//!
//! let a = sparse_attention(AttentionPattern { rows: 64, block: 4, random_blocks: 2, seed: 1 });
//! assert_eq!(a.row_ptr.len(), 65);
//! let y = a.reference_spmv(&vec![1.0; 64]);
//! assert_eq!(y.len(), 64);
//! ```

/// A CSR matrix on the host, values as f32 (converted on upload).
#[derive(Debug, Clone, PartialEq)]
pub struct HostCsr {
    /// (m, n).
    pub shape: (usize, usize),
    /// m + 1 row offsets into `col_indices` and `values`.
    pub row_ptr: Vec<i32>,
    /// Column of every nonzero, row by row.
    pub col_indices: Vec<i32>,
    /// Value of every nonzero.
    pub values: Vec<f32>,
}

impl HostCsr {
    /// Builds the CSR arrays from the column lists of the rows, with values
    /// drawn uniformly from [-1, 1) (multiples of 2^-10, exact in f16).
    pub fn from_rows(n: usize, rows: &[Vec<i32>], rng: &mut Rng) -> HostCsr {
        let mut row_ptr = Vec::with_capacity(rows.len() + 1);
        row_ptr.push(0i32);
        let mut col_indices = Vec::new();
        for r in rows {
            col_indices.extend_from_slice(r);
            row_ptr.push(i32::try_from(col_indices.len()).expect("nnz fits i32"));
        }
        let values = (0..col_indices.len()).map(|_| rng.unit()).collect();
        HostCsr {
            shape: (rows.len(), n),
            row_ptr,
            col_indices,
            values,
        }
    }

    /// Number of nonzeros.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// `A x` in f64 (the exact products of the f32 values, summed in f64
    /// row by row).
    pub fn reference_spmv(&self, x: &[f64]) -> Vec<f64> {
        self.row_ptr
            .windows(2)
            .map(|w| {
                (w[0] as usize..w[1] as usize)
                    .map(|j| f64::from(self.values[j]) * x[self.col_indices[j] as usize])
                    .sum()
            })
            .collect()
    }

    /// Per row r, the documented error bound of [`spmv`](crate::spmv):
    /// `(2d + 2 e_r / d + 7) * 2^-24 * S_r` with d the error depth of the
    /// f32 scan it runs ([`Algorithm::error_depth`](crate::Algorithm::error_depth)),
    /// e_r = row_ptr[r+1] - 1 and S_r = [`HostCsr::prefix_magnitudes`]
    /// (0 for a row without nonzeros up to its end: y must be exactly 0).
    pub fn spmv_error_bounds(&self, x: &[f64]) -> Vec<f64> {
        let d = crate::ops::scan::Algorithm::auto_for::<f32>(1, self.nnz().max(1))
            .error_depth()
            .map_or(f64::INFINITY, f64::from);
        self.prefix_magnitudes(x)
            .iter()
            .zip(self.row_ptr.windows(2))
            .map(|(s, w)| {
                let end = f64::from(w[1] - 1).max(0.0);
                (2.0 * d + 2.0 * end / d + 7.0) * 2f64.powi(-24) * s
            })
            .collect()
    }

    /// Per row r, the sum of `|value * x[col]|` over all nonzeros up to the
    /// end of row r (earlier rows included): the magnitude the SpMV error
    /// bound is relative to.
    pub fn prefix_magnitudes(&self, x: &[f64]) -> Vec<f64> {
        let mut acc = 0.0;
        self.row_ptr
            .windows(2)
            .map(|w| {
                for j in w[0] as usize..w[1] as usize {
                    acc += (f64::from(self.values[j]) * x[self.col_indices[j] as usize]).abs();
                }
                acc
            })
            .collect()
    }
}

/// The seeded generator of the matrices (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `0..n` (n >= 1; modulo bias below 2^-32 for n < 2^32).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// Uniform in [-1, 1), a multiple of 2^-10 (exact in f16).
    pub fn unit(&mut self) -> f32 {
        (self.below(2048) as f32 - 1024.0) / 1024.0
    }
    /// Uniform in (0, 1].
    pub fn open01(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// A blocked sparse-attention pattern (square, `rows` x `rows`): the
/// matrix is cut into `block` x `block` blocks; block-row I holds the two
/// global blocks (block-columns 0 and 1, every row), the three window
/// blocks (I - 1, I, I + 1) and `random_blocks` further block-columns drawn
/// uniformly without repetition from the others (fewer when too few are
/// left). Every row of a block-row has all columns of its blocks, sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionPattern {
    /// Rows (and columns); need not be a multiple of `block`.
    pub rows: usize,
    /// Block edge b (the bench uses 2, 4, 16, 64).
    pub block: usize,
    /// Random blocks r per block-row (the bench uses 2, 4, 8).
    pub random_blocks: usize,
    /// Seed of the random blocks and the values.
    pub seed: u64,
}

impl AttentionPattern {
    /// The default size: 65536 rows.
    pub const DEFAULT_ROWS: usize = 65536;
}

/// The sparse-attention matrix of `p`, values uniform in [-1, 1).
pub fn sparse_attention(p: AttentionPattern) -> HostCsr {
    assert!(p.block >= 1, "block edge must be at least 1");
    let mut rng = Rng::new(p.seed);
    let blocks = p.rows.div_ceil(p.block);
    let mut rows = Vec::with_capacity(p.rows);
    for i in 0..blocks {
        let mut chosen: Vec<usize> = [0, 1, i.wrapping_sub(1), i, i + 1]
            .into_iter()
            .filter(|&c| c < blocks)
            .collect();
        chosen.sort_unstable();
        chosen.dedup();
        let wanted = (chosen.len() + p.random_blocks).min(blocks);
        while chosen.len() < wanted {
            let c = rng.below(blocks as u64) as usize;
            if !chosen.contains(&c) {
                chosen.push(c);
            }
        }
        chosen.sort_unstable();
        let cols: Vec<i32> = chosen
            .iter()
            .flat_map(|&c| c * p.block..((c + 1) * p.block).min(p.rows))
            .map(|c| c as i32)
            .collect();
        for _ in i * p.block..((i + 1) * p.block).min(p.rows) {
            rows.push(cols.clone());
        }
    }
    HostCsr::from_rows(p.rows, &rows, &mut rng)
}

/// Random rows with power-law (Zipf-like) lengths: each row is empty with
/// probability 1/8, else has `min(n, floor(u^(-1/alpha)))` nonzeros for u
/// uniform in (0, 1] (P(len >= k) ~ k^-alpha; alpha = 1.2 gives a mean
/// near 6 and rows as long as n), at uniform random columns (sorted,
/// repeats allowed: CSR sums them).
pub fn power_law(rows: usize, n: usize, alpha: f64, seed: u64) -> HostCsr {
    assert!(
        n >= 1 && alpha > 0.0,
        "power_law needs n >= 1 and alpha > 0"
    );
    let mut rng = Rng::new(seed);
    let lists: Vec<Vec<i32>> = (0..rows)
        .map(|_| {
            if rng.below(8) == 0 {
                return Vec::new();
            }
            let len = rng.open01().powf(-1.0 / alpha).floor().min(n as f64) as usize;
            let mut cols: Vec<i32> = (0..len).map(|_| rng.below(n as u64) as i32).collect();
            cols.sort_unstable();
            cols
        })
        .collect();
    HostCsr::from_rows(n, &lists, &mut rng)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attention_rows_hold_global_window_and_random_blocks() {
        let a = sparse_attention(AttentionPattern {
            rows: 70,
            block: 4,
            random_blocks: 2,
            seed: 3,
        });
        assert_eq!(a.shape, (70, 70));
        assert_eq!(*a.row_ptr.last().unwrap() as usize, a.nnz());
        // Block-row 5 (rows 20..24): blocks 0, 1, 4, 5, 6 and two more.
        let row = &a.col_indices[a.row_ptr[21] as usize..a.row_ptr[22] as usize];
        assert_eq!(row.len(), 7 * 4);
        for c in [0, 7, 16, 23, 24, 27] {
            assert!(row.contains(&c), "column {c} missing");
        }
        assert!(row.windows(2).all(|w| w[0] < w[1]));
        // The last block-row (rows 68, 69) is cut at 70 columns.
        let last = &a.col_indices[a.row_ptr[69] as usize..];
        assert!(last.iter().all(|&c| c < 70) && last.contains(&69));
    }

    #[test]
    fn power_law_has_empty_and_long_rows() {
        let a = power_law(4000, 1000, 1.2, 9);
        let lens: Vec<i32> = a.row_ptr.windows(2).map(|w| w[1] - w[0]).collect();
        let empty = lens.iter().filter(|&&l| l == 0).count();
        assert!((300..700).contains(&empty), "{empty} empty rows");
        assert!(*lens.iter().max().unwrap() > 100);
        assert!(a.col_indices.iter().all(|&c| (0..1000).contains(&c)));
        assert_eq!(power_law(4000, 1000, 1.2, 9), a);
    }
}
