//! Softmax of rows of logits with a temperature: the probabilities that
//! sampling takes.
use super::scan::Batch;
use crate::device::{Device, DeviceBuffer, Element};
use crate::error::{Error, Result};
use crate::runtime;
use crate::stream::{check_len, Layout, Part, Stream, Workspace};

/// Logit types of [`softmax`]: f16, bf16 and f32 (the probabilities are
/// f32 whatever the logits).
pub trait SoftmaxInput: Element {}
impl SoftmaxInput for half::f16 {}
impl SoftmaxInput for half::bf16 {}
impl SoftmaxInput for f32 {}

/// The temperature that a [`softmax`] divides each row by.
#[derive(Debug, Clone, Copy)]
pub enum Temperature<'a> {
    /// The same for every row: a positive finite number (1: the plain
    /// softmax).
    All(f32),
    /// Row r's is `temperatures[r]` (host values, one per row, each a
    /// positive finite number; [`softmax`] only: the stream-ordered form
    /// takes [`Temperature::OnDevice`]).
    PerRow(&'a [f32]),
    /// Row r's is `temperatures[r]`, on the device (one per row). Not
    /// checked on the host: a row whose temperature is not a positive
    /// finite number comes out NaN.
    OnDevice(&'a DeviceBuffer<f32>),
}

impl Default for Temperature<'_> {
    fn default() -> Self {
        Temperature::All(1.0)
    }
}

/// The probabilities `softmax(x / T)` of every row of `logits`, as
/// `torch.softmax(logits / T, dim=-1)` in f32 (`rows x n`, row-major).
///
/// One launch of the SOFTMAX kernel on the vector cores (docs/algorithms.md,
/// "Softmax (SOFTMAX)"): each row, cut into pieces spread over the cores
/// where that balances them (a single row runs on every core), is read once for its maximum and
/// its sum of exponentials and once more for the probabilities.
///
/// Numerics (f32 throughout): y = exp(x * s - M) * (1 / S), with s the f32
/// reciprocal of T, M the row's largest x * s and S the row's sum of
/// exp(x * s - M) (summed per chunk of 4096, the chunks and pieces rescaled
/// to the running maximum). The exponent is off by about 3 (|x s| + |M|)
/// 2^-24, which is each probability's relative error, plus the sum's
/// roundings (about 70 per chunk of 4096, and (2 |M| + 3) 2^-24 per rescale):
/// docs/algorithms.md, "Softmax (SOFTMAX)", states the bound the tests
/// check (on an NPU, add the Exp instruction's own error). Non-finite logits as PyTorch: -inf
/// gives probability 0 (masked logits); a row holding a NaN or a +inf, or
/// holding nothing but -inf, gives NaN everywhere.
///
/// Errors ([`Error::InvalidArgument`]): a temperature that is not a
/// positive finite number, or per-row temperatures whose count is not the
/// row count (named `temperature`); `logits` or the temperatures on
/// another device. Rows of no entries give an empty result.
pub fn softmax<'a, T: SoftmaxInput>(
    device: &Device,
    logits: impl Into<Batch<'a, T>>,
    temperature: Temperature<'_>,
) -> Result<DeviceBuffer<f32>> {
    softmax_kept(device, logits.into(), temperature, None)
}

