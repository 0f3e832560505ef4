//! CSR sparse matrix-vector product (SPMV) as a scan.
use super::scan::{scan_on, scan_workspace_bytes, ScanOptions};
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::matrices::HostCsr;
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Uses, Workspace};

/// Value types of [`Csr`] and [`spmv`]: f16, bf16 and f32 (x has the same
/// type; the products and y are f32).
pub trait SpmvValue: Element {
    /// The value from an f32 (rounded to nearest for f16 and bf16).
    fn from_f32(v: f32) -> Self;
}
impl SpmvValue for half::f16 {
    fn from_f32(v: f32) -> Self {
        half::f16::from_f32(v)
    }
}
impl SpmvValue for half::bf16 {
    fn from_f32(v: f32) -> Self {
        half::bf16::from_f32(v)
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
    /// The check of `row_ptr[0]` and `row_ptr[m]`, made on first use (the
    /// buffers cannot change behind a `Csr`).
    ends: std::sync::OnceLock<Result<()>>,
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
            ends: std::sync::OnceLock::new(),
        })
    }

    /// `row_ptr[0] == 0` and `row_ptr[m] == nnz`, read from the device once
    /// (two entries) and remembered.
    fn check_ends(&self) -> Result<()> {
        self.ends
            .get_or_init(|| {
                let m = self.shape.0;
                let ends = [
                    self.row_ptr.download_range(0, 1)?[0],
                    self.row_ptr.download_range(m, 1)?[0],
                ];
                if ends[0] != 0 {
                    return Err(invalid(
                        "row_ptr",
                        format!("row_ptr[0] = {}: must be 0", ends[0]),
                    ));
                }
                if ends[1] as i64 != self.nnz() as i64 {
                    return Err(invalid(
                        "row_ptr",
                        format!("row_ptr[{m}] = {}: must be nnz = {}", ends[1], self.nnz()),
                    ));
                }
                Ok(())
            })
            .clone()
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

/// `y = A x` for a CSR matrix `a` (m x n) and `x` (n entries of the value
/// type): y has m entries, **f32** (products of f16 and bf16 values are formed
/// exactly in f32).
///
/// The product is a scan (docs/algorithms.md,
/// section "SpMV (CSR, y = A x)"): `z[i] = val[i] *
/// x[col[i]]` (one launch on every vector core; x is read from GM through
/// 64 KiB UB windows covering each chunk's column range, so x may be far
/// longer than the Unified Buffer), `zs` = the inclusive f32 [`scan`](crate::scan) of z
/// (VECTORSCAN), then `y[r] = zs[row_ptr[r+1]-1] - zs[row_ptr[r]-1]`
/// (a term with index -1 is 0; one more launch, gathering from zs through
/// the same windows). Empty rows, leading, trailing or in runs, are exactly
/// 0 (both terms are the same element). A matrix without rows needs no
/// launch; one without nonzeros gives zeros.
///
/// Numerics: with u = 2^-24, d = [`Algorithm::error_depth`] of the f32
/// scan (256 for VECTORSCAN), e_r = row_ptr[r+1] - 1 and S_r = the sum of
/// `|val_j * x[col_j]|` over all nonzeros j <= e_r (all earlier rows
/// included), `|y[r] - exact| <= (2d + 2 e_r / d + 7) * u * S_r`. The error
/// is relative to the magnitude of the whole prefix up to the row's end,
/// not to `|y[r]|`: `y[r]` is the difference of two prefix sums, so a short
/// row after many large products can lose all its digits (cancellation).
/// (Each prefix carries the scan's bound `(d + e_r/d + 2) u S_r`; the f32
/// products add u per product for f32 values, nothing for f16 and bf16; the
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
    // y = 1 A x + 0 y: y is not read, so it starts uninitialised.
    let mut y = device.alloc_uninit::<f32>(a.shape.0)?;
    let Scale { alpha, beta } = Scale::NONE;
    spmv_axpby(device, alpha, a, x, beta, &mut y)?;
    Ok(y)
}

