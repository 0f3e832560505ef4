//! TOPP (nucleus) sampling with the Llama 3 reference semantics, batched
//! over rows.
use super::sample::{check_row_totals, multinomial_on, multinomial_workspace_bytes, uniforms};
use super::scan::{scan_on, scan_workspace_bytes, Algorithm, Batch, ScanOptions};
use super::sort::{
    sort_on, sort_workspace_bytes, topk_on, topk_workspace_bytes, SortKey, SortOptions, TopkOptions,
};
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Workspace};

/// Probability types of [`top_p_sample`]: f16 and bf16.
pub trait TopPProb:
    SortKey + super::scan::ScanInput<Acc = f32> + super::sample::SampleWeight
{
}
impl TopPProb for half::f16 {}
impl TopPProb for half::bf16 {}

/// Options of [`top_p_sample`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopPOptions {
    /// The nucleus mass, in (0, 1].
    pub p: f32,
    /// Keep only the `top_k` most probable tokens first (Llama 3 has none).
    pub top_k: Option<usize>,
    /// Seed of the draws: row r draws with the uniform
    /// [`uniform(seed, r, 0)`](crate::uniform).
    pub seed: u64,
}

impl Default for TopPOptions {
    fn default() -> Self {
        TopPOptions {
            p: 0.9,
            top_k: None,
            seed: 0,
        }
    }
}

/// One token per row of `probs` by nucleus sampling, as the Llama 3
/// reference sampler (`sample_top_p`) does it:
///
/// 1. sort each row descending, with the indices ([`sort`](crate::sort); with `top_k`,
///    the [`topk`](crate::topk) of the row instead, sorted);
/// 2. inclusive scan of the sorted row in fp32 ([`scan`](crate::scan));
/// 3. zero every entry whose `scan - prob > p` (the mass before it already
///    exceeds `p`; the first entry always stays);
/// 4. one weighted draw from the kept entries (renormalised implicitly:
///    the draw is relative to their fp32 sum), by
///    [`multinomial_with_uniforms`](crate::multinomial_with_uniforms) with
///    the uniform [`uniform(seed, row, 0)`](crate::uniform);
/// 5. the token is the index of the drawn entry in the input row.
///
/// Ties in probability keep their input order in the sort, so the result
/// is a deterministic function of (probs, p, top_k, seed). `p` is compared
/// with the raw cumulative sum, as in the reference: rows need not sum to 1.
/// Entries whose preceding mass is within fp32 rounding of `p` are kept or
/// dropped as this scan's fp32 sums say.
///
/// Errors ([`Error::InvalidArgument`]): `p` outside (0, 1] or NaN; `top_k`
/// of 0 or more than the row length; `probs` with an entry outside [0, 1]
/// (NaN included) or a row whose kept mass is 0 (all zero); rows longer
/// than [`MAX_SORT_LEN`](crate::MAX_SORT_LEN); `probs` on another device.
pub fn top_p_sample<'a, P: TopPProb>(
    device: &Device,
    probs: impl Into<Batch<'a, P>>,
    options: TopPOptions,
) -> Result<DeviceBuffer<i32>> {
    let probs = probs.into();
    if !device.same(probs.data().device()) {
        return Err(Error::InvalidArgument {
            name: "probs",
            reason: "the buffer lives on another device".into(),
        });
    }
    let rows = probs.row_count();
    let plan = TopPPlan::new::<P>(device, rows, probs.row_len(), options)?;
    let u = device.upload(&uniforms(options.seed, rows, 1))?;
    let mut tokens = device.alloc_uninit::<i32>(rows)?;
    let mut check = TopPCheck::new(device, rows)?;
    let mut workspace = Workspace::new(device, plan.layout.bytes())?;
    device.blocking(|stream| {
        top_p_sample_on(
            stream,
            probs,
            options,
            Some(&u),
            &mut tokens,
            &mut check,
            &mut workspace,
        )
    })?;
    check.download()?;
    Ok(tokens)
}

/// What the host checks after a [`top_p_sample_on`]: the count of
/// probabilities outside [0, 1] and every row's kept mass, copied on the
/// device (a few bytes per row). Made once and reused; `download` after the
/// stream is synchronised.
#[derive(Debug)]
pub struct TopPCheck {
    /// The mask kernel's per-core slots (the count of bad probabilities first).
    slots: DeviceBuffer<i32>,
    /// The kept mass of every row (the draw's total).
    kept: DeviceBuffer<f32>,
}

impl TopPCheck {
    /// A check for batches of `rows` rows on `device`.
    pub fn new(device: &Device, rows: usize) -> Result<TopPCheck> {
        // At most one 32-byte slot per vector core.
        let slot_ints = device.profile().vector_cores.max(1) as usize * 8;
        Ok(TopPCheck {
            slots: device.alloc_uninit(slot_ints)?,
            kept: device.alloc_uninit(rows)?,
        })
    }

