//! Sampling from logits, as an LLM server samples a decode step:
//! temperature, top-k, softmax, min-p and top-p, and the draw, composed from
//! [`topk`](crate::topk), [`softmax`](crate::softmax) and
//! [`top_p_sample`](crate::top_p_sample).
use super::scan::Batch;
use super::softmax::{
    softmax_kept_on, softmax_workspace_bytes, Keep, KeepCount, SoftmaxInput, Temperature,
};
use super::sort::{topk, topk_on, topk_workspace_bytes, TopkKey, TopkOptions};
use super::topp::{
    draw_on, pick_on, top_p_sample_workspace_bytes, TopPCheck, TopPOptions, TopPRows,
};
use crate::device::{Device, DeviceBuffer};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Workspace};

/// Logit types of [`sample_logits`]: f16, bf16 and f32.
pub trait LogitsInput: SoftmaxInput + TopkKey + PartialOrd {}
impl LogitsInput for half::f16 {}
impl LogitsInput for half::bf16 {}
impl LogitsInput for f32 {}

/// Options of [`sample_logits`] (vLLM's sampling parameters).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogitsSampling {
    /// The logits are divided by it before the softmax: a finite number >= 0;
    /// 0 is greedy (the largest logit, the lowest index among equals).
    pub temperature: f32,
    /// Keep only the `top_k` largest logits (ties at the k-th by index).
    pub top_k: Option<usize>,
    /// The nucleus mass, in (0, 1] (1: off).
    pub top_p: f32,
    /// Drop the probabilities below `min_p` times the largest, in [0, 1]
    /// (0: off).
    pub min_p: f32,
    /// Seed of the draws: row r draws with the uniform
    /// [`uniform(seed, r, 0)`](crate::uniform).
    pub seed: u64,
}

impl Default for LogitsSampling {
    fn default() -> Self {
        LogitsSampling {
            temperature: 1.0,
            top_k: None,
            top_p: 1.0,
            min_p: 0.0,
            seed: 0,
        }
    }
}

/// One token per row of `logits` (`rows x n`), sampled as vLLM's sampler
/// orders its filters:
///
/// 1. temperature 0: the token is the row's largest logit (the lowest index
///    among equals; a row holding a NaN is refused);
/// 2. with `top_k`, only the `top_k` largest logits stay (ties at the k-th
///    by index): [`topk`](crate::topk), sorted (`top_k` = n keeps the whole
///    row, as no `top_k`);
/// 3. the probabilities are the softmax of the kept logits divided by the
///    temperature ([`softmax`](crate::softmax), f32): renormalised over
///    what top-k kept, as vLLM's;
/// 4. min-p, top-p and the draw as [`top_p_sample`](crate::top_p_sample)
///    defines them on those probabilities (the order: descending
///    probability; equal probabilities in the order of step 2, i.e. of the
///    logits, then by index, or by index alone when some row keeps its
///    whole row). Top-p compares `top_p` with the masses before min-p
///    (vLLM renormalises after min-p: the two agree when either is off).
///
/// A row that keeps a single logit (`top_k` = 1, like temperature 0) gets
/// it whatever its value (+inf, or -inf in a row of nothing else), a NaN
/// being refused.
///
/// Launches: greedy, one TOPK; with a top-k of at most 4096, TOPK and
/// TOPKDRAW (the softmax of the kept logits, min-p, top-p, the draw and the
/// token in one launch); else (TOPK,) SOFTMAX, the TOPPDRAW draw (and the
/// pick of the token through the top-k indices). Deterministic for given
/// (logits, options). [`sample_logits_per_row`] takes the parameters
/// per row.
///
/// Errors ([`Error::InvalidArgument`]): `temperature` negative or not
/// finite; `top_k` of 0 or more than the row length; `top_p` outside
/// (0, 1] or `min_p` outside [0, 1] (NaN included); `logits` with rows of
/// no entries, on another device, or with a row that has no probabilities
/// to sample (a NaN or +inf logit, or nothing but -inf among the kept ones)
/// or, greedy, a NaN.
pub fn sample_logits<'a, T: LogitsInput>(
    device: &Device,
    logits: impl Into<Batch<'a, T>>,
    options: LogitsSampling,
) -> Result<DeviceBuffer<i32>> {
    if options.top_k == Some(0) {
        return Err(invalid(
            "top_k",
            "top_k = 0: must be at least 1 (None: off)".into(),
        ));
    }
    sample_logits_per_row(device, logits, LogitsPerRow::default(), options)
}