/// `y = alpha A x + beta y`, in place ("axpby": alpha times A x plus beta
/// times y, the form of BLAS and cuSPARSE SpMV and of PyTorch's `addmv`):
/// y (f32, m entries) holds the old values on entry and the result on
/// return. The product is that of [`spmv`], with the same numerics and
/// checks; each row's sum s then becomes `alpha * s + beta * y[r]` in
/// fp32 (the two products and their sum rounded once each, so a row adds
/// at most `2u (|alpha s| + |beta y[r]|)` to `|alpha|` times the bound of
/// [`spmv`], u = 2^-24).
///
/// As in PyTorch's `addmv`, `beta = 0` ignores y's old values (they are not
/// read: NaN and infinities there do not propagate), while `alpha = 0`
/// still multiplies the sums (a non-finite sum gives NaN). With
/// `alpha = 1` and `beta = 0` this is [`spmv`] writing into `y`.
///
/// Errors ([`Error::InvalidArgument`], naming the argument): those of
/// [`spmv`], and `y` whose length is not m or that lives on another
/// device. After a device-side error (a decreasing `row_ptr`, a column out
/// of range) y is unspecified.
pub fn spmv_axpby<T: SpmvValue>(
    device: &Device,
    alpha: f32,
    a: &Csr<T>,
    x: &DeviceBuffer<T>,
    beta: f32,
    y: &mut DeviceBuffer<f32>,
) -> Result<()> {
    if !device.same(a.values.device()) {
        return Err(invalid("a", "the matrix lives on another device".into()));
    }
    if !device.same(y.device()) {
        return Err(invalid("y", "the buffer lives on another device".into()));
    }
    let plan = SpmvPlan::new(device, a, x)?;
    check_len(y.len(), a.shape.0, "y")?;
    let mut check = SpmvCheck::new(device)?;
    let mut workspace = Workspace::new(device, plan.layout.bytes())?;
    let scale = Scale { alpha, beta };
    device.blocking(|stream| plan.enqueue(stream, a, x, scale, y, &mut check, &mut workspace))?;
    check.download(a)
}

/// What the rows kernel makes of each row's sum s: `alpha * s + beta * y`.
#[derive(Debug, Clone, Copy)]
struct Scale {
    alpha: f32,
    beta: f32,
}

impl Scale {
    /// y = A x.
    const NONE: Scale = Scale {
        alpha: 1.0,
        beta: 0.0,
    };
}

/// The launches of a product and their workspace: the products z, their
/// scan zs (a zero element when there are no nonzeros) and the scan's own
/// workspace. The two kernels write their check slots straight into the
/// [`SpmvCheck`].
struct SpmvPlan {
    products: Option<algos::LaunchPlan<algos::SpmvTiling>>,
    rows: Option<algos::LaunchPlan<algos::SpmvTiling>>,
    layout: Layout,
    z: Part,
    zs: Part,
    scan: Part,
}

impl SpmvPlan {
    /// Checks `x` against `a` and plans.
    fn new<T: SpmvValue>(device: &Device, a: &Csr<T>, x: &DeviceBuffer<T>) -> Result<SpmvPlan> {
        let n = a.shape.1;
        if !device.same(x.device()) {
            return Err(invalid("x", "the buffer lives on another device".into()));
        }
        if x.len() != n {
            return Err(invalid(
                "x",
                format!("{} entries for {n} columns: must be n", x.len()),
            ));
        }
        SpmvPlan::for_matrix(device, a)
    }

