//! CSR sparse matrix-vector product (SPMV) as a scan.
use super::scan::{scan, ScanOptions};
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::matrices::HostCsr;
use crate::runtime;

/// Value types of [`Csr`] and [`spmv`]: f16 and f32 (x has the same type;
/// the products and y are f32).
pub trait SpmvValue: Element {
    /// The value from an f32 (rounded to nearest for f16).
    fn from_f32(v: f32) -> Self;
}
impl SpmvValue for half::f16 {
    fn from_f32(v: f32) -> Self {
        half::f16::from_f32(v)
    }
}
impl SpmvValue for f32 {
    fn from_f32(v: f32) -> Self {
        v
    }
}

/// Largest dimension, nonzero count and row_ptr length of a [`Csr`]: the
/// kernels index with i32.
pub const MAX_SPMV_DIM: usize = i32::MAX as usize;

/// A sparse matrix in CSR form on a device: `values` and `col_indices`
/// (one per nonzero, row by row), `row_ptr` (m + 1 entries: row r holds
/// nonzeros `row_ptr[r] .. row_ptr[r+1]`), and the shape (m, n).
///
/// [`Csr::new`] checks what the host can see without reading the buffers
/// (lengths, the i32 limits, devices); the contents of `row_ptr` and
/// `col_indices` are checked by [`spmv`] (see there).
#[derive(Debug)]
pub struct Csr<T: SpmvValue> {
    values: DeviceBuffer<T>,
    col_indices: DeviceBuffer<i32>,
    row_ptr: DeviceBuffer<i32>,
    shape: (usize, usize),
}

fn invalid(name: &'static str, reason: String) -> Error {
    Error::InvalidArgument { name, reason }
}

impl<T: SpmvValue> Csr<T> {
    /// A CSR matrix of `shape = (m, n)` from its device buffers.
    ///
    /// Errors ([`Error::InvalidArgument`], naming the argument): `row_ptr`
    /// whose length is not m + 1; `col_indices` whose length differs from
    /// `values` (the nonzero count); m, n or the nonzero count above
    /// [`MAX_SPMV_DIM`] (`shape`, `values`); buffers on different devices.
    pub fn new(
        values: DeviceBuffer<T>,
        col_indices: DeviceBuffer<i32>,
        row_ptr: DeviceBuffer<i32>,
        shape: (usize, usize),
    ) -> Result<Csr<T>> {
        let (m, n) = shape;
        if m >= MAX_SPMV_DIM || n > MAX_SPMV_DIM {
            return Err(invalid(
                "shape",
                format!("{m} x {n}: m + 1 and n must be at most {MAX_SPMV_DIM} (i32)"),
            ));
        }
        if values.len() > MAX_SPMV_DIM {
            return Err(invalid(
                "values",
                format!("{} nonzeros: at most {MAX_SPMV_DIM} (i32)", values.len()),
            ));
        }
        if !values.device().same(col_indices.device()) {
            return Err(invalid(
                "col_indices",
                "on another device than values".into(),
            ));
        }
        if !values.device().same(row_ptr.device()) {
            return Err(invalid("row_ptr", "on another device than values".into()));
        }
        if row_ptr.len() != m + 1 {
            return Err(invalid(
                "row_ptr",
                format!(
                    "{} entries for {m} rows: must be m + 1 = {}",
                    row_ptr.len(),
                    m + 1
                ),
            ));
        }
        if col_indices.len() != values.len() {
            return Err(invalid(
                "col_indices",
                format!(
                    "{} column indices for {} values: one per nonzero",
                    col_indices.len(),
                    values.len()
                ),
            ));
        }
        Ok(Csr {
            values,
            col_indices,
            row_ptr,
            shape,
        })
    }

    /// Uploads a host CSR matrix (values converted with [`SpmvValue::from_f32`]).
    pub fn upload(device: &Device, host: &HostCsr) -> Result<Csr<T>> {
        let values: Vec<T> = host.values.iter().map(|&v| T::from_f32(v)).collect();
        Csr::new(
            device.upload(&values)?,
            device.upload(&host.col_indices)?,
            device.upload(&host.row_ptr)?,
            host.shape,
        )
    }

