//! CSR SpMV against an f64 CPU reference, within the documented bound
//! `(2d + 2 e_r / d + 7) * 2^-24 * S_r` (S_r: the sum of |products| up to
//! the end of row r, d: the f32 scan's error depth; computed by
//! `HostCsr::spmv_error_bounds`), empty rows exactly 0;
//! shapes at the edges, x beyond one core's UB, the generator families, a
//! proptest of random small matrices, and every validation error.
use ascend_scan::matrices::{power_law, sparse_attention, AttentionPattern, HostCsr, Rng};
use ascend_scan::{spmv, spmv_axpby, Csr, Device, Error, Soc, SpmvValue};
use half::{bf16, f16};
use proptest::prelude::*;
use testkit::device;

/// x of n entries uniform in [-1, 1) (multiples of 2^-10: exact in f16).
fn vector(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.unit()).collect()
}

/// Runs spmv with value type T and checks every row against the f64
/// reference within the documented bound (so empty rows, and rows whose
/// prefix magnitude is 0, must be exactly 0).
fn check<T: SpmvValue>(a: &HostCsr, x: &[f32]) {
    let y = run::<T>(a, x);
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let want = a.reference_spmv(&x64);
    let bounds = a.spmv_error_bounds(&x64);
    assert_eq!(y.len(), a.shape.0);
    for r in 0..y.len() {
        let bound = bounds[r];
        let err = (f64::from(y[r]) - want[r]).abs();
        assert!(
            err <= bound,
            "row {r}: got {}, want {}, error {err:e} > bound {bound:e}",
            y[r],
            want[r]
        );
        if a.row_ptr[r] == a.row_ptr[r + 1] {
            assert_eq!(y[r].to_bits(), 0, "empty row {r} is not +0.0");
        }
    }
}

/// y = A x on the device with value type T.
fn run<T: SpmvValue>(a: &HostCsr, x: &[f32]) -> Vec<f32> {
    let dev = device();
    let csr = Csr::<T>::upload(&dev, a).unwrap();
    let xs: Vec<T> = x.iter().map(|&v| T::from_f32(v)).collect();
    spmv(&dev, &csr, &dev.upload(&xs).unwrap())
        .unwrap()
        .download()
        .unwrap()
}

/// Every value type: f32 and f16 on `a` and `x` as they are (exact in
/// f16), bf16 on both rounded to bf16 (the reference then sees exactly
/// what the device multiplies).
fn check_both(a: &HostCsr, x: &[f32]) {
    check::<f32>(a, x);
    check::<f16>(a, x);
    let round = |v: &f32| bf16::from_f32(*v).to_f32();
    let a16 = HostCsr {
        values: a.values.iter().map(round).collect(),
        ..a.clone()
    };
    check::<bf16>(&a16, &x.iter().map(round).collect::<Vec<f32>>());
}

/// A CSR matrix from row lengths, columns uniform in [0, n).
fn with_lengths(n: usize, lens: &[usize], seed: u64) -> HostCsr {
    let mut rng = Rng::new(seed);
    let rows: Vec<Vec<i32>> = lens
        .iter()
        .map(|&l| (0..l).map(|_| rng.below(n as u64) as i32).collect())
        .collect();
    HostCsr::from_rows(n, &rows, &mut rng)
}

#[test]
fn empty_rows_leading_trailing_and_in_runs() {
    let mut lens = vec![0; 5];
    lens.extend([3, 0, 0, 1, 7, 0, 0, 0, 0, 2, 0, 40, 0]);
    lens.extend((0..300).map(|i| if i % 7 < 4 { 0 } else { i % 11 }));
    lens.extend([0; 9]);
    let a = with_lengths(50, &lens, 1);
    check_both(&a, &vector(50, 2));
}

#[test]
fn single_dense_row() {
    let a = with_lengths(9000, &[9000], 3);
    check_both(&a, &vector(9000, 4));
    let b = with_lengths(5000, &[0, 5000, 0], 5);
    check_both(&b, &vector(5000, 6));
}