/// Sampling parameters of [`sample_logits_per_row`] given per row: host
/// slices of one value per row (`None`: the value of the options for every
/// row). The requests of a serving batch each bring their own.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogitsPerRow<'a> {
    /// Row r's temperature, a finite number >= 0 (0: greedy).
    pub temperature: Option<&'a [f32]>,
    /// Row r keeps its `top_k[r]` largest logits, at most the row length
    /// (0: off, the whole row).
    pub top_k: Option<&'a [u32]>,
    /// Row r's nucleus mass, in (0, 1] (1: off).
    pub top_p: Option<&'a [f32]>,
    /// Row r's min-p factor, in [0, 1] (0: off).
    pub min_p: Option<&'a [f32]>,
}

/// [`sample_logits`] with parameters per row: row r samples as
/// [`sample_logits`] with the options where `per_row` gives row r's
/// temperature, top_k (0: off), top_p or min_p, and the draw's uniform
/// [`uniform(seed, r, 0)`](crate::uniform). One pipeline for the batch,
/// whatever the mix ([`sample_logits_on`] with the values uploaded): greedy
/// rows are those that keep one logit; the top-k runs once with the largest
/// k, and the softmax keeps each row's own. When every row has a top-k (or
/// is greedy) the softmax and the draw run on the top-k only; when some row
/// keeps its whole row, they run on the whole rows (then equal
/// probabilities go by index).
///
/// Errors: as [`sample_logits`], naming `temperature`, `top_k`, `top_p`
/// or `min_p` when a slice's length is not the row count or an entry is
/// out of its range (the first such row is named).
pub fn sample_logits_per_row<'a, T: LogitsInput>(
    device: &Device,
    logits: impl Into<Batch<'a, T>>,
    per_row: LogitsPerRow<'_>,
    options: LogitsSampling,
) -> Result<DeviceBuffer<i32>> {
    let logits = logits.into();
    let (rows, n) = (logits.row_count(), logits.row_len());
    if !device.same(logits.data().device()) {
        return Err(invalid(
            "logits",
            "the buffer lives on another device".into(),
        ));
    }
    if n == 0 {
        return Err(invalid(
            "logits",
            "rows without tokens cannot be sampled".into(),
        ));
    }
    let temperature = TEMPERATURE.values(per_row.temperature, options.temperature, rows)?;
    let top_k = per_row_values(
        per_row.top_k,
        options
            .top_k
            .map_or(0, |k| u32::try_from(k).unwrap_or(u32::MAX)),
        rows,
        "top_k",
        &format!("in 0..={n} (the row length; 0: off)"),
        |k| k as usize <= n,
    )?;
    TOP_P.values(per_row.top_p, options.top_p, rows)?;
    MIN_P.values(per_row.min_p, options.min_p, rows)?;
    if rows == 0 {
        return device.alloc::<i32>(0);
    }
    if temperature.iter().all(|&t| t == 0.0) {
        return greedy(device, logits);
    }
    // What each row keeps of its top-k order: 1 for greedy, 0 for all.
    let keep: Vec<i32> = (0..rows)
        .map(|r| {
            if temperature[r] == 0.0 {
                1
            } else if top_k[r] as usize == n {
                0
            } else {
                top_k[r] as i32
            }
        })
        .collect();
    let widest = keep.iter().copied().max().unwrap_or(0) as usize;
    let some_off = keep.contains(&0);
    // Rows that all keep the whole top-k need no counts (one entry is
    // one-hot: the options' top_k of 1 says so).
    let counts = (widest > 0 && (some_off || keep.iter().any(|&k| k as usize != widest)))
        .then(|| device.upload(&keep))
        .transpose()?;
    let uniform = |v: &[f32]| v.iter().all(|&x| x == v[0]);
    let temperatures = (!uniform(&temperature))
        .then(|| device.upload(&temperature))
        .transpose()?;
    let top_p_rows = per_row.top_p.map(|p| device.upload(p)).transpose()?;
    let min_p_rows = per_row.min_p.map(|m| device.upload(m)).transpose()?;
    let rows_in = LogitsRows {
        temperature: temperatures.as_ref(),
        top_k: counts.as_ref().map(|k| RowTopK {
            k,
            max: widest,
            some_off,
        }),
        top_p: top_p_rows.as_ref(),
        min_p: min_p_rows.as_ref(),
        uniforms: None,
    };
    let options = LogitsSampling {
        temperature: temperature[0],
        top_k: (widest > 0).then_some(widest),
        ..options
    };
    let bytes = sample_logits_workspace_bytes::<T>(device, rows, n, &rows_in, options)?;
    let mut tokens = device.alloc_uninit::<i32>(rows)?;
    let mut check = LogitsCheck::new(device, rows)?;
    let mut workspace = Workspace::new(device, bytes)?;
    device.blocking(|stream| {
        sample_logits_on(
            stream,
            logits,
            rows_in,
            options,
            &mut tokens,
            &mut check,
            &mut workspace,
        )
    })?;
    check.download()?;
    Ok(tokens)
}

