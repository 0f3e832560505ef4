//! TOPP (nucleus) sampling with the Llama 3 reference semantics, batched
//! over rows, by radix select (no sort).
use super::sample::check_row_totals;
use super::scan::Batch;
use super::sort::{topk_on, topk_workspace_bytes, TopkKey, TopkOptions};
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Workspace};

/// Probability types of [`top_p_sample`]: f16, bf16 and f32 (`top_k` runs
/// [`topk`](crate::topk) on them).
pub trait TopPProb:
    super::scan::ScanInput<Acc = f32> + super::sample::SampleWeight + TopkKey
{
}
impl TopPProb for half::f16 {}
impl TopPProb for half::bf16 {}
impl TopPProb for f32 {}

/// Options of [`top_p_sample`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TopPOptions {
    /// The nucleus mass, in (0, 1].
    pub p: f32,
    /// Keep only the `top_k` most probable tokens first (Llama 3 has none).
    pub top_k: Option<usize>,
    /// min-p filtering (as vLLM's `min_p`): drop the entries below `min_p`
    /// times the row's largest first, in [0, 1] (0: off).
    pub min_p: f32,
    /// Seed of the draws: row r draws with the uniform
    /// [`uniform(seed, r, 0)`](crate::uniform).
    pub seed: u64,
}

impl Default for TopPOptions {
    fn default() -> Self {
        TopPOptions {
            p: 0.9,
            top_k: None,
            min_p: 0.0,
            seed: 0,
        }
    }
}

/// One token per row of `probs` by nucleus sampling, as the Llama 3
/// reference sampler (`sample_top_p`) defines it:
///
/// 1. order each row descending, ties in index order (with `top_k`, only
///    its `top_k` largest, ties at the k-th by index; with `min_p`, only
///    the entries at or above `min_p * largest`, the product in f32);
/// 2. keep every entry whose preceding mass in that order is at most `p`
///    (the first entry always stays);
/// 3. draw from the kept entries with the uniform
///    [`uniform(seed, row, 0)`](crate::uniform): the token is the first kept
///    entry, in that order, whose inclusive mass exceeds `u * kept` (`kept`
///    their total: the draw renormalises implicitly).
///
/// Nothing is sorted: one launch finds both crossings by radix select on
/// the probabilities' bits with fp32 mass histograms (docs/algorithms.md,
/// "Top-p by radix select"), so the result is a deterministic function of
/// (probs, p, top_k, seed). `p` is compared with the raw masses, as in the
/// reference: rows need not sum to 1. An entry whose preceding mass is
/// within fp32 rounding of `p` (or of `u * kept`) may be kept or dropped
/// (drawn or passed) as the kernel's fp32 sums say.
///
/// Errors ([`Error::InvalidArgument`]): `p` outside (0, 1] or NaN; `top_k`
/// of 0 or more than the row length; `min_p` outside [0, 1] or NaN;
/// `probs` with an entry outside [0, 1] (NaN included) or a row whose kept
/// mass is 0 (all zero); rows longer than 2^24 entries; `probs` on another
/// device.
pub fn top_p_sample<'a, P: TopPProb>(
    device: &Device,
    probs: impl Into<Batch<'a, P>>,
    options: TopPOptions,
) -> Result<DeviceBuffer<i32>> {
    sample_blocking(device, probs.into(), options, TopPPerRow::default())
}

/// Parameters of [`top_p_sample_per_row`] given per row: host slices of
/// one f32 per row (`None`: the value of the options for every row).
#[derive(Debug, Clone, Copy, Default)]
pub struct TopPPerRow<'a> {
    /// Row r keeps the entries whose preceding mass is at most `p[r]`, in
    /// (0, 1] (in place of `options.p`).
    pub p: Option<&'a [f32]>,
    /// Row r drops the entries below `min_p[r]` times its largest, in
    /// [0, 1] (in place of `options.min_p`).
    pub min_p: Option<&'a [f32]>,
}