#[test]
fn one_by_one() {
    let a = HostCsr {
        shape: (1, 1),
        row_ptr: vec![0, 1],
        col_indices: vec![0],
        values: vec![-0.75],
    };
    let dev = device();
    for (xv, want) in [(2.0f32, -1.5f32), (0.5, -0.375)] {
        let y = spmv(
            &dev,
            &Csr::<f32>::upload(&dev, &a).unwrap(),
            &dev.upload(&[xv]).unwrap(),
        )
        .unwrap();
        assert_eq!(y.download().unwrap(), vec![want]);
    }
    check_both(&a, &[3.0]);
}

#[test]
fn zero_rows() {
    let dev = device();
    for n in [0usize, 5] {
        let a = HostCsr {
            shape: (0, n),
            row_ptr: vec![0],
            col_indices: vec![],
            values: vec![],
        };
        let csr = Csr::<f32>::upload(&dev, &a).unwrap();
        let y = spmv(&dev, &csr, &dev.upload(&vector(n, 1)).unwrap()).unwrap();
        assert!(y.is_empty());
    }
}

#[test]
fn no_nonzeros_gives_zeros() {
    let a = with_lengths(3, &[0; 7], 1);
    assert_eq!(a.nnz(), 0);
    check_both(&a, &vector(3, 1));
    // n = 0 columns as well.
    let b = with_lengths(1, &[0; 4], 1);
    let b = HostCsr { shape: (4, 0), ..b };
    let dev = device();
    let y = spmv(
        &dev,
        &Csr::<f32>::upload(&dev, &b).unwrap(),
        &dev.upload::<f32>(&[]).unwrap(),
    )
    .unwrap();
    assert_eq!(y.download().unwrap(), vec![0.0; 4]);
}

/// Rows much longer than a chunk (4096 nonzeros) and than a core's share,
/// short rows straddling chunk ends, and more rows than one core's share
/// of the rows kernel (4032 rows per chunk).
#[test]
fn rows_crossing_chunk_and_core_boundaries() {
    let mut lens = vec![4095, 1, 4097, 0, 12_000, 3];
    lens.extend((0..20_000).map(|i| (i * 7) % 23));
    lens.push(70_000);
    let a = with_lengths(3000, &lens, 7);
    check_both(&a, &vector(3000, 8));
}

/// `rows` rows of up to `max_len` nonzeros at columns anywhere in [0, n),
/// so every chunk gathers x through several windows.
fn check_long_x(n: usize, rows: usize, max_len: usize, seed: u64) {
    let lens: Vec<usize> = (0..rows).map(|i| (i * 31) % max_len).collect();
    let a = with_lengths(n, &lens, seed);
    check_both(&a, &vector(n, seed + 1));
}

/// x beyond one core's UB (the published kernel's ~70K limit).
#[test]
fn x_longer_than_70k() {
    check_long_x(100_003, 3000, 97, 9);
}

#[test]
fn x_longer_than_1m() {
    check_long_x(1_300_000, 600, 200, 11);
}

#[test]
fn sparse_attention_set_small() {
    for block in [2, 4, 16, 64] {
        for random_blocks in [2, 4, 8] {
            let a = sparse_attention(AttentionPattern {
                rows: 1000,
                block,
                random_blocks,
                seed: (block * 10 + random_blocks) as u64,
            });
            check::<f32>(&a, &vector(1000, block as u64));
        }
    }
    let a = sparse_attention(AttentionPattern {
        rows: 4100,
        block: 16,
        random_blocks: 4,
        seed: 5,
    });
    check::<f16>(&a, &vector(4100, 5));
}

#[test]
fn power_law_rows() {
    let a = power_law(20_000, 90_000, 1.2, 13);
    check_both(&a, &vector(90_000, 14));
}