/// The top-k of each row of [`sample_logits_on`], on the device.
#[derive(Debug, Clone, Copy)]
pub struct RowTopK<'a> {
    /// Row r keeps its `k[r]` largest logits (ties at the k-th by index):
    /// 1..=`max`, or 0 (off: the whole row) when `some_off`. Checked on the
    /// device: another value makes [`LogitsCheck::download`] report the row.
    pub k: &'a DeviceBuffer<i32>,
    /// The largest entry, 1..= the row length: the top-k runs once with it
    /// (sorted), and each row keeps its own count of that.
    pub max: usize,
    /// Whether some rows may be 0 (off). Then the softmax and the draw run
    /// over the whole rows, keeping each row's top-k there; else over the
    /// `max` top-k entries of each row alone (faster).
    pub some_off: bool,
}

/// Per-row inputs of [`sample_logits_on`], on the device: one entry per
/// row (`None`: the value of the options for every row).
#[derive(Debug, Clone, Copy, Default)]
pub struct LogitsRows<'a> {
    /// Row r's temperature: a positive finite number, or 0 (greedy) when the
    /// call has a top-k (`top_k`, or `options.top_k` below the row length;
    /// greedy rows may take any k there, e.g. 1). Checked on the device:
    /// another value (a 0 without a top-k) makes [`LogitsCheck::download`]
    /// report the row.
    pub temperature: Option<&'a DeviceBuffer<f32>>,
    /// Row r's top-k (in place of `options.top_k`).
    pub top_k: Option<RowTopK<'a>>,
    /// Row r's nucleus mass, in (0, 1] (checked on the device: the check
    /// names `top_p`).
    pub top_p: Option<&'a DeviceBuffer<f32>>,
    /// Row r's min-p factor, in [0, 1] (checked on the device: the check
    /// names `min_p`).
    pub min_p: Option<&'a DeviceBuffer<f32>>,
    /// Row r draws with `uniforms[r]`, in [0, 1) (default: the seeded
    /// [`uniform(options.seed, r, 0)`](crate::uniform), computed by the
    /// draw kernel).
    pub uniforms: Option<&'a DeviceBuffer<f32>>,
}

/// What the host checks after a [`sample_logits_on`]: the draw's count of
/// rows with no probabilities to sample, the per-row parameters' checks and
/// every row's kept mass (a few bytes per row), and, if asked for
/// ([`LogitsCheck::with_kept_count`]), every row's kept count. Made once
/// and reused; `download` after the stream is synchronised.
#[derive(Debug)]
pub struct LogitsCheck {
    draw: TopPCheck,
}