/// The blocking [`softmax`] of what `keep` keeps of each row (sampling's
/// top-k; `None`: every entry).
pub(crate) fn softmax_kept<T: SoftmaxInput>(
    device: &Device,
    logits: Batch<'_, T>,
    temperature: Temperature<'_>,
    keep: Option<Keep<'_, T>>,
) -> Result<DeviceBuffer<f32>> {
    if !device.same(logits.data().device()) {
        return Err(Error::InvalidArgument {
            name: "logits",
            reason: "the buffer lives on another device".into(),
        });
    }
    let (rows, n) = (logits.row_count(), logits.row_len());
    let uploaded;
    let temperature = match temperature {
        Temperature::PerRow(values) => {
            check_len(values.len(), rows, "temperature")?;
            if let Some((r, t)) = values.iter().enumerate().find(|(_, t)| !valid(**t)) {
                return Err(out_of_range(&format!("temperature[{r}] = {t}")));
            }
            uploaded = device.upload(values)?;
            Temperature::OnDevice(&uploaded)
        }
        other => other,
    };
    let bytes = softmax_workspace_bytes::<T>(device, rows, n)?;
    let mut probs = device.alloc_uninit::<f32>(rows * n)?;
    let mut workspace = Workspace::new(device, bytes)?;
    device.blocking(|stream| {
        softmax_kept_on(
            stream,
            logits,
            temperature,
            keep,
            &mut probs,
            &mut workspace,
        )
    })?;
    Ok(probs)
}

fn valid(t: f32) -> bool {
    t > 0.0 && t.is_finite()
}

fn out_of_range(what: &str) -> Error {
    Error::InvalidArgument {
        name: "temperature",
        reason: format!("{what}: must be a positive finite number"),
    }
}

/// The SOFTMAX launch (none for an empty input) and its workspace: the
/// pieces' slots.
struct SoftmaxPlan {
    launch: Option<algos::LaunchPlan<algos::SoftmaxTiling>>,
    layout: Layout,
    slots: Part,
}

impl SoftmaxPlan {
    fn new<T: SoftmaxInput>(
        device: &Device,
        rows: usize,
        n: usize,
        scale: Option<f32>,
        keep: Option<algos::SoftmaxKeep>,
    ) -> Result<SoftmaxPlan> {
        let algo = algos::Softmax::new(T::DTYPE)?;
        let launch = (rows > 0 && n > 0)
            .then(|| algo.plan(device.profile(), rows as u64, n as u64, scale, keep))
            .transpose()?;
        let mut layout = Layout::default();
        let slots = layout.add(launch.as_ref().map_or(0, |l| l.workspace_bytes as usize));
        Ok(SoftmaxPlan {
            launch,
            layout,
            slots,
        })
    }
}

/// Bytes of [`Workspace`] that [`softmax_on`] needs for `rows` rows of `n`
/// logits of type `T` (32 bytes per piece of a row: a few KiB).
pub fn softmax_workspace_bytes<T: SoftmaxInput>(
    device: &Device,
    rows: usize,
    n: usize,
) -> Result<usize> {
    Ok(SoftmaxPlan::new::<T>(device, rows, n, None, None)?
        .layout
        .bytes())
}

/// The stream-ordered [`softmax`]: enqueues the launch on `stream` and
/// returns at once, writing the `rows x n` probabilities into `probs`
/// (caller-owned). No allocation, no host synchronisation. Errors as for
/// [`softmax`], plus [`Temperature::PerRow`] (host values: upload them and
/// pass [`Temperature::OnDevice`]), and `probs` or `workspace` of the wrong
/// size or device.
pub fn softmax_on<'a, T: SoftmaxInput>(
    stream: &Stream,
    logits: impl Into<Batch<'a, T>>,
    temperature: Temperature<'_>,
    probs: &mut DeviceBuffer<f32>,
    workspace: &mut Workspace,
) -> Result<()> {
    softmax_kept_on(stream, logits.into(), temperature, None, probs, workspace)
}

/// What each row of a [`softmax_kept_on`] keeps: its `count[r]` largest
/// logits in the top-k order (descending, ties by index, NaN first), the
/// others probability 0 (`count[r]` = 0: all of them). The last kept one
/// is `values[r * width + count[r] - 1]`, at position
/// `indices[r * width + count[r] - 1]` in the row (`indices` `None`: at
/// `count[r] - 1`, the row being in that order): a [`topk`](crate::topk)'s
/// sorted output. A row that keeps one entry is one-hot on it (NaN when it
/// is a NaN).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keep<'a, T: Element> {
    pub(crate) count: KeepCount<'a>,
    pub(crate) values: &'a DeviceBuffer<T>,
    pub(crate) indices: Option<&'a DeviceBuffer<i32>>,
    pub(crate) width: usize,
}