    /// The kept (nucleus) mass of every row: the f32 sum the draw was
    /// relative to.
    pub fn kept_mass(&self) -> &DeviceBuffer<f32> {
        &self.kept
    }

    /// Downloads the check: [`Error::InvalidArgument`] naming `probs` when
    /// an entry was outside [0, 1] (NaN included) or a row kept no mass, as
    /// [`top_p_sample`] reports them.
    pub fn download(&self) -> Result<()> {
        let outside: i64 = self
            .slots
            .download()?
            .chunks_exact(8)
            .map(|s| i64::from(s[0]))
            .sum();
        if outside > 0 {
            return Err(Error::InvalidArgument {
                name: "probs",
                reason: format!("{outside} probabilities outside [0, 1] (NaN included)"),
            });
        }
        check_row_totals(&self.kept.download()?).map_err(|e| match e {
            // The kept weights are the sorted probabilities: name the input.
            Error::InvalidArgument { reason, .. } => Error::InvalidArgument {
                name: "probs",
                reason,
            },
            e => e,
        })
    }
}

/// The pieces of a top-p draw and its workspace: the sorted rows and their
/// indices, their scan, the masked weights, the drawn positions and one
/// scratch part the sort, the scan and the draw take in turn. The mask
/// kernel writes its slots straight into the caller's [`TopPCheck`].
struct TopPPlan {
    m: usize,
    layout: Layout,
    sorted: Part,
    indices: Part,
    cumulative: Part,
    weights: Part,
    pos: Part,
    /// Bytes of the mask kernel's slots (in the check, not the workspace).
    slot_bytes: usize,
    uniforms: Part,
    scratch: Part,
    mask: algos::LaunchPlan<algos::TopPTiling>,
    pick: algos::LaunchPlan<algos::TopPTiling>,
}

impl TopPPlan {
    fn new<P: TopPProb>(
        device: &Device,
        rows: usize,
        n: usize,
        options: TopPOptions,
    ) -> Result<TopPPlan> {
        if !(options.p > 0.0 && options.p <= 1.0) {
            return Err(Error::InvalidArgument {
                name: "p",
                reason: format!("p = {}: must be in (0, 1]", options.p),
            });
        }
        if n == 0 {
            return Err(Error::InvalidArgument {
                name: "probs",
                reason: "rows without tokens cannot be sampled".into(),
            });
        }
        if let Some(k) = options.top_k {
            if k == 0 || k > n {
                return Err(Error::InvalidArgument {
                    name: "top_k",
                    reason: format!("top_k = {k}: must be in 1..={n} (the row length)"),
                });
            }
        }
        let m = options.top_k.unwrap_or(n);
        let sort_bytes = match options.top_k {
            Some(k) => topk_workspace_bytes::<P>(device, rows, n, k, TopkOptions::default())?,
            None => sort_workspace_bytes::<P>(device, rows, n, descending())?,
        };
        let scan_bytes = scan_workspace_bytes::<P>(device, rows, m, cumulative_options())?;
        let draw_bytes = multinomial_workspace_bytes::<f32>(device, rows, m, 1)?;
        let profile = device.profile();
        let mask = algos::TopP::new(algos::TopPKind::Mask(P::DTYPE))?.plan(
            profile,
            rows as u64,
            m as u64,
            options.p,
        )?;
        let pick = algos::TopP::new(algos::TopPKind::Pick)?.plan(
            profile,
            rows as u64,
            m as u64,
            options.p,
        )?;
        let mut layout = Layout::default();
        let sorted = layout.add_of::<P>(rows * m);
        let indices = layout.add_of::<i32>(rows * m);
        let cumulative = layout.add_of::<f32>(rows * m);
        let weights = layout.add_of::<f32>(rows * m);
        let pos = layout.add_of::<i32>(rows);
        let slot_bytes = mask.workspace_bytes as usize;
        let uniforms = layout.add_of::<f32>(rows);
        let scratch = layout.add(sort_bytes.max(scan_bytes).max(draw_bytes));
        Ok(TopPPlan {
            m,
            layout,
            sorted,
            indices,
            cumulative,
            weights,
            pos,
            slot_bytes,
            uniforms,
            scratch,
            mask,
            pick,
        })
    }
}

fn descending() -> SortOptions {
    SortOptions {
        descending: true,
        ..Default::default()
    }
}

fn cumulative_options() -> ScanOptions {
    ScanOptions {
        algorithm: Algorithm::Auto,
        ..Default::default()
    }
}