impl LogitsCheck {
    /// A check for batches of `rows` rows on `device`.
    pub fn new(device: &Device, rows: usize) -> Result<LogitsCheck> {
        Ok(LogitsCheck {
            draw: TopPCheck::new(device, rows)?,
        })
    }

    /// A check that also receives every row's kept count
    /// ([`LogitsCheck::kept_count`]), counted by the draw's kernel.
    pub fn with_kept_count(device: &Device, rows: usize) -> Result<LogitsCheck> {
        Ok(LogitsCheck {
            draw: TopPCheck::with_kept_count(device, rows)?,
        })
    }

    /// The number of tokens each row kept (made by
    /// [`LogitsCheck::with_kept_count`]; `None` otherwise): those with a
    /// positive probability among the ones top-k, min-p and top-p kept,
    /// i.e. the support of the row's draw (1 for a greedy row; a logit of
    /// -inf, or one whose f32 probability is 0, is not counted).
    pub fn kept_count(&self) -> Option<&DeviceBuffer<i32>> {
        self.draw.kept_count()
    }

    /// The kept mass of every row: the f32 sum of the probabilities that
    /// min-p and top-p kept (after the temperature and the top-k), which the
    /// draw was relative to (1 for a greedy row).
    pub fn kept_mass(&self) -> &DeviceBuffer<f32> {
        self.draw.kept_mass()
    }

    /// Downloads the check: [`Error::InvalidArgument`] naming `top_p` or
    /// `min_p` for a per-row value out of range, or `logits` for a row
    /// with no probabilities to sample (a NaN or +inf logit, nothing but
    /// -inf among the kept ones, or a per-row temperature or top_k out of
    /// its range: each makes the row's probabilities NaN).
    pub fn download(&self) -> Result<()> {
        self.draw.download().map_err(|e| match e {
            Error::InvalidArgument { name: "p", reason } => invalid("top_p", reason),
            Error::InvalidArgument {
                name: "probs",
                reason,
            } => invalid(
                "logits",
                format!(
                    "their probabilities (a NaN or +inf logit, nothing but -inf among the kept \
                     ones, or a per-row temperature or top_k out of its range, makes a row NaN): \
                     {reason}"
                ),
            ),
            e => e,
        })
    }
}

/// The launches of a [`sample_logits_on`] and its workspace.
struct LogitsPlan {
    layout: Layout,
    tail: Tail,
}

/// The launches: the top-k step, if any (its width, whether the softmax
/// runs over the whole rows, what each row keeps, and its parts), and what
/// runs after it.
enum Tail {
    /// TOPKDRAW over the sorted top-k alone (at most
    /// [`algos::TOPKDRAW_MAX_WIDTH`] wide): softmax, min-p, top-p, the draw
    /// and the token in one launch.
    Fused {
        top: TopStep,
        draw: algos::LaunchPlan<algos::TopKDrawTiling>,
    },
    /// SOFTMAX, the TOPPDRAW draw and, after a top-k alone, the pick.
    Separate {
        top: Option<TopStep>,
        probs: Part,
        softmax: Part,
        draw: Part,
        /// The drawn positions in the top-k rows (the softmax over them alone).
        pos: Part,
    },
}

struct TopStep {
    width: usize,
    whole: bool,
    keep: StepKeep,
    values: Part,
    indices: Part,
    scratch: Part,
}

/// What the softmax after the top-k keeps of each row.
#[derive(Debug, Clone, Copy)]
enum StepKeep {
    /// The whole top-k of every row.
    Width,
    /// This many entries of every row.
    All(u32),
    /// Each row's count ([`RowTopK::k`]).
    PerRow,
}