/// [`top_p_sample`] with the nucleus mass and the min-p filter given per
/// row (`per_row`; the parameters it leaves `None`, and the rest of
/// `options`, as there). Requests of a serving batch each bring their own
/// parameters, and one launch takes them all.
///
/// Errors: as [`top_p_sample`], and [`Error::InvalidArgument`] naming `p`
/// (or `min_p`) when its length is not the row count or an entry is
/// outside (0, 1] (or [0, 1]) or NaN (the first such row is named).
pub fn top_p_sample_per_row<'a, P: TopPProb>(
    device: &Device,
    probs: impl Into<Batch<'a, P>>,
    per_row: TopPPerRow<'_>,
    options: TopPOptions,
) -> Result<DeviceBuffer<i32>> {
    per_row_blocking(device, probs.into(), per_row, options)
}

fn per_row_blocking<P: TopPProb>(
    device: &Device,
    probs: Batch<'_, P>,
    per_row: TopPPerRow<'_>,
    options: TopPOptions,
) -> Result<DeviceBuffer<i32>> {
    for (values, param) in [(per_row.p, Param::P), (per_row.min_p, Param::MinP)] {
        let Some(values) = values else { continue };
        check_len(values.len(), probs.row_count(), param.name())?;
        if let Some((r, v)) = values.iter().enumerate().find(|(_, v)| !param.valid(**v)) {
            return Err(param.out_of_range(&format!("{}[{r}] = {v}", param.name())));
        }
    }
    sample_blocking(device, probs, options, per_row)
}

/// The parameters that may be given per row, with their ranges.
#[derive(Debug, Clone, Copy)]
enum Param {
    /// The nucleus mass, in (0, 1].
    P,
    /// The min-p factor, in [0, 1].
    MinP,
}

impl Param {
    fn name(self) -> &'static str {
        match self {
            Param::P => "p",
            Param::MinP => "min_p",
        }
    }

    /// Whether `v` is in range (NaN is not).
    fn valid(self, v: f32) -> bool {
        match self {
            Param::P => v > 0.0 && v <= 1.0,
            Param::MinP => (0.0..=1.0).contains(&v),
        }
    }

    fn range(self) -> &'static str {
        match self {
            Param::P => "(0, 1]",
            Param::MinP => "[0, 1]",
        }
    }

    /// The error for `what` (e.g. "p[3] = 2") out of range.
    fn out_of_range(self, what: &str) -> Error {
        Error::InvalidArgument {
            name: self.name(),
            reason: format!("{what}: must be in {}", self.range()),
        }
    }
}

/// The blocking forms: uploads the per-row parameters, runs
/// [`top_p_sample_on`] (the uniforms made in the draw) and checks the
/// result.
fn sample_blocking<P: TopPProb>(
    device: &Device,
    probs: Batch<'_, P>,
    options: TopPOptions,
    per_row: TopPPerRow<'_>,
) -> Result<DeviceBuffer<i32>> {
    if !device.same(probs.data().device()) {
        return Err(Error::InvalidArgument {
            name: "probs",
            reason: "the buffer lives on another device".into(),
        });
    }
    let rows = probs.row_count();
    let given = Given {
        p: per_row.p.is_some(),
        min_p: per_row.min_p.is_some(),
        one_keeps_all: false,
    };
    let plan = TopPPlan::new::<P>(device, rows, probs.row_len(), options, given)?;
    let p = per_row.p.map(|p| device.upload(p)).transpose()?;
    let min_p = per_row.min_p.map(|m| device.upload(m)).transpose()?;
    let mut tokens = device.alloc_uninit::<i32>(rows)?;
    let mut check = TopPCheck::new(device, rows)?;
    let mut workspace = Workspace::new(device, plan.layout.bytes())?;
    let row_inputs = TopPRows {
        uniforms: None,
        p: p.as_ref(),
        min_p: min_p.as_ref(),
    };
    device.blocking(|stream| {
        draw_on(
            stream,
            probs,
            options,
            row_inputs,
            false,
            &mut tokens,
            &mut check,
            &mut workspace,
        )
    })?;
    check.download()?;
    Ok(tokens)
}

/// Per-row inputs of [`top_p_sample_on`] already on the device, each one
/// f32 per row (`None`: the default named below).
#[derive(Debug, Clone, Copy, Default)]
pub struct TopPRows<'a> {
    /// Row r draws with `uniforms[r]` (default: the seeded
    /// [`uniform(options.seed, r, 0)`](crate::uniform), computed by the
    /// draw kernel).
    pub uniforms: Option<&'a DeviceBuffer<f32>>,
    /// Row r's nucleus mass is `p[r]` (default: `options.p` for every row).
    /// Checked on the device: [`TopPCheck::download`] names `p` when an
    /// entry is outside (0, 1] or NaN.
    pub p: Option<&'a DeviceBuffer<f32>>,
    /// Row r drops the entries below `min_p[r]` times its largest (default:
    /// `options.min_p` for every row). Checked on the device:
    /// [`TopPCheck::download`] names `min_p` when an entry is outside
    /// [0, 1] or NaN.
    pub min_p: Option<&'a DeviceBuffer<f32>>,
}