/// Bytes of [`Workspace`] that [`top_p_sample_on`] needs for `rows` rows of
/// `n` probabilities of type `P`. Also uploads the scan's constant matrices,
/// once per device, so that the calls that follow allocate nothing.
pub fn top_p_sample_workspace_bytes<P: TopPProb>(
    device: &Device,
    rows: usize,
    n: usize,
    options: TopPOptions,
) -> Result<usize> {
    Ok(TopPPlan::new::<P>(device, rows, n, options)?.layout.bytes())
}

/// The stream-ordered [`top_p_sample`]: enqueues the whole draw (sort or
/// top-k, scan, mask, weighted draw, index lookup) on `stream` and returns
/// at once, writing one token per row into `tokens` (caller-owned, `rows`
/// long). Row r draws with `uniforms[r]` when given (caller-owned, `rows`
/// long), else with [`uniform(options.seed, r, 0)`](crate::uniform)
/// computed on the device (as the blocking form draws; no upload). No
/// allocation (the scan's constant matrices are uploaded
/// once per device, by [`top_p_sample_workspace_bytes`] or else by the
/// first call), no host synchronisation.
///
/// The probabilities are not checked on the host: `check` receives what is
/// needed, and [`TopPCheck::download`] (after synchronising) gives the
/// blocking form's errors; a row it reports has an unspecified token.
/// Errors now: as for [`top_p_sample`] (the arguments), plus `uniforms`,
/// `tokens`, `check` or `workspace` of the wrong size or device.
pub fn top_p_sample_on<'a, P: TopPProb>(
    stream: &Stream,
    probs: impl Into<Batch<'a, P>>,
    options: TopPOptions,
    uniforms: Option<&DeviceBuffer<f32>>,
    tokens: &mut DeviceBuffer<i32>,
    check: &mut TopPCheck,
    workspace: &mut Workspace,
) -> Result<()> {
    let probs = probs.into();
    let (rows, n) = (probs.row_count(), probs.row_len());
    stream.check_device(probs.data(), "probs")?;
    if let Some(u) = uniforms {
        stream.check_device(u, "uniforms")?;
        check_len(u.len(), rows, "uniforms")?;
    }
    stream.check_device(tokens, "tokens")?;
    stream.check_device(&check.kept, "check")?;
    let mut plan = TopPPlan::new::<P>(stream.device(), rows, n, options)?;
    check_len(tokens.len(), rows, "tokens")?;
    check_len(check.kept.len(), rows, "check")?;
    if check.slots.bytes() < plan.slot_bytes {
        return Err(Error::InvalidArgument {
            name: "check",
            reason: "made for another device profile".into(),
        });
    }
    workspace.check(stream, &plan.layout)?;
    let m = plan.m;
    let mut sorted = workspace.buffer::<P>(plan.sorted);
    let mut indices = workspace.buffer::<i32>(plan.indices);
    let mut cumulative = workspace.buffer::<f32>(plan.cumulative);
    let weights = workspace.buffer::<f32>(plan.weights);
    let mut pos = workspace.buffer::<i32>(plan.pos);
    let mut scratch = workspace.sub(plan.scratch);
    let seeded;
    let uniforms = match uniforms {
        Some(u) => u,
        None => {
            seeded = workspace.buffer::<f32>(plan.uniforms);
            crate::ops::sample::uniforms_into(stream, options.seed, rows, &seeded)?;
            &seeded
        }
    };
    match options.top_k {
        Some(k) => topk_on(
            stream,
            probs,
            k,
            TopkOptions::default(),
            &mut sorted,
            &mut indices,
            &mut scratch,
        )?,
        None => sort_on(
            stream,
            probs,
            descending(),
            &mut sorted,
            &mut indices,
            &mut scratch,
        )?,
    }
    scan_on(
        stream,
        Batch::rows(&sorted, rows)?,
        cumulative_options(),
        &mut cumulative,
        None,
        &mut scratch,
    )?;
    // The mask kernel counts bad probabilities straight into the check's
    // slots: one memset, no copy (each is a stream task of a few us).
    let mask = runtime::TopPMaskArgs {
        probs: sorted.ptr(),
        scan: cumulative.ptr(),
        weights: weights.ptr(),
        workspace: check.slots.ptr(),
    };
    stream.with_queue(&[&*workspace, &check.slots], |s| {
        s.zero(check.slots.ptr(), check.slots.bytes())?;
        runtime::launch(s, &mut plan.mask, mask)
    })?;
    multinomial_on(
        stream,
        Batch::rows(&weights, rows)?,
        uniforms,
        &mut pos,
        Some(&mut check.kept),
        &mut scratch,
    )?;
    let pick = runtime::TopPPickArgs {
        indices: indices.ptr(),
        pos: pos.ptr(),
        tokens: tokens.ptr(),
        workspace: std::ptr::null_mut(),
    };
    debug_assert_eq!(weights.len(), rows * m);
    stream.with_queue(&[&*workspace, &*tokens], |s| {
        runtime::launch(s, &mut plan.pick, pick)
    })
}