impl LogitsPlan {
    fn new<T: LogitsInput>(
        device: &Device,
        rows: usize,
        n: usize,
        rows_in: &LogitsRows<'_>,
        options: LogitsSampling,
    ) -> Result<LogitsPlan> {
        if n == 0 {
            return Err(invalid(
                "logits",
                "rows without tokens cannot be sampled".into(),
            ));
        }
        // The options' values that no per-row input replaces.
        let t = options.temperature;
        if rows_in.temperature.is_none() {
            TEMPERATURE.values(None, t, 0)?;
        }
        if rows_in.top_p.is_none() {
            TOP_P.values(None, options.top_p, 0)?;
        }
        if rows_in.min_p.is_none() {
            MIN_P.values(None, options.min_p, 0)?;
        }
        let greedy = rows_in.temperature.is_none() && t == 0.0;
        // (width, over whole rows, what the softmax keeps)
        let shape = if greedy {
            Some((1, false, StepKeep::All(1)))
        } else if let Some(k) = &rows_in.top_k {
            if k.max == 0 || k.max > n {
                return Err(invalid(
                    "top_k",
                    format!("max = {}: must be in 1..={n} (the row length)", k.max),
                ));
            }
            Some((k.max, k.some_off, StepKeep::PerRow))
        } else {
            match options.top_k {
                Some(0) => {
                    return Err(invalid(
                        "top_k",
                        "top_k = 0: must be at least 1 (None: off)".into(),
                    ))
                }
                Some(k) if k > n => {
                    return Err(invalid(
                        "top_k",
                        format!("top_k = {k}: must be in 1..={n} (the row length)"),
                    ))
                }
                // Rows that keep all of the top-k need no keep, unless it is
                // one entry (one-hot) or a per-row temperature may be 0.
                Some(k) if k < n => {
                    let all = k == 1 || rows_in.temperature.is_some();
                    let keep = if all {
                        StepKeep::All(k as u32)
                    } else {
                        StepKeep::Width
                    };
                    Some((k, false, keep))
                }
                _ => None,
            }
        };
        let mut layout = Layout::default();
        let top = match shape {
            Some((width, whole, keep)) => Some(TopStep {
                width,
                whole,
                keep,
                values: layout.add_of::<T>(rows * width),
                indices: layout.add_of::<i32>(rows * width),
                scratch: layout.add(topk_workspace_bytes::<T>(
                    device,
                    rows,
                    n,
                    width,
                    TopkOptions::default(),
                )?),
            }),
            None => None,
        };
        let tail = match top {
            Some(top) if !top.whole && top.width as u64 <= algos::TOPKDRAW_MAX_WIDTH => {
                let draw = algos::TopKDraw::new(T::DTYPE)?.plan(
                    device.profile(),
                    rows as u64,
                    top.width as u64,
                )?;
                Tail::Fused { top, draw }
            }
            top => {
                let m = match &top {
                    Some(s) if !s.whole => s.width,
                    _ => n,
                };
                let probs = layout.add_of::<f32>(rows * m);
                let softmax = layout.add(softmax_workspace_bytes::<T>(device, rows, m)?);
                let draw_options = TopPOptions {
                    p: options.top_p,
                    top_k: None,
                    min_p: options.min_p,
                    seed: options.seed,
                };
                let draw = layout.add(top_p_sample_workspace_bytes::<f32>(
                    device,
                    rows,
                    m,
                    draw_options,
                )?);
                let pos = layout.add_of::<i32>(rows);
                Tail::Separate {
                    top,
                    probs,
                    softmax,
                    draw,
                    pos,
                }
            }
        };
        Ok(LogitsPlan { layout, tail })
    }
}

/// Bytes of [`Workspace`] that [`sample_logits_on`] needs for `rows` rows
/// of `n` logits of type `T` with these inputs: the top-k's values, indices
/// and scratch, the f32 probabilities (of the top-k, or of the whole rows),
/// and the softmax's and the draw's own.
pub fn sample_logits_workspace_bytes<T: LogitsInput>(
    device: &Device,
    rows: usize,
    n: usize,
    rows_in: &LogitsRows<'_>,
    options: LogitsSampling,
) -> Result<usize> {
    // An empty batch runs nothing (as [`sample_logits_on`]).
    if rows == 0 {
        return Ok(0);
    }
    Ok(LogitsPlan::new::<T>(device, rows, n, rows_in, options)?
        .layout
        .bytes())
}