    /// (m, n).
    pub fn shape(&self) -> (usize, usize) {
        self.shape
    }
    /// Number of nonzeros.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// The values, one per nonzero.
    pub fn values(&self) -> &DeviceBuffer<T> {
        &self.values
    }
    /// The column index of every nonzero.
    pub fn col_indices(&self) -> &DeviceBuffer<i32> {
        &self.col_indices
    }
    /// The m + 1 row offsets.
    pub fn row_ptr(&self) -> &DeviceBuffer<i32> {
        &self.row_ptr
    }
}

/// Downloads the per-core check slots of a launch and returns the smallest
/// bad index reported (slots hold 1 + index, 0 for none).
fn first_bad(check: &DeviceBuffer<i32>) -> Result<Option<usize>> {
    Ok(check
        .download()?
        .chunks_exact(8)
        .filter(|s| s[0] > 0)
        .map(|s| s[0] as usize - 1)
        .min())
}

/// Runs one SpMV kernel over `count` entries gathering from `src_len`
/// elements, and returns the first bad index its cores reported (in the
/// check slots this allocates: `args.check` is replaced).
fn launch(
    device: &Device,
    stage: algos::SpmvStage,
    count: usize,
    src_len: usize,
    args: runtime::SpmvArgs,
) -> Result<Option<usize>> {
    let mut plan = algos::Spmv::new(stage)?.plan(device.profile(), count as u64, src_len as u64)?;
    let check = device.alloc_zeroed::<i32>((plan.workspace_bytes / 4) as usize)?;
    let args = runtime::SpmvArgs {
        check: check.ptr(),
        ..args
    };
    device.run(|stream| runtime::launch(stream, &mut plan, args))?;
    first_bad(&check)
}