/// The bound is relative to the prefix magnitude: a row of small products
/// after a row of huge ones loses digits to cancellation, yet stays within
/// the bound (which the check derives from S_r, not from |y[r]|).
#[test]
fn error_is_relative_to_the_prefix() {
    let a = HostCsr {
        shape: (2, 4),
        row_ptr: vec![0, 2, 4],
        col_indices: vec![0, 1, 2, 3],
        values: vec![1.0, 1.0, 1.0, 1.0],
    };
    let x = [16_777_216.0, 1.0, 0.75, 0.5];
    check::<f32>(&a, &x);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random small CSR matrices (empty rows, repeated columns) with f32
    /// or f16 values.
    #[test]
    fn random_small_csr(
        lens in prop::collection::vec(prop_oneof![Just(0usize), 0usize..40], 0..60),
        n in 1usize..300,
        seed: u64,
        half: bool,
    ) {
        let a = with_lengths(n, &lens, seed);
        let x = vector(n, seed ^ 1);
        if half { check::<f16>(&a, &x) } else { check::<f32>(&a, &x) }
    }
}

// ---- validation: every error names its argument -------------------------

fn upload_raw(
    dev: &Device,
    values: &[f32],
    cols: &[i32],
    row_ptr: &[i32],
    shape: (usize, usize),
) -> Result<Csr<f32>, Error> {
    Csr::new(
        dev.upload(values)?,
        dev.upload(cols)?,
        dev.upload(row_ptr)?,
        shape,
    )
}

fn name_of(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { name, reason } => (name, reason),
        e => panic!("unexpected error {e}"),
    }
}

/// spmv of the matrix with x = ones: the error's argument and reason.
fn spmv_error(
    values: &[f32],
    cols: &[i32],
    row_ptr: &[i32],
    shape: (usize, usize),
) -> (&'static str, String) {
    let dev = device();
    let a = upload_raw(&dev, values, cols, row_ptr, shape).unwrap();
    let x = dev.upload(&vec![1.0f32; shape.1]).unwrap();
    name_of(spmv(&dev, &a, &x).unwrap_err())
}

#[test]
fn construction_errors_name_the_argument() {
    let dev = device();
    let e = |r: Result<Csr<f32>, Error>| name_of(r.unwrap_err()).0;
    assert_eq!(
        e(upload_raw(&dev, &[1.0], &[0], &[0, 1, 1], (1, 2))),
        "row_ptr"
    );
    assert_eq!(e(upload_raw(&dev, &[1.0], &[0], &[0], (1, 2))), "row_ptr");
    assert_eq!(
        e(upload_raw(&dev, &[1.0, 2.0], &[0], &[0, 2], (1, 2))),
        "col_indices"
    );
    assert_eq!(
        e(upload_raw(
            &dev,
            &[1.0],
            &[0],
            &[0, 1],
            (i32::MAX as usize, 2)
        )),
        "shape"
    );
    assert_eq!(
        e(upload_raw(
            &dev,
            &[1.0],
            &[0],
            &[0, 1],
            (1, i32::MAX as usize + 1)
        )),
        "shape"
    );
    let other = Device::simulated(Soc::default()).unwrap();
    let r = Csr::new(
        dev.upload(&[1.0f32]).unwrap(),
        other.upload(&[0]).unwrap(),
        dev.upload(&[0, 1]).unwrap(),
        (1, 1),
    );
    assert_eq!(e(r), "col_indices");
}

#[test]
fn x_errors_name_x() {
    let dev = device();
    let a = upload_raw(&dev, &[1.0], &[0], &[0, 1], (1, 3)).unwrap();
    let (name, reason) = name_of(spmv(&dev, &a, &dev.upload(&[1.0f32; 2]).unwrap()).unwrap_err());
    assert_eq!(name, "x");
    assert!(reason.contains("3 columns"), "{reason}");
    let other = Device::simulated(Soc::default()).unwrap();
    let x = other.upload(&[1.0f32; 3]).unwrap();
    assert_eq!(name_of(spmv(&dev, &a, &x).unwrap_err()).0, "x");
}