/// The stream-ordered [`sample_logits`] with per-row inputs on the device
/// (a serving loop's decode step): enqueues the whole pipeline on `stream`
/// and returns at once, writing one token per row into `tokens`
/// (caller-owned, `rows` long). No allocation, no host synchronisation.
///
/// Row r samples as [`sample_logits`] defines it, with `rows_in`'s entry
/// for row r in place of the options' value where one is given (see
/// [`LogitsRows`]) and the uniform `rows_in.uniforms[r]` or
/// [`uniform(options.seed, r, 0)`](crate::uniform). The launches: a TOPK
/// with the widest k (none without a top-k); when every row draws from its
/// top-k alone and the widest is at most 4096, TOPKDRAW (each row's
/// softmax, min-p, top-p, draw and token in one launch); else a SOFTMAX
/// keeping each row's top-k, the TOPPDRAW draw, and the pick of the token
/// through the top-k indices when the softmax ran on them alone.
/// `options.temperature` = 0 (no per-row temperatures) is greedy for every
/// row: a TOPK of 1 and its first entry.
///
/// The logits and the per-row inputs are checked on the device: `check`
/// receives what is needed, and [`LogitsCheck::download`] (after
/// synchronising) gives the errors; a row it reports has an unspecified
/// token. Errors now: as for [`sample_logits`] on the arguments the host
/// sees (`options`' values where no per-row input replaces them,
/// [`RowTopK::max`]), plus `temperature`, `top_k`, `top_p`, `min_p`,
/// `uniforms`, `tokens`, `check` or `workspace` of the wrong size or
/// device.
pub fn sample_logits_on<'a, T: LogitsInput>(
    stream: &Stream,
    logits: impl Into<Batch<'a, T>>,
    rows_in: LogitsRows<'_>,
    options: LogitsSampling,
    tokens: &mut DeviceBuffer<i32>,
    check: &mut LogitsCheck,
    workspace: &mut Workspace,
) -> Result<()> {
    let logits = logits.into();
    let (rows, n) = (logits.row_count(), logits.row_len());
    stream.check_device(logits.data(), "logits")?;
    stream.check_device(tokens, "tokens")?;
    check_len(tokens.len(), rows, "tokens")?;
    if let Some(k) = &rows_in.top_k {
        stream.check_device(k.k, "top_k")?;
        check_len(k.k.len(), rows, "top_k")?;
    }
    let row_floats = [
        (rows_in.temperature, "temperature"),
        (rows_in.top_p, "top_p"),
        (rows_in.min_p, "min_p"),
        (rows_in.uniforms, "uniforms"),
    ];
    for (buffer, name) in row_floats {
        if let Some(b) = buffer {
            stream.check_device(b, name)?;
            check_len(b.len(), rows, name)?;
        }
    }
    check_len(check.kept_mass().len(), rows, "check")?;
    check.draw.check_count(stream, rows)?;
    if rows == 0 {
        return Ok(());
    }
    let mut plan = LogitsPlan::new::<T>(stream.device(), rows, n, &rows_in, options)?;
    workspace.check(stream, &plan.layout)?;
    let (top, probs, softmax, draw, pos) = match &mut plan.tail {
        Tail::Fused { top, draw } => {
            let (values, indices) = top_k_step(stream, logits, top, workspace)?;
            return draw_top_k_on(
                stream, draw, top, &values, &indices, &rows_in, options, tokens, check,
            );
        }
        Tail::Separate {
            top,
            probs,
            softmax,
            draw,
            pos,
        } => (top.as_ref(), *probs, *softmax, *draw, *pos),
    };
    let mut probs = workspace.buffer::<f32>(probs);
    let temperature = match rows_in.temperature {
        Some(t) => Temperature::OnDevice(t),
        // Greedy: every row one-hot on its top-1, whatever the scale.
        None if options.temperature == 0.0 => Temperature::All(1.0),
        None => Temperature::All(options.temperature),
    };
    let mut softmax_ws = workspace.sub(softmax);
    let top = match top {
        Some(step) => {
            let (values, indices) = top_k_step(stream, logits, step, workspace)?;
            Some((step, values, indices))
        }
        None => None,
    };
    match &top {
        None => softmax_kept_on(
            stream,
            logits,
            temperature,
            None,
            &mut probs,
            &mut softmax_ws,
        )?,
        Some((step, values, indices)) => {
            let count = match (step.keep, &rows_in.top_k) {
                (StepKeep::All(c), _) => Some(KeepCount::All(c)),
                (StepKeep::PerRow, Some(k)) => Some(KeepCount::PerRow(k.k)),
                _ => None,
            };
            let keep = count.map(|count| Keep {
                count,
                values,
                indices: step.whole.then_some(indices),
                width: step.width,
            });
            let input = if step.whole {
                logits
            } else {
                Batch::rows(values, rows)?
            };
            softmax_kept_on(
                stream,
                input,
                temperature,
                keep,
                &mut probs,
                &mut softmax_ws,
            )?;
        }
    }
    let draw_options = TopPOptions {
        p: options.top_p,
        top_k: None,
        min_p: options.min_p,
        seed: options.seed,
    };
    let draw_rows = TopPRows {
        uniforms: rows_in.uniforms,
        p: rows_in.top_p,
        min_p: rows_in.min_p,
    };
    let compact = top.as_ref().filter(|(s, _, _)| !s.whole);
    let mut pos = workspace.buffer::<i32>(pos);
    draw_on(
        stream,
        Batch::rows(&probs, rows)?,
        draw_options,
        draw_rows,
        true,
        if compact.is_some() { &mut pos } else { tokens },
        &mut check.draw,
        &mut workspace.sub(draw),
    )?;
    if let Some((_, _, indices)) = compact {
        pick_on(stream, indices, &pos, tokens)?;
    }
    Ok(())
}