impl<'a> TopPRows<'a> {
    /// Row r draws with `uniforms[r]`; the parameters are the options'.
    pub fn with_uniforms(uniforms: &'a DeviceBuffer<f32>) -> TopPRows<'a> {
        TopPRows {
            uniforms: Some(uniforms),
            ..Default::default()
        }
    }
}

/// Which parameters a draw takes per row (checked where they are, host or
/// device, instead of the options' value).
#[derive(Debug, Clone, Copy, Default)]
struct Given {
    p: bool,
    min_p: bool,
    /// A p of 1 keeps the whole row (rows of probabilities summing to 1).
    one_keeps_all: bool,
}

/// What the host checks after a [`top_p_sample_on`]: the count of
/// probabilities outside [0, 1] and every row's kept mass, copied on the
/// device (a few bytes per row), and, if asked for
/// ([`TopPCheck::with_kept_count`]), every row's kept count. Made once and
/// reused; `download` after the stream is synchronised.
#[derive(Debug)]
pub struct TopPCheck {
    /// The draw kernel's per-core slots (the count of bad probabilities first).
    pub(crate) slots: DeviceBuffer<i32>,
    /// The kept mass of every row (the draw's total).
    pub(crate) kept: DeviceBuffer<f32>,
    /// The kept count of every row, when asked for.
    pub(crate) count: Option<DeviceBuffer<i32>>,
}

/// Ints of the draw kernel's check slots: one 32-byte slot per vector core.
fn check_slot_ints(device: &Device) -> usize {
    device.profile().vector_cores.max(1) as usize * 8
}

impl TopPCheck {
    /// A check for batches of `rows` rows on `device`.
    pub fn new(device: &Device, rows: usize) -> Result<TopPCheck> {
        Ok(TopPCheck {
            slots: device.alloc_uninit(check_slot_ints(device))?,
            kept: device.alloc_uninit(rows)?,
            count: None,
        })
    }

    /// A check that also receives every row's kept count
    /// ([`TopPCheck::kept_count`]). Counting costs the draw one compare per
    /// element of the first set its second search reads (usually the
    /// nucleus' candidates, at most the row).
    pub fn with_kept_count(device: &Device, rows: usize) -> Result<TopPCheck> {
        Ok(TopPCheck {
            count: Some(device.alloc_uninit(rows)?),
            ..TopPCheck::new(device, rows)?
        })
    }

    /// The number of entries each row kept (made by
    /// [`TopPCheck::with_kept_count`]; `None` otherwise): the entries with
    /// a positive probability that the draw chose from, after `top_k`,
    /// `min_p` and the nucleus (steps 1 and 2 of [`top_p_sample`]), i.e.
    /// the support of the row's draw. (A row whose mass is at most p keeps
    /// every entry, but its zeros are not counted.)
    pub fn kept_count(&self) -> Option<&DeviceBuffer<i32>> {
        self.count.as_ref()
    }

    /// The kept counts, if asked for, fit a batch of `rows` rows on
    /// `stream`'s device (else an error naming `check`).
    pub(crate) fn check_count(&self, stream: &Stream, rows: usize) -> Result<()> {
        if let Some(count) = &self.count {
            stream.check_device(count, "check")?;
            check_len(count.len(), rows, "check")?;
        }
        Ok(())
    }

    /// The kept (nucleus) mass of every row: the f32 sum the draw was
    /// relative to.
    pub fn kept_mass(&self) -> &DeviceBuffer<f32> {
        &self.kept
    }