#[test]
fn row_ptr_errors_name_the_first_bad_entry() {
    // Does not start at 0.
    let (name, reason) = spmv_error(&[1.0; 3], &[0; 3], &[1, 2, 3], (2, 2));
    assert_eq!(name, "row_ptr");
    assert!(reason.contains("row_ptr[0] = 1"), "{reason}");
    // Does not end at nnz.
    let (name, reason) = spmv_error(&[1.0; 3], &[0; 3], &[0, 2, 2], (2, 2));
    assert_eq!(name, "row_ptr");
    assert!(
        reason.contains("row_ptr[2] = 2") && reason.contains("nnz = 3"),
        "{reason}"
    );
    // Decreasing, first at entry 3 (another at 5); checked on the device.
    let (name, reason) = spmv_error(&[1.0; 4], &[0; 4], &[0, 2, 3, 1, 4, 2, 4], (6, 2));
    assert_eq!(name, "row_ptr");
    assert!(reason.contains("row_ptr[3] < row_ptr[2]"), "{reason}");
    // Decreasing through negative entries without nonzeros.
    let (name, reason) = spmv_error(&[], &[], &[0, -1, 0], (2, 2));
    assert_eq!(name, "row_ptr");
    assert!(reason.contains("row_ptr[1] < row_ptr[0]"), "{reason}");
    // Far apart, in another core's range: the smallest index is named.
    let m = 300_000;
    let mut rp: Vec<i32> = (0..=m as i32).collect();
    rp[250_001] = 0;
    rp[123_457] = 5;
    let (name, reason) = spmv_error(&vec![1.0; m], &vec![0; m], &rp, (m, 1));
    assert_eq!(name, "row_ptr");
    assert!(
        reason.contains("row_ptr[123457] < row_ptr[123456]"),
        "{reason}"
    );
}

#[test]
fn column_errors_name_the_first_bad_entry() {
    let (name, reason) = spmv_error(&[1.0; 4], &[0, 2, 5, -1], &[0, 2, 4], (2, 5));
    assert_eq!(name, "col_indices");
    assert!(reason.contains("col_indices[2] = 5"), "{reason}");
    let (name, reason) = spmv_error(&[1.0; 4], &[0, -1, 2, 9], &[0, 2, 4], (2, 5));
    assert_eq!(name, "col_indices");
    assert!(reason.contains("col_indices[1] = -1"), "{reason}");
    // n = 0 columns: every column is out of range.
    let (name, reason) = spmv_error(&[1.0], &[0], &[0, 1], (1, 0));
    assert_eq!(name, "col_indices");
    assert!(reason.contains("col_indices[0] = 0"), "{reason}");
    // Two bad columns far apart (different cores): the first is named.
    let nnz = 400_000;
    let mut cols = vec![3; nnz];
    cols[390_000] = i32::MIN;
    cols[200_001] = 7;
    let mut rp = vec![0, nnz as i32];
    rp.insert(1, 10);
    let (name, reason) = spmv_error(&vec![1.0; nnz], &cols, &rp, (2, 7));
    assert_eq!(name, "col_indices");
    assert!(reason.contains("col_indices[200001] = 7"), "{reason}");
}

/// Like [`check`] for inputs holding infinities or NaN (docs/algorithms.md,
/// "Non-finite inputs"): a row whose products involve one wants the IEEE
/// result of the f64 reference (NaN, or the same infinity); every other row
/// the documented bound while its prefix is finite, and after the first
/// non-finite product (where it is summed again from its own products in
/// sequential order) `(len + 2) * 2^-24 * sum |products of the row|`.
fn check_non_finite<T: SpmvValue>(a: &HostCsr, x: &[f32]) {
    let y = run::<T>(a, x);
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let want = a.reference_spmv(&x64);
    let bounds = a.spmv_error_bounds(&x64);
    for r in 0..y.len() {
        let nonzeros = a.row_ptr[r] as usize..a.row_ptr[r + 1] as usize;
        let row_abs: f64 = nonzeros
            .clone()
            .map(|j| (f64::from(a.values[j]) * x64[a.col_indices[j] as usize]).abs())
            .sum();
        let bound = if bounds[r].is_finite() {
            bounds[r]
        } else {
            (nonzeros.len() as f64 + 2.0) * 2f64.powi(-24) * row_abs
        };
        let (got, want) = (f64::from(y[r]), want[r]);
        assert!(
            testkit::check::agree(got, want, bound),
            "row {r}: got {got}, want {want} (bound {bound:e})"
        );
    }
}