/// The top-k step: the `step.width` largest logits of every row and their
/// indices, sorted (descending, ties by index, NaN first), in the workspace.
fn top_k_step<T: LogitsInput>(
    stream: &Stream,
    logits: Batch<'_, T>,
    step: &TopStep,
    workspace: &mut Workspace,
) -> Result<(DeviceBuffer<T>, DeviceBuffer<i32>)> {
    let mut values = workspace.buffer::<T>(step.values);
    let mut indices = workspace.buffer::<i32>(step.indices);
    topk_on(
        stream,
        logits,
        step.width,
        TopkOptions::default(),
        &mut values,
        &mut indices,
        &mut workspace.sub(step.scratch),
    )?;
    Ok((values, indices))
}

/// TOPKDRAW after the top-k step: every row's token from its sorted top-k
/// (`values`, `indices`) with the call's temperature, keep, top-p, min-p and
/// uniforms, its kept mass and the check slots into `check`.
#[allow(clippy::too_many_arguments)]
fn draw_top_k_on<T: LogitsInput>(
    stream: &Stream,
    plan: &mut algos::LaunchPlan<algos::TopKDrawTiling>,
    step: &TopStep,
    values: &DeviceBuffer<T>,
    indices: &DeviceBuffer<i32>,
    rows_in: &LogitsRows<'_>,
    options: LogitsSampling,
    tokens: &DeviceBuffer<i32>,
    check: &LogitsCheck,
) -> Result<()> {
    let t = &mut plan.tiling;
    // Greedy (no per-row temperature): one entry, whatever the scale.
    t.scale = match options.temperature {
        0.0 => 1.0,
        temperature => 1.0 / temperature,
    };
    // Row r's own count from the device, or one count for every row (0
    // tells the kernel to read keep_k).
    let keep_k = match (step.keep, &rows_in.top_k) {
        (StepKeep::PerRow, Some(k)) => Some(k.k),
        _ => None,
    };
    t.keep_count = match (keep_k, step.keep) {
        (Some(_), _) => 0,
        (None, StepKeep::All(c)) => c,
        (None, _) => step.width as u32,
    };
    t.p = options.top_p;
    t.min_p = options.min_p;
    t.seed = options.seed;
    t.row_t = u32::from(rows_in.temperature.is_some());
    t.row_p = u32::from(rows_in.top_p.is_some());
    t.row_min_p = u32::from(rows_in.min_p.is_some());
    t.seeded = u32::from(rows_in.uniforms.is_none());
    t.count_kept = u32::from(check.kept_count().is_some());
    let null = std::ptr::null_mut;
    let args = runtime::TopKDrawArgs {
        values: values.ptr(),
        indices: indices.ptr(),
        temperatures: rows_in.temperature.map_or(null(), |b| b.ptr()),
        keep_k: keep_k.map_or(null(), |b| b.ptr()),
        top_p: rows_in.top_p.map_or(null(), |b| b.ptr()),
        min_p: rows_in.min_p.map_or(null(), |b| b.ptr()),
        uniforms: rows_in.uniforms.map_or(null(), |b| b.ptr()),
        tokens: tokens.ptr(),
        kept: check.draw.kept.ptr(),
        kept_count: check.kept_count().map_or(null(), |b| b.ptr()),
        check: check.draw.slots.ptr(),
    };
    let mut uses: Vec<&dyn crate::stream::Uses> =
        vec![values, indices, tokens, &check.draw.kept, &check.draw.slots];
    if let Some(count) = check.kept_count() {
        uses.push(count);
    }
    for b in [
        rows_in.temperature,
        rows_in.top_p,
        rows_in.min_p,
        rows_in.uniforms,
    ]
    .into_iter()
    .flatten()
    {
        uses.push(b);
    }
    if let Some(k) = keep_k {
        uses.push(k);
    }
    stream.with_queue(&uses, |s| runtime::launch(s, plan, args))
}