    /// Downloads the check: [`Error::InvalidArgument`] naming `probs` when
    /// an entry was outside [0, 1] (NaN included) or a row kept no mass, as
    /// [`top_p_sample`] reports them, or naming `p` (`min_p`) when a
    /// per-row p ([`TopPRows::p`]) was outside (0, 1] (a per-row min_p
    /// outside [0, 1]) or NaN.
    pub fn download(&self) -> Result<()> {
        let slots = self.slots.download()?;
        let count =
            |word: usize| -> i64 { slots.chunks_exact(8).map(|s| i64::from(s[word])).sum() };
        for (word, param) in [(1, Param::P), (2, Param::MinP)] {
            let bad = count(word);
            if bad > 0 {
                return Err(Error::InvalidArgument {
                    name: param.name(),
                    reason: format!(
                        "{bad} rows with {} outside {} (NaN included)",
                        param.name(),
                        param.range()
                    ),
                });
            }
        }
        let outside = count(0);
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

/// The pieces of a top-p draw and its workspace: with `top_k`, the top-k
/// values and indices of every row, their scratch and the drawn positions;
/// the draw kernel's slots. The draw writes the bad
/// probabilities' count and the kept masses straight into the caller's
/// [`TopPCheck`].
struct TopPPlan {
    layout: Layout,
    top: Option<TopKParts>,
    slots: Part,
    /// One launch per chunk of rows (the kernel keeps per-row state on
    /// chip), with the chunk's first row.
    chunks: Vec<(usize, algos::LaunchPlan<algos::TopPDrawTiling>)>,
    pick: Option<algos::LaunchPlan<algos::TopPTiling>>,
}

/// The workspace parts of the top-k step.
struct TopKParts {
    k: usize,
    values: Part,
    indices: Part,
    pos: Part,
    scratch: Part,
}

impl TopPPlan {
    fn new<P: TopPProb>(
        device: &Device,
        rows: usize,
        n: usize,
        options: TopPOptions,
        given: Given,
    ) -> Result<TopPPlan> {
        // A parameter given per row is checked where it is (host or device).
        if !given.p && !Param::P.valid(options.p) {
            return Err(Param::P.out_of_range(&format!("p = {}", options.p)));
        }
        if n == 0 {
            return Err(Error::InvalidArgument {
                name: "probs",
                reason: "rows without tokens cannot be sampled".into(),
            });
        }
        if n as u64 > algos::TOPP_MAX_ROW_LEN {
            return Err(Error::InvalidArgument {
                name: "probs",
                reason: format!(
                    "rows of {n} entries: at most {} (the draw counts in fp32)",
                    algos::TOPP_MAX_ROW_LEN
                ),
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
        if !given.min_p && !Param::MinP.valid(options.min_p) {
            return Err(Param::MinP.out_of_range(&format!("min_p = {}", options.min_p)));
        }
        let m = options.top_k.unwrap_or(n);
        let profile = device.profile();
        let draw = algos::TopPDraw::new(P::DTYPE)?;
        let per_launch = algos::TopPDraw::max_rows(profile) as usize;
        let mut chunks = Vec::new();
        let mut slot_bytes = 0;
        for first in (0..rows).step_by(per_launch) {
            let count = per_launch.min(rows - first);
            let mut plan = draw.plan(
                profile,
                count as u64,
                m as u64,
                options.p,
                draw.ways_for(profile, count as u64, m as u64),
            )?;
            slot_bytes = slot_bytes.max(plan.workspace_bytes as usize);
            plan.tiling.min_p = if given.min_p { 0.0 } else { options.min_p };
            chunks.push((first, plan));
        }
        let mut layout = Layout::default();
        let (top, pick) = match options.top_k {
            Some(k) => {
                let values = layout.add_of::<P>(rows * k);
                let indices = layout.add_of::<i32>(rows * k);
                let pos = layout.add_of::<i32>(rows);
                let scratch =
                    layout.add(topk_workspace_bytes::<P>(device, rows, n, k, unsorted())?);
                let pick = algos::TopP.plan(profile, rows as u64, k as u64)?;
                let parts = TopKParts {
                    k,
                    values,
                    indices,
                    pos,
                    scratch,
                };
                (Some(parts), Some(pick))
            }
            None => (None, None),
        };
        let slots = layout.add(slot_bytes);
        Ok(TopPPlan {
            layout,
            top,
            slots,
            chunks,
            pick,
        })
    }
}

/// The top-k step of a draw: the k largest in input order (the draw needs
/// no sorted order, and its ties go by position).
fn unsorted() -> TopkOptions {
    TopkOptions {
        sorted: false,
        ..Default::default()
    }
}

/// Bytes of [`Workspace`] that [`top_p_sample_on`] needs for `rows` rows of
/// `n` probabilities of type `P`: about two entries of `P` per probability
/// of one launch's rows (two candidate sets in the row's type;
/// docs/algorithms.md, "Top-p by radix select"), plus the top-k step's with `top_k`. `options.p` and
/// `options.min_p` do not change the size and are not checked here (they
/// may be given per row).
pub fn top_p_sample_workspace_bytes<P: TopPProb>(
    device: &Device,
    rows: usize,
    n: usize,
    options: TopPOptions,
) -> Result<usize> {
    let per_row = Given {
        p: true,
        min_p: true,
        one_keeps_all: false,
    };
    Ok(TopPPlan::new::<P>(device, rows, n, options, per_row)?
        .layout
        .bytes())
}

/// The stream-ordered [`top_p_sample`] and [`top_p_sample_per_row`]:
/// enqueues the whole draw (the top-k with `top_k`, the draw kernel, the
/// index lookup with `top_k`) on
/// `stream` and returns at once, writing one token per row into `tokens`
/// (caller-owned, `rows` long). `rows` may give each row's uniform, nucleus
/// mass and min_p on the device (caller-owned, `rows` long each; see
/// [`TopPRows`]); without them row r draws with
/// [`uniform(options.seed, r, 0)`](crate::uniform), computed by the draw
/// kernel (as the blocking form draws; no upload, no launch of its own) and takes `options.p` and
/// `options.min_p`.
/// No allocation, no host synchronisation.
///
/// The probabilities are not checked on the host: `check` receives what is
/// needed, and [`TopPCheck::download`] (after synchronising) gives the
/// blocking form's errors; a row it reports has an unspecified token.
/// Errors now: as for [`top_p_sample`] (the arguments; `options.p` is
/// checked only without per-row p, `options.min_p` only without per-row
/// min_p), plus `uniforms`, `p`, `min_p`, `tokens`, `check` or `workspace`
/// of the wrong size or device.
pub fn top_p_sample_on<'a, P: TopPProb>(
    stream: &Stream,
    probs: impl Into<Batch<'a, P>>,
    options: TopPOptions,
    rows_in: TopPRows<'_>,
    tokens: &mut DeviceBuffer<i32>,
    check: &mut TopPCheck,
    workspace: &mut Workspace,
) -> Result<()> {
    draw_on(
        stream,
        probs.into(),
        options,
        rows_in,
        false,
        tokens,
        check,
        workspace,
    )
}

/// [`top_p_sample_on`], with `one_keeps_all` as [`Given`] says.
#[allow(clippy::too_many_arguments)]
pub(crate) fn draw_on<P: TopPProb>(
    stream: &Stream,
    probs: Batch<'_, P>,
    options: TopPOptions,
    rows_in: TopPRows<'_>,
    one_keeps_all: bool,
    tokens: &mut DeviceBuffer<i32>,
    check: &mut TopPCheck,
    workspace: &mut Workspace,
) -> Result<()> {
    let (rows, n) = (probs.row_count(), probs.row_len());
    stream.check_device(probs.data(), "probs")?;
    let row_buffers = [
        (rows_in.uniforms, "uniforms"),
        (rows_in.p, "p"),
        (rows_in.min_p, "min_p"),
    ];
    for (buffer, name) in row_buffers {
        if let Some(b) = buffer {
            stream.check_device(b, name)?;
            check_len(b.len(), rows, name)?;
        }
    }
    stream.check_device(tokens, "tokens")?;
    stream.check_device(&check.kept, "check")?;
    let given = Given {
        p: rows_in.p.is_some(),
        min_p: rows_in.min_p.is_some(),
        one_keeps_all,
    };
    let mut plan = TopPPlan::new::<P>(stream.device(), rows, n, options, given)?;
    check_len(tokens.len(), rows, "tokens")?;
    check_len(check.kept.len(), rows, "check")?;
    check.check_count(stream, rows)?;
    if check.slots.len() < check_slot_ints(stream.device()) {
        return Err(Error::InvalidArgument {
            name: "check",
            reason: "made for another device profile".into(),
        });
    }
    workspace.check(stream, &plan.layout)?;
    // With top_k, the draw runs over the top-k values of each row (in input
    // order, so ties still go by index) and its positions map back through
    // the top-k indices.
    let top = match &plan.top {
        Some(parts) => {
            let mut values = workspace.buffer::<P>(parts.values);
            let mut indices = workspace.buffer::<i32>(parts.indices);
            let mut scratch = workspace.sub(parts.scratch);
            topk_on(
                stream,
                probs,
                parts.k,
                unsorted(),
                &mut values,
                &mut indices,
                &mut scratch,
            )?;
            Some((parts.k, values, indices, workspace.buffer::<i32>(parts.pos)))
        }
        None => None,
    };
    let (draw_in, draw_out, m): (&DeviceBuffer<P>, &DeviceBuffer<i32>, usize) = match &top {
        Some((k, values, _, pos)) => (values, pos, *k),
        None => (probs.data(), &*tokens, n),
    };
    let slots = workspace.buffer::<u8>(plan.slots);
    let mut uses: Vec<&dyn crate::stream::Uses> =
        vec![&*workspace, &check.slots, &check.kept, &*tokens];
    for b in [rows_in.uniforms, rows_in.p, rows_in.min_p]
        .into_iter()
        .flatten()
    {
        uses.push(b);
    }
    if let Some(count) = &check.count {
        uses.push(count);
    }
    stream.with_queue(&uses, |s| {
        // The first launch writes every check slot, the others add to them.
        for (first, launch) in plan.chunks.iter_mut() {
            launch.tiling.accumulate = u32::from(*first > 0);
            launch.tiling.row_p = u32::from(given.p);
            launch.tiling.row_min_p = u32::from(given.min_p);
            launch.tiling.one_keeps_all = u32::from(given.one_keeps_all);
            // Without given uniforms the kernel makes row r's from the seed.
            launch.tiling.seeded = u32::from(rows_in.uniforms.is_none());
            launch.tiling.seed = options.seed;
            launch.tiling.first_row = *first as u64;
            launch.tiling.count_kept = u32::from(check.count.is_some());
            let args = runtime::TopPDrawArgs {
                probs: draw_in.ptr_at(*first * m),
                uniforms: rows_in
                    .uniforms
                    .map_or(std::ptr::null_mut(), |u| u.ptr_at(*first)),
                top_p: rows_in.p.map_or(std::ptr::null_mut(), |p| p.ptr_at(*first)),
                min_p: rows_in
                    .min_p
                    .map_or(std::ptr::null_mut(), |m| m.ptr_at(*first)),
                tokens: draw_out.ptr_at(*first),
                kept: check.kept.ptr_at(*first),
                kept_count: check
                    .count
                    .as_ref()
                    .map_or(std::ptr::null_mut(), |c| c.ptr_at(*first)),
                check: check.slots.ptr(),
                workspace: slots.ptr(),
            };
            runtime::launch(s, launch, args)?;
        }
        Ok(())
    })?;
    if let (Some((_, _, indices, pos)), Some(pick)) = (&top, plan.pick.as_mut()) {
        pick_launch(stream, pick, indices, pos, tokens)?;
    }
    Ok(())
}

/// The pick after a draw over top-k rows: `tokens[r] = indices[r * k +
/// pos[r]]` (`rows x k` indices, `rows` positions and tokens), enqueued on
/// `stream`.
pub(crate) fn pick_on(
    stream: &Stream,
    indices: &DeviceBuffer<i32>,
    pos: &DeviceBuffer<i32>,
    tokens: &mut DeviceBuffer<i32>,
) -> Result<()> {
    let (rows, k) = (tokens.len(), indices.len() / tokens.len().max(1));
    let mut plan = algos::TopP.plan(stream.device().profile(), rows as u64, k as u64)?;
    pick_launch(stream, &mut plan, indices, pos, tokens)
}

fn pick_launch(
    stream: &Stream,
    plan: &mut algos::LaunchPlan<algos::TopPTiling>,
    indices: &DeviceBuffer<i32>,
    pos: &DeviceBuffer<i32>,
    tokens: &DeviceBuffer<i32>,
) -> Result<()> {
    let args = runtime::TopPPickArgs {
        indices: indices.ptr(),
        pos: pos.ptr(),
        tokens: tokens.ptr(),
    };
    stream.with_queue(&[indices, pos, tokens], |s| runtime::launch(s, plan, args))
}