/// The rows whose products involve an infinity or NaN (in x or in the
/// matrix) get the IEEE result; no other row changes.
#[test]
fn non_finite_values_reach_only_their_rows() {
    // 2 x 2 identity, x = [inf, 1].
    let mut rng = Rng::new(1);
    let mut eye = HostCsr::from_rows(2, &[vec![0], vec![1]], &mut rng);
    eye.values = vec![1.0, 1.0];
    check_non_finite::<f32>(&eye, &[f32::INFINITY, 1.0]);
    // A diagonal of 20000 rows (several row chunks and cores), x[0] = inf.
    let n = 20_000;
    let diag: Vec<Vec<i32>> = (0..n as i32).map(|r| vec![r]).collect();
    let a = HostCsr::from_rows(n, &diag, &mut rng);
    let mut x = vector(n, 2);
    x[0] = f32::INFINITY;
    check_non_finite::<f32>(&a, &x);
    check_non_finite::<f16>(&a, &x);
    // Rows across chunk and core boundaries; x with +inf, -inf and NaN in
    // a few columns, and non-finite matrix values in the middle.
    let mut lens = vec![4095, 1, 4097, 0, 5000, 3];
    lens.extend((0..9000).map(|i| (i * 7) % 23));
    let mut a = with_lengths(3000, &lens, 7);
    let mut x = vector(3000, 8);
    for (k, c) in [5, 700, 2999].into_iter().enumerate() {
        x[c] = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN][k];
    }
    check_non_finite::<f32>(&a, &x);
    check_non_finite::<f16>(&a, &x);
    let x = vector(3000, 9);
    let nnz = a.values.len();
    a.values[nnz / 2] = f32::NEG_INFINITY;
    a.values[nnz / 2 + 4100] = f32::NAN;
    check_non_finite::<f32>(&a, &x);
}

/// `y = alpha A x + beta y` with value type T from `y_old`, against the
/// f64 reference within spmv_axpby's bound: |alpha| times spmv's, plus
/// 2u (|alpha s| + |beta y_old|) (u = 2^-24; beta = 0 reads no y_old).
fn check_axpby<T: SpmvValue>(a: &HostCsr, x: &[f32], alpha: f32, beta: f32, y_old: &[f32]) {
    let dev = device();
    let csr = Csr::<T>::upload(&dev, a).unwrap();
    let xs: Vec<T> = x.iter().map(|&v| T::from_f32(v)).collect();
    let mut y = dev.upload(y_old).unwrap();
    spmv_axpby(&dev, alpha, &csr, &dev.upload(&xs).unwrap(), beta, &mut y).unwrap();
    let got = y.download().unwrap();
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let (sums, bounds) = (a.reference_spmv(&x64), a.spmv_error_bounds(&x64));
    let (al, be, u) = (f64::from(alpha), f64::from(beta), 2f64.powi(-24));
    assert_eq!(got.len(), a.shape.0);
    for r in 0..got.len() {
        let old = if beta == 0.0 {
            0.0
        } else {
            f64::from(y_old[r])
        };
        let want = al * sums[r] + be * old;
        let scaled = al.abs() * (sums[r].abs() + bounds[r]) + (be * old).abs();
        let bound = al.abs() * bounds[r] + 2.0 * u * scaled * (1.0 + 4.0 * u);
        let err = (f64::from(got[r]) - want).abs();
        assert!(
            err <= bound,
            "alpha {alpha}, beta {beta}, row {r}: got {}, want {want}, error {err:e} > bound {bound:e}",
            got[r]
        );
    }
}