/// A sampling parameter of f32 values: its name, its range as the errors
/// state it, and the test of it.
struct Param {
    name: &'static str,
    range: &'static str,
    valid: fn(f32) -> bool,
}

const TEMPERATURE: Param = Param {
    name: "temperature",
    range: "a finite number >= 0",
    valid: |t| t >= 0.0 && t.is_finite(),
};
const TOP_P: Param = Param {
    name: "top_p",
    range: "in (0, 1]",
    valid: |p| p > 0.0 && p <= 1.0,
};
const MIN_P: Param = Param {
    name: "min_p",
    range: "in [0, 1]",
    valid: |m| (0.0..=1.0).contains(&m),
};

impl Param {
    /// [`per_row_values`] of this parameter.
    fn values(&self, given: Option<&[f32]>, default: f32, rows: usize) -> Result<Vec<f32>> {
        per_row_values(given, default, rows, self.name, self.range, self.valid)
    }
}

/// The value of every row: `given[r]` (checked to be `rows` values in
/// range) or `default` (checked too).
fn per_row_values<V: Copy + std::fmt::Display>(
    given: Option<&[V]>,
    default: V,
    rows: usize,
    name: &'static str,
    range: &str,
    valid: impl Fn(V) -> bool,
) -> Result<Vec<V>> {
    match given {
        Some(values) => {
            check_len(values.len(), rows, name)?;
            if let Some((r, v)) = values.iter().enumerate().find(|(_, v)| !valid(**v)) {
                return Err(invalid(name, format!("{name}[{r}] = {v}: must be {range}")));
            }
            Ok(values.to_vec())
        }
        None if valid(default) => Ok(vec![default; rows]),
        None => Err(invalid(
            name,
            format!("{name} = {default}: must be {range}"),
        )),
    }
}

/// Temperature 0: the largest logit of every row, the lowest index among
/// equals (top-1 by [`topk`](crate::topk), whose order puts NaN first: such
/// a row is refused).
fn greedy<T: LogitsInput>(device: &Device, logits: Batch<'_, T>) -> Result<DeviceBuffer<i32>> {
    let top = topk(device, logits, 1, TopkOptions::default())?;
    let values = top.values.download()?;
    // NaN is the only value not comparable with itself.
    if let Some(r) = values.iter().position(|v| v.partial_cmp(v).is_none()) {
        return Err(invalid(
            "logits",
            format!("row {r} holds a NaN: it has no largest logit"),
        ));
    }
    Ok(top.indices)
}

fn invalid(name: &'static str, reason: String) -> Error {
    Error::InvalidArgument { name, reason }
}