    /// Checks `a` (its row_ptr ends: once per matrix) and plans.
    fn for_matrix<T: SpmvValue>(device: &Device, a: &Csr<T>) -> Result<SpmvPlan> {
        let (m, n) = a.shape;
        let nnz = a.nnz();
        // row_ptr[0] and row_ptr[m] are checked for m = 0 too (one entry:
        // 0, and nnz must be 0).
        a.check_ends()?;
        let profile = device.profile();
        let products = (m > 0 && nnz > 0)
            .then(|| {
                algos::Spmv::new(algos::SpmvStage::Products(T::DTYPE))?
                    .plan(profile, nnz as u64, n as u64)
            })
            .transpose()?;
        // With no nonzeros the rows kernel gathers nothing (every index is
        // -1) from a one-element zero "scan".
        let rows = (m > 0)
            .then(|| {
                algos::Spmv::new(algos::SpmvStage::Rows)?.plan(profile, m as u64, nnz.max(1) as u64)
            })
            .transpose()?;
        let scan_bytes = if products.is_some() {
            scan_workspace_bytes::<f32>(device, 1, nnz, ScanOptions::default())?
        } else {
            0
        };
        let mut layout = Layout::default();
        let z = layout.add_of::<f32>(nnz);
        let zs = layout.add_of::<f32>(nnz.max(1));
        let scan = layout.add(scan_bytes);
        Ok(SpmvPlan {
            products,
            rows,
            layout,
            z,
            zs,
            scan,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn enqueue<T: SpmvValue>(
        mut self,
        stream: &Stream,
        a: &Csr<T>,
        x: &DeviceBuffer<T>,
        scale: Scale,
        y: &mut DeviceBuffer<f32>,
        check: &mut SpmvCheck,
        workspace: &mut Workspace,
    ) -> Result<()> {
        workspace.check(stream, &self.layout)?;
        let fits = |plan: &Option<algos::LaunchPlan<algos::SpmvTiling>>| {
            plan.as_ref()
                .is_none_or(|p| p.workspace_bytes as usize == check.half_bytes)
        };
        if !fits(&self.products) || !fits(&self.rows) {
            return Err(invalid("check", "made for another device profile".into()));
        }
        let (z, zs) = (workspace.at(self.z), workspace.at(self.zs));
        // The rows kernel's slots first, then the products kernel's: each
        // launch writes all of its half (WriteCheckSlots), so only the half
        // of a kernel that does not run is zeroed.
        let (rc, pc) = (
            check.slots.ptr(),
            check.slots.ptr().wrapping_byte_add(check.half_bytes),
        );
        let uses: [&dyn Uses; 7] = [
            &a.values,
            &a.col_indices,
            &a.row_ptr,
            x,
            &*y,
            &*workspace,
            &check.slots,
        ];
        stream.with_queue(&uses, |s| {
            if self.rows.is_none() {
                s.zero(rc, check.half_bytes)?;
            }
            if let Some(plan) = &mut self.products {
                let args = runtime::SpmvArgs {
                    values: a.values.ptr(),
                    indices: a.col_indices.ptr(),
                    src: x.ptr(),
                    out: z,
                    check: pc,
                };
                runtime::launch(s, plan, args)?;
            } else {
                s.zero(pc, check.half_bytes)?;
                s.zero(zs, self.zs.bytes)?;
            }
            Ok(())
        })?;
        if self.products.is_some() {
            let z_buf = workspace.buffer::<f32>(self.z);
            let mut zs_buf = workspace.buffer::<f32>(self.zs);
            let mut scan_ws = workspace.sub(self.scan);
            scan_on(
                stream,
                &z_buf,
                ScanOptions::default(),
                &mut zs_buf,
                None,
                &mut scan_ws,
            )?;
        }
        stream.with_queue(&[&*workspace, &check.slots], |s| {
            if let Some(plan) = &mut self.rows {
                plan.tiling.alpha = scale.alpha;
                plan.tiling.beta = scale.beta;
                // The rows kernel reads z again only for rows after a
                // non-finite product.
                let args = runtime::SpmvArgs {
                    values: if self.products.is_some() {
                        z
                    } else {
                        std::ptr::null_mut()
                    },
                    indices: a.row_ptr.ptr(),
                    src: zs,
                    out: y.ptr(),
                    check: rc,
                };
                runtime::launch(s, plan, args)?;
            }
            Ok(())
        })
    }
}

/// What the host checks after a [`spmv_on`]: the kernels' check slots
/// (the first decreasing `row_ptr` entry and the first column index out of
/// range each core met), written by the kernels on the device. Made once
/// per device and reused; `download` after the stream is synchronised.
#[derive(Debug)]
pub struct SpmvCheck {
    /// The rows kernel's slots, then (from `half_bytes`) the products kernel's.
    slots: DeviceBuffer<i32>,
    half_bytes: usize,
}

impl SpmvCheck {
    /// A check for products on `device`.
    pub fn new(device: &Device) -> Result<SpmvCheck> {
        // One 32-byte slot per vector core and kernel at most.
        let words = device.profile().vector_cores.max(1) as usize * 8;
        Ok(SpmvCheck {
            slots: device.alloc_zeroed(2 * words)?,
            half_bytes: words * 4,
        })
    }

    /// Downloads the check: [`Error::InvalidArgument`] naming `row_ptr` (a
    /// decreasing entry, reported first) or `col_indices` (an index outside
    /// [0, n), with its value read from `a`), as [`spmv`] reports them;
    /// with either, y is unspecified.
    pub fn download<T: SpmvValue>(&self, a: &Csr<T>) -> Result<()> {
        let slots = self.slots.download()?;
        let (rows, products) = slots.split_at(self.half_bytes / 4);
        let first_bad = |slots: &[i32]| {
            slots
                .chunks_exact(8)
                .filter(|s| s[0] > 0)
                .map(|s| s[0] as usize - 1)
                .min()
        };
        decreasing(first_bad(rows))?;
        if let Some(i) = first_bad(products) {
            let c = a.col_indices.download_range(i, 1)?[0];
            return Err(invalid(
                "col_indices",
                format!("col_indices[{i}] = {c}: must be in [0, {})", a.shape.1),
            ));
        }
        Ok(())
    }
}

/// Bytes of [`Workspace`] that [`spmv_on`] needs for `a` and an `x` of
/// its column count. Reads `row_ptr[0]` and `row_ptr[m]` the first time a
/// matrix is used (then remembers them).
pub fn spmv_workspace_bytes<T: SpmvValue>(device: &Device, a: &Csr<T>) -> Result<usize> {
    Ok(SpmvPlan::for_matrix(device, a)?.layout.bytes())
}

/// The stream-ordered [`spmv`]: enqueues `y = A x` (products, their f32
/// scan, the row differences) on `stream` and returns at once, writing y
/// into `y` (caller-owned, m entries). No allocation (the matrix's
/// `row_ptr[0]` and `row_ptr[m]` are read once, on its first use, and
/// remembered), no host synchronisation. Numerics as for [`spmv`].
///
/// `row_ptr` and `col_indices` are checked on the device: `check` receives
/// what the host needs and [`SpmvCheck::download`] (after synchronising)
/// gives the blocking form's errors. Errors now: as for [`spmv`] (`x`,
/// `row_ptr` ends), plus `y`, `check` or `workspace` of the wrong size or
/// device.
pub fn spmv_on<T: SpmvValue>(
    stream: &Stream,
    a: &Csr<T>,
    x: &DeviceBuffer<T>,
    y: &mut DeviceBuffer<f32>,
    check: &mut SpmvCheck,
    workspace: &mut Workspace,
) -> Result<()> {
    // alpha = 1 and beta = 0 (y not read) is exactly y = A x.
    let Scale { alpha, beta } = Scale::NONE;
    spmv_axpby_on(stream, alpha, a, x, beta, y, check, workspace)
}

/// The stream-ordered [`spmv_axpby`]: enqueues `y = alpha A x + beta y`
/// on `stream` (y read and written in place, m entries) and returns at
/// once; otherwise as [`spmv_on`] (the same workspace, [`SpmvCheck`] and
/// errors).
#[allow(clippy::too_many_arguments)]
pub fn spmv_axpby_on<T: SpmvValue>(
    stream: &Stream,
    alpha: f32,
    a: &Csr<T>,
    x: &DeviceBuffer<T>,
    beta: f32,
    y: &mut DeviceBuffer<f32>,
    check: &mut SpmvCheck,
    workspace: &mut Workspace,
) -> Result<()> {
    stream.check_device(&a.values, "a")?;
    stream.check_device(y, "y")?;
    stream.check_device(&check.slots, "check")?;
    let plan = SpmvPlan::new(stream.device(), a, x)?;
    check_len(y.len(), a.shape.0, "y")?;
    plan.enqueue(stream, a, x, Scale { alpha, beta }, y, check, workspace)
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