#[test]
fn axpby_scales_the_product_and_adds_beta_y() {
    // Empty rows in runs, and 9000 rows: three row chunks, several cores.
    let mut lens = vec![0; 5];
    lens.extend([3, 0, 0, 1, 7, 0, 40, 0]);
    lens.extend((0..9000).map(|i| (i * 7919) % 6));
    let a = with_lengths(700, &lens, 11);
    let x = vector(700, 12);
    let y_old: Vec<f32> = vector(a.shape.0, 13).iter().map(|v| 4.0 * v).collect();
    for (alpha, beta) in [
        (1.0, 0.0),
        (2.5, 0.0),
        (-0.5, 1.25),
        (0.0, 3.0),
        (1.0, -1.0),
        (1e-3, 1e3),
    ] {
        check_axpby::<f32>(&a, &x, alpha, beta, &y_old);
        check_axpby::<f16>(&a, &x, alpha, beta, &y_old);
    }
    // No nonzeros: y = beta y (the sums are exactly 0).
    let empty = with_lengths(3, &[0; 7], 1);
    check_axpby::<f32>(
        &empty,
        &vector(3, 1),
        2.0,
        0.5,
        &[1.0, -2.0, 3.5, 0.0, 8.0, -0.25, 1e30],
    );
}

/// beta = 0 reads nothing of y (NaN and infinities there vanish, as in
/// PyTorch's addmv); beta != 0 propagates them to their own rows only.
#[test]
fn axpby_beta_zero_ignores_y() {
    let a = with_lengths(40, &[4, 0, 9, 1, 2, 6], 21);
    let x = vector(40, 22);
    let dev = device();
    let csr = Csr::<f32>::upload(&dev, &a).unwrap();
    let xd = dev.upload(&x).unwrap();
    let want = spmv(&dev, &csr, &xd).unwrap().download().unwrap();
    let poisoned = [
        f32::NAN,
        f32::INFINITY,
        1.0,
        f32::NEG_INFINITY,
        2.0,
        f32::NAN,
    ];
    let mut y = dev.upload(&poisoned).unwrap();
    spmv_axpby(&dev, 1.0, &csr, &xd, 0.0, &mut y).unwrap();
    assert_eq!(y.download().unwrap(), want, "alpha 1, beta 0 is spmv");
    let mut y = dev.upload(&poisoned).unwrap();
    spmv_axpby(&dev, 0.5, &csr, &xd, 1.0, &mut y).unwrap();
    let got = y.download().unwrap();
    for r in 0..got.len() {
        let expect = 0.5 * want[r] + poisoned[r];
        assert!(
            got[r] == expect || (got[r].is_nan() && expect.is_nan()),
            "row {r}: got {}, want {expect}",
            got[r]
        );
    }
}

/// spmv_axpby's own argument (`y`) is named; the matrix's and x's errors
/// are those of spmv.
#[test]
fn axpby_errors_name_the_argument() {
    let dev = device();
    let a = Csr::<f32>::upload(&dev, &with_lengths(4, &[1, 2, 0], 1)).unwrap();
    let x = dev.upload(&[1.0f32; 4]).unwrap();
    let mut short = dev.upload(&[0.0f32; 2]).unwrap();
    let (name, reason) = name_of(spmv_axpby(&dev, 1.0, &a, &x, 1.0, &mut short).unwrap_err());
    assert_eq!(name, "y", "{reason}");
    let mut y = dev.upload(&[0.0f32; 3]).unwrap();
    let short_x = dev.upload(&[1.0f32; 3]).unwrap();
    assert_eq!(
        name_of(spmv_axpby(&dev, 1.0, &a, &short_x, 1.0, &mut y).unwrap_err()).0,
        "x"
    );
    let other = Device::simulated(Soc::default()).unwrap();
    let mut y_other = other.upload(&[0.0f32; 3]).unwrap();
    assert_eq!(
        name_of(spmv_axpby(&dev, 1.0, &a, &x, 1.0, &mut y_other).unwrap_err()).0,
        "y"
    );
}