/// How many entries each row of a [`Keep`] keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeepCount<'a> {
    /// Row r keeps `counts[r]` (0: all; a count past the width, negative,
    /// or 0 in rows of the top-k order alone makes the row NaN).
    PerRow(&'a DeviceBuffer<i32>),
    /// Every row keeps this many, 1..=width.
    All(u32),
}

/// [`softmax_on`] over what `keep` keeps of each row (sampling's top-k).
/// With a keep, a per-row temperature of 0 keeps one entry (greedy).
pub(crate) fn softmax_kept_on<T: SoftmaxInput>(
    stream: &Stream,
    logits: Batch<'_, T>,
    temperature: Temperature<'_>,
    keep: Option<Keep<'_, T>>,
    probs: &mut DeviceBuffer<f32>,
    workspace: &mut Workspace,
) -> Result<()> {
    let (rows, n) = (logits.row_count(), logits.row_len());
    stream.check_device(logits.data(), "logits")?;
    stream.check_device(probs, "probs")?;
    let (scale, per_row) = match temperature {
        Temperature::All(t) if valid(t) => (Some(1.0 / t), None),
        Temperature::All(t) => return Err(out_of_range(&format!("temperature = {t}"))),
        Temperature::PerRow(_) => {
            return Err(Error::InvalidArgument {
                name: "temperature",
                reason: "host values per row: the stream-ordered form takes them on the device \
                         (Temperature::OnDevice)"
                    .into(),
            })
        }
        Temperature::OnDevice(b) => {
            stream.check_device(b, "temperature")?;
            check_len(b.len(), rows, "temperature")?;
            (None, Some(b))
        }
    };
    if let Some(k) = &keep {
        if let KeepCount::PerRow(count) = k.count {
            stream.check_device(count, "top_k")?;
            check_len(count.len(), rows, "top_k")?;
        }
        check_len(k.values.len(), rows * k.width, "top_k")?;
        if let Some(i) = k.indices {
            check_len(i.len(), rows * k.width, "top_k")?;
        }
    }
    let shape = keep.as_ref().map(|k| algos::SoftmaxKeep {
        width: k.width as u64,
        by_index: k.indices.is_some(),
        count: match k.count {
            KeepCount::PerRow(_) => None,
            KeepCount::All(c) => Some(c),
        },
    });
    let plan = SoftmaxPlan::new::<T>(stream.device(), rows, n, scale, shape)?;
    check_len(probs.len(), rows * n, "probs")?;
    workspace.check(stream, &plan.layout)?;
    let Some(mut launch) = plan.launch else {
        return Ok(());
    };
    let null = std::ptr::null_mut;
    let args = runtime::SoftmaxArgs {
        logits: logits.data().ptr(),
        temperatures: per_row.map_or(null(), |b| b.ptr()),
        keep_k: match keep.as_ref().map(|k| k.count) {
            Some(KeepCount::PerRow(count)) => count.ptr(),
            _ => null(),
        },
        keep_values: keep.as_ref().map_or(null(), |k| k.values.ptr()),
        keep_indices: keep
            .as_ref()
            .and_then(|k| k.indices)
            .map_or(null(), |b| b.ptr()),
        probs: probs.ptr(),
        workspace: workspace.at(plan.slots),
    };
    let mut uses: Vec<&dyn crate::stream::Uses> = vec![logits.data(), &*probs, &*workspace];
    if let Some(b) = per_row {
        uses.push(b);
    }
    if let Some(k) = &keep {
        if let KeepCount::PerRow(count) = k.count {
            uses.push(count);
        }
        uses.push(k.values);
        if let Some(i) = k.indices {
            uses.push(i);
        }
    }
    stream.with_queue(&uses, |s| runtime::launch(s, &mut launch, args))
}