/// `y = A x` for a CSR matrix `a` (m x n) and `x` (n entries of the value
/// type): y has m entries, **f32** (products of f16 values are formed
/// exactly in f32).
///
/// The product is a scan (docs/algorithms.md,
/// section "SpMV (CSR, y = A x)"): `z[i] = val[i] *
/// x[col[i]]` (one launch on every vector core; x is read from GM through
/// 64 KiB UB windows covering each chunk's column range, so x may be far
/// longer than the Unified Buffer), `zs` = the inclusive f32 [`scan`] of z
/// (VECTORSCAN), then `y[r] = zs[row_ptr[r+1]-1] - zs[row_ptr[r]-1]`
/// (a term with index -1 is 0; one more launch, gathering from zs through
/// the same windows). Empty rows, leading, trailing or in runs, are exactly
/// 0 (both terms are the same element). A matrix without rows needs no
/// launch; one without nonzeros gives zeros.
///
/// Numerics: with u = 2^-24, d = [`Algorithm::error_depth`] of the f32
/// scan (256 for VECTORSCAN), e_r = row_ptr[r+1] - 1 and S_r = the sum of
/// |val_j * x[col_j]| over all nonzeros j <= e_r (all earlier rows
/// included), `|y[r] - exact| <= (2d + 2 e_r / d + 7) * u * S_r`. The error
/// is relative to the magnitude of the whole prefix up to the row's end,
/// not to |y[r]|: y[r] is the difference of two prefix sums, so a short
/// row after many large products can lose all its digits (cancellation).
/// (Each prefix carries the scan's bound `(d + e_r/d + 2) u S_r`; the f32
/// products add u per product for f32 values, nothing for f16; the
/// subtraction one rounding of y.)
///
/// Non-finite values (inf or NaN in x or in the matrix) affect exactly the
/// rows whose products involve them, with the IEEE result of their sum
/// (docs/algorithms.md, "Non-finite inputs"). Every row after the first
/// non-finite product is summed again from its own products in sequential
/// order by the rows kernel (its prefix difference would be inf - inf): on
/// the scalar unit, so one early infinity costs time in proportion to the
/// nonzeros after it.
///
/// Validation ([`Error::InvalidArgument`], naming the argument and the
/// first bad entry): on the host, before any launch, `x` whose length is
/// not n or that lives on another device, `row_ptr[0] != 0` and
/// `row_ptr[m] != nnz` (two entries downloaded); on the device, during the
/// launches, a `row_ptr` entry smaller than the one before it (the rows
/// kernel) and a column index outside [0, n) (the products kernel): each
/// vector core writes the index of the first bad entry it met into a check
/// slot, downloaded after the launch, and the smallest is reported. A
/// decreasing row_ptr is reported before a bad column. Shape and length
/// errors come from [`Csr::new`].
///
/// [`Algorithm::error_depth`]: crate::Algorithm::error_depth
pub fn spmv<T: SpmvValue>(
    device: &Device,
    a: &Csr<T>,
    x: &DeviceBuffer<T>,
) -> Result<DeviceBuffer<f32>> {
    let (m, n) = a.shape;
    let nnz = a.nnz();
    if !device.same(a.values.device()) {
        return Err(invalid("a", "the matrix lives on another device".into()));
    }
    if !device.same(x.device()) {
        return Err(invalid("x", "the buffer lives on another device".into()));
    }
    if x.len() != n {
        return Err(invalid(
            "x",
            format!("{} entries for {n} columns: must be n", x.len()),
        ));
    }
    // row_ptr[0] and row_ptr[m] are checked for m = 0 too (one entry: 0,
    // and nnz must be 0).
    let ends = [
        a.row_ptr.download_range(0, 1)?[0],
        a.row_ptr.download_range(m, 1)?[0],
    ];
    if ends[0] != 0 {
        return Err(invalid(
            "row_ptr",
            format!("row_ptr[0] = {}: must be 0", ends[0]),
        ));
    }
    if ends[1] as i64 != nnz as i64 {
        return Err(invalid(
            "row_ptr",
            format!("row_ptr[{m}] = {}: must be nnz = {nnz}", ends[1]),
        ));
    }
    if m == 0 {
        return device.alloc_uninit::<f32>(0);
    }
    if nnz == 0 {
        // Every row is empty: the rows kernel checks row_ptr and gathers
        // nothing (every index is -1) from a one-element zero "scan".
        let zs = device.alloc_zeroed::<f32>(1)?;
        let y = device.alloc_uninit::<f32>(m)?;
        let bad = launch(
            device,
            algos::SpmvStage::Rows,
            m,
            1,
            runtime::SpmvArgs {
                values: std::ptr::null_mut(),
                indices: a.row_ptr.ptr(),
                src: zs.ptr(),
                out: y.ptr(),
                check: std::ptr::null_mut(),
            },
        )?;
        return decreasing(bad).map(|()| y);
    }
    let z = device.alloc_uninit::<f32>(nnz)?;
    let bad_col = launch(
        device,
        algos::SpmvStage::Products(T::DTYPE),
        nnz,
        n,
        runtime::SpmvArgs {
            values: a.values.ptr(),
            indices: a.col_indices.ptr(),
            src: x.ptr(),
            out: z.ptr(),
            check: std::ptr::null_mut(),
        },
    )?;
    let zs = scan(device, &z, ScanOptions::default())?.values;
    let y = device.alloc_uninit::<f32>(m)?;
    // The rows kernel reads z again only for rows after a non-finite product.
    let bad_row = launch(
        device,
        algos::SpmvStage::Rows,
        m,
        nnz,
        runtime::SpmvArgs {
            values: z.ptr(),
            indices: a.row_ptr.ptr(),
            src: zs.ptr(),
            out: y.ptr(),
            check: std::ptr::null_mut(),
        },
    )?;
    decreasing(bad_row)?;
    if let Some(i) = bad_col {
        let c = a.col_indices.download_range(i, 1)?[0];
        return Err(invalid(
            "col_indices",
            format!("col_indices[{i}] = {c}: must be in [0, {n})"),
        ));
    }
    Ok(y)
}

/// The error for the first decreasing row_ptr entry, if any.
fn decreasing(bad: Option<usize>) -> Result<()> {
    match bad {
        Some(i) => Err(invalid(
            "row_ptr",
            format!(
                "row_ptr[{i}] < row_ptr[{}]: row_ptr must not decrease",
                i - 1
            ),
        )),
        None => Ok(()),
    }
}
