//! The cost model: replays the per-core traces of a launch as parallel pipes
//! joined by the recorded sync edges and estimates a *modeled* run time on a
//! SoC profile. See `docs/cost-model.md` for the sources and limits.
//!
//! Per core, the pipes MTE1, MTE2, MTE3, FIX, M, V and S run in parallel. The
//! scalar unit issues the core's events in program order; an instruction
//! starts when it has been issued, its pipe is free and its sync predecessors
//! are done (EnQue -> DeQue, FreeTensor -> AllocTensor, SetFlag -> WaitFlag,
//! PipeBarrier, CrossCore set -> wait across cores, SyncAll joining all
//! participants). GM traffic goes through a shared set-associative L2 with a
//! bandwidth of its own into HBM, whose attainable bandwidth all cores share
//! (FIFO bandwidth servers). A launch costs a fixed overhead on top.
//!
//! Every number lives in [`CostParams`]; the ones no public document states
//! are [`Assumption`]s with a range (`crate::params`).

use std::collections::{HashMap, VecDeque};

use ascend_sys as sys;

pub use crate::params::{
    assumptions, assumptions_markdown, Assumption, CostParams, ModelProfile, Worse,
};
use crate::report::{CoreTrace, LaunchReport, Pipe, Task};

/// Why a trace could not be modeled.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    /// The launch failed in the simulator; its trace is incomplete.
    #[error("launch of {kernel} failed in the simulator: {error}")]
    FailedLaunch {
        /// Kernel name.
        kernel: String,
        /// The simulator's diagnostic.
        error: String,
    },
    /// The trace's sync edges cannot be satisfied (a wait without a set).
    #[error("trace of {kernel} deadlocks in the model: {detail}")]
    Deadlock {
        /// Kernel name.
        kernel: String,
        /// Which cores wait for what.
        detail: String,
    },
}

/// Core type of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CoreKind {
    /// Cube core.
    Aic,
    /// Vector core.
    Aiv,
}

impl std::fmt::Display for CoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CoreKind::Aic => "AIC",
            CoreKind::Aiv => "AIV",
        })
    }
}

/// Busy fraction of one pipe over all cores of one type.
#[derive(Debug, Clone, PartialEq)]
pub struct PipeBusy {
    /// Core type.
    pub core: CoreKind,
    /// Pipe.
    pub pipe: Pipe,
    /// Busy time summed over the cores of this type / (cores x modeled time).
    pub fraction: f64,
    /// Busy time of the busiest core of this type on this pipe, seconds.
    pub max_core_busy_s: f64,
}

/// A resource that can bound a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Resource {
    /// One pipe of one core type (its busiest core).
    Pipe(CoreKind, Pipe),
    /// The shared HBM bandwidth (as attainable: peak x efficiency).
    Hbm,
    /// The shared L2 bandwidth.
    L2,
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resource::Pipe(c, p) => write!(f, "{c} {}", pipe_name(*p)),
            Resource::Hbm => f.write_str("HBM"),
            Resource::L2 => f.write_str("L2"),
        }
    }
}

/// How long a resource was busy during a launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResourceBusy {
    /// The resource.
    pub resource: Resource,
    /// Busy time, seconds (for a pipe: its busiest core's own work, without
    /// the time it stalled on the shared L2 and HBM bandwidth).
    pub busy_s: f64,
}

/// The resource with the highest busy fraction of the modeled time, and that
/// fraction. A launch whose critical resource is far from 100 % busy is bound
/// by latencies, sync edges and launch overhead, not by a resource.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Critical {
    /// The busiest resource.
    pub resource: Resource,
    /// Its busy time / the modeled time.
    pub busy: f64,
}

impl std::fmt::Display for Critical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:.0}%", self.resource, 100.0 * self.busy)
    }
}

/// The critical resource of busy times over a modeled time of `time_s`.
pub fn critical_of(resources: &[ResourceBusy], time_s: f64) -> Critical {
    let best = resources
        .iter()
        .copied()
        .fold(None::<ResourceBusy>, |b, r| match b {
            Some(b) if b.busy_s >= r.busy_s => Some(b),
            _ => Some(r),
        });
    match best {
        Some(r) if time_s > 0.0 => Critical {
            resource: r.resource,
            busy: r.busy_s / time_s,
        },
        Some(r) => Critical {
            resource: r.resource,
            busy: 0.0,
        },
        None => Critical {
            resource: Resource::Hbm,
            busy: 0.0,
        },
    }
}

/// Name of a pipe as AscendC spells it.
pub fn pipe_name(p: Pipe) -> &'static str {
    match p {
        Pipe::S => "S",
        Pipe::V => "V",
        Pipe::M => "M",
        Pipe::Mte1 => "MTE1",
        Pipe::Mte2 => "MTE2",
        Pipe::Mte3 => "MTE3",
        Pipe::Fix => "FIX",
        Pipe::None => "-",
    }
}

/// The modeled performance of one launch (or, from [`ModelReport::then`], of
/// launches run one after the other on a stream).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReport {
    /// Kernel name.
    pub kernel: String,
    /// Modeled time: the cores' run (first issue to last completion) plus the
    /// launch overhead, seconds.
    pub time_s: f64,
    /// The cores' run alone, seconds.
    pub kernel_time_s: f64,
    /// Launch (and copy/memset task) overhead included in `time_s`, seconds.
    pub launch_overhead_s: f64,
    /// Tasks this report covers: kernel launches, and the stream's copy and
    /// memset tasks.
    pub launches: usize,
    /// Elements the caller said the launch processed (for the per-element numbers).
    pub elements: u64,
    /// Bytes read from HBM (L2 line fills).
    pub hbm_read_bytes: u64,
    /// Bytes written to HBM (write-back of lines the launch dirtied).
    pub hbm_write_bytes: u64,
    /// GM bytes the cores moved through L2 (reads + writes, as requested).
    pub l2_bytes: u64,
    /// Of the GM read bytes, those that hit in L2.
    pub l2_hit_bytes: u64,
    /// Per-pipe busy fractions per core type (only pipes that were used).
    pub busy: Vec<PipeBusy>,
    /// HBM busy fraction (HBM bytes at the attainable bandwidth / modeled time).
    pub hbm_busy: f64,
    /// L2 busy fraction (L2 bytes at the L2 bandwidth / modeled time).
    pub l2_busy: f64,
    /// Busy time of every resource that was used.
    pub resources: Vec<ResourceBusy>,
    /// The busiest resource.
    pub critical: Critical,
}

impl ModelReport {
    /// HBM bytes (read + write).
    pub fn hbm_bytes(&self) -> u64 {
        self.hbm_read_bytes + self.hbm_write_bytes
    }
    /// HBM bytes per element (0 when no elements were given).
    pub fn hbm_bytes_per_element(&self) -> f64 {
        per(self.hbm_bytes(), self.elements)
    }
    /// L2 bytes per element (0 when no elements were given).
    pub fn l2_bytes_per_element(&self) -> f64 {
        per(self.l2_bytes, self.elements)
    }
    /// Modeled GB/s of `bytes` (for example the operation's minimal traffic).
    pub fn gbps(&self, bytes: u64) -> f64 {
        if self.time_s > 0.0 {
            bytes as f64 / self.time_s / 1e9
        } else {
            0.0
        }
    }
    /// This launch followed by `next` on the same stream: times, bytes and
    /// busy times add up; fractions are over the combined time (pipe
    /// fractions weighted by each launch's time).
    pub fn then(self, next: ModelReport) -> ModelReport {
        let time_s = self.time_s + next.time_s;
        let frac = |x: f64, tx: f64, y: f64, ty: f64| {
            if time_s > 0.0 {
                (x * tx + y * ty) / time_s
            } else {
                0.0
            }
        };
        let mut busy = self.busy.clone();
        for b in &next.busy {
            match busy
                .iter_mut()
                .find(|a| a.core == b.core && a.pipe == b.pipe)
            {
                Some(a) => {
                    a.fraction = frac(a.fraction, self.time_s, b.fraction, next.time_s);
                    a.max_core_busy_s += b.max_core_busy_s;
                }
                None => busy.push(PipeBusy {
                    fraction: frac(0.0, 0.0, b.fraction, next.time_s),
                    ..b.clone()
                }),
            }
        }
        for a in busy.iter_mut() {
            if !next
                .busy
                .iter()
                .any(|b| a.core == b.core && a.pipe == b.pipe)
            {
                a.fraction = frac(a.fraction, self.time_s, 0.0, 0.0);
            }
        }
        let mut resources = self.resources.clone();
        for r in &next.resources {
            match resources.iter_mut().find(|a| a.resource == r.resource) {
                Some(a) => a.busy_s += r.busy_s,
                None => resources.push(*r),
            }
        }
        ModelReport {
            kernel: self.kernel,
            time_s,
            kernel_time_s: self.kernel_time_s + next.kernel_time_s,
            launch_overhead_s: self.launch_overhead_s + next.launch_overhead_s,
            launches: self.launches + next.launches,
            elements: self.elements,
            hbm_read_bytes: self.hbm_read_bytes + next.hbm_read_bytes,
            hbm_write_bytes: self.hbm_write_bytes + next.hbm_write_bytes,
            l2_bytes: self.l2_bytes + next.l2_bytes,
            l2_hit_bytes: self.l2_hit_bytes + next.l2_hit_bytes,
            busy,
            hbm_busy: frac(self.hbm_busy, self.time_s, next.hbm_busy, next.time_s),
            l2_busy: frac(self.l2_busy, self.time_s, next.l2_busy, next.time_s),
            critical: critical_of(&resources, time_s),
            resources,
        }
    }
}

fn per(bytes: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        bytes as f64 / n as f64
    }
}

/// Models one launch recorded by the simulator. `elements` is the element
/// count the caller wants per-element numbers for.
pub fn model_launch(
    report: &LaunchReport,
    params: &CostParams,
    elements: u64,
) -> Result<ModelReport, CostError> {
    if report.status != 0 {
        return Err(CostError::FailedLaunch {
            kernel: report.kernel.clone(),
            error: report.error.clone(),
        });
    }
    if report.task != Task::Kernel {
        return Ok(model_copy_task(report, params, elements));
    }
    let mut names: HashMap<u16, String> = HashMap::new();
    let mut op_name = |op: u16| {
        names
            .entry(op)
            .or_insert_with(|| LaunchReport::op_name(op))
            .clone()
    };
    model_traces(
        &report.kernel,
        &report.traces,
        &mut op_name,
        params,
        elements,
    )
}

/// A copy or memset task of a stream: a fixed task overhead, then its HBM
/// bytes (read and written) at the copy rate. No core runs and the L2 is not
/// modeled for it (every byte goes to HBM, the pessimistic case).
fn model_copy_task(report: &LaunchReport, p: &CostParams, elements: u64) -> ModelReport {
    let bytes = report.gm_read_bytes + report.gm_write_bytes;
    let attainable = p.hbm_bytes_per_cycle() * p.clock_hz;
    let hbm_s = bytes as f64 / attainable;
    let kernel_time_s = hbm_s / p.copy_task_bandwidth;
    let time_s = kernel_time_s + p.copy_task_overhead_s;
    let resources = vec![ResourceBusy {
        resource: Resource::Hbm,
        busy_s: hbm_s,
    }];
    ModelReport {
        kernel: report.kernel.clone(),
        time_s,
        kernel_time_s,
        launch_overhead_s: p.copy_task_overhead_s,
        launches: 1,
        elements,
        hbm_read_bytes: report.gm_read_bytes,
        hbm_write_bytes: report.gm_write_bytes,
        l2_bytes: 0,
        l2_hit_bytes: 0,
        busy: Vec::new(),
        hbm_busy: hbm_s / time_s,
        l2_busy: 0.0,
        critical: critical_of(&resources, time_s),
        resources,
    }
}

/// Models launches run one after the other on one stream (their times add up).
pub fn model_launches(
    reports: &[LaunchReport],
    params: &CostParams,
    elements: u64,
) -> Result<Option<ModelReport>, CostError> {
    let mut total: Option<ModelReport> = None;
    for r in reports {
        let m = model_launch(r, params, elements)?;
        total = Some(match total {
            None => m,
            Some(t) => t.then(m),
        });
    }
    // Named after its first kernel, not after a memset queued before it.
    if let (Some(t), Some(k)) = (
        total.as_mut(),
        reports.iter().find(|r| r.task == Task::Kernel),
    ) {
        t.kernel.clone_from(&k.kernel);
    }
    Ok(total)
}

/// Models a set of per-core traces (AICs first, then AIVs, as the simulator
/// records them; `peer` fields index this slice). `op_name` names a trace
/// event's `op` (the simulator's intern table, or a test's own).
pub fn model_traces(
    kernel: &str,
    traces: &[CoreTrace],
    op_name: &mut dyn FnMut(u16) -> String,
    params: &CostParams,
    elements: u64,
) -> Result<ModelReport, CostError> {
    let engine = run_engine(kernel, traces, op_name, params, false)?;
    Ok(engine.report(kernel, traces, params, elements))
}

/// Runs the engine over `traces` (recording the per-event profile when
/// `profile`); a deadlock names the kernel.
fn run_engine(
    kernel: &str,
    traces: &[CoreTrace],
    op_name: &mut dyn FnMut(u16) -> String,
    params: &CostParams,
    profile: bool,
) -> Result<Engine, CostError> {
    let mut engine = Engine::new(traces, params);
    if profile {
        engine.profile = Some(Profile {
            finish: vec![HashMap::new(); traces.len()],
            work: vec![vec![HashMap::new(); PIPES]; traces.len()],
            timeline: vec![Vec::new(); traces.len()],
        });
    }
    engine
        .run(traces, op_name)
        .map_err(|detail| CostError::Deadlock {
            kernel: kernel.to_string(),
            detail,
        })?;
    Ok(engine)
}

/// Where one core's modeled time went: each event name with the cycles by
/// which events of that name pushed the core's finish time out (an
/// attribution of the critical path, for finding what to optimise; the
/// entries add up to the core's run time).
#[derive(Debug, Clone)]
pub struct CoreProfile {
    /// Index of the core in the launch's traces.
    pub core: usize,
    /// The core's run time, cycles.
    pub cycles: f64,
    /// Event names (API call, or the sync kind) and their cycles, largest first.
    pub by_event: Vec<(String, f64)>,
    /// The pipe with the most work on this core (AscendC's name: "V",
    /// "MTE2", ...) and its work, cycles: when it is near `cycles`, that
    /// pipe bounds the core, whatever `by_event` blames (a GM store that
    /// finishes last is charged the vector work it waited for).
    pub busiest_pipe: (&'static str, f64),
    /// That pipe's work by event name, largest first.
    pub busiest_by_event: Vec<(String, f64)>,
    /// The events that pushed the finish time out, in model order, each
    /// with the finish time after it (cycles): the core's phases in time.
    pub timeline: Vec<(String, f64)>,
}

/// Profiles one kernel launch, by event name: of each core type (cube
/// first) the slowest core, or with `nth` the nth core of that type (in a
/// kernel that ends in a SyncAll every core leaves it at about the same
/// time, and the slowest says little).
pub fn profile_launch(
    report: &LaunchReport,
    params: &CostParams,
    nth: Option<usize>,
) -> Result<Vec<CoreProfile>, CostError> {
    if report.status != 0 || report.task != Task::Kernel {
        return Err(CostError::FailedLaunch {
            kernel: report.kernel.clone(),
            error: report.error.clone(),
        });
    }
    profile_traces(
        &report.kernel,
        &report.traces,
        &mut LaunchReport::op_name,
        params,
        nth,
    )
}

/// [`profile_launch`] of a set of per-core traces (`op_name` as for
/// [`model_traces`]).
pub fn profile_traces(
    kernel: &str,
    traces: &[CoreTrace],
    op_name: &mut dyn FnMut(u16) -> String,
    params: &CostParams,
    nth: Option<usize>,
) -> Result<Vec<CoreProfile>, CostError> {
    let mut engine = run_engine(kernel, traces, op_name, params, true)?;
    let Profile {
        mut finish,
        mut work,
        mut timeline,
    } = engine.profile.take().unwrap_or_default();
    let sorted = |m: HashMap<String, f64>| {
        let mut v: Vec<(String, f64)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    };
    let mut out = Vec::new();
    for cube in [true, false] {
        let mut of_type = (0..traces.len()).filter(|&c| traces[c].is_cube == cube);
        let picked = match nth {
            Some(n) => of_type.nth(n),
            None => of_type.max_by(|&a, &b| {
                engine.cores[a]
                    .all_done()
                    .total_cmp(&engine.cores[b].all_done())
            }),
        };
        if let Some(c) = picked {
            let st = &engine.cores[c];
            let i = (0..PIPES)
                .max_by(|&a, &b| st.work[a].total_cmp(&st.work[b]))
                .unwrap_or(0);
            out.push(CoreProfile {
                core: c,
                cycles: st.all_done(),
                by_event: sorted(std::mem::take(&mut finish[c])),
                busiest_pipe: (pipe_name(PIPE_LIST[i]), st.work[i]),
                busiest_by_event: sorted(std::mem::take(&mut work[c][i])),
                timeline: std::mem::take(&mut timeline[c]),
            });
        }
    }
    Ok(out)
}

/// A trace event's name in a profile.
fn event_name(e: &sys::ascsim_event, op_name: &mut dyn FnMut(u16) -> String) -> String {
    match u32::from(e.kind) {
        sys::ASCSIM_EV_INSTR => op_name(e.op),
        sys::ASCSIM_EV_SET_FLAG => "SetFlag".into(),
        sys::ASCSIM_EV_WAIT_FLAG => "WaitFlag".into(),
        sys::ASCSIM_EV_PIPE_BARRIER => "PipeBarrier".into(),
        sys::ASCSIM_EV_ENQUE => "EnQue".into(),
        sys::ASCSIM_EV_DEQUE => "DeQue".into(),
        sys::ASCSIM_EV_FREE => "FreeTensor".into(),
        sys::ASCSIM_EV_ALLOC => "AllocTensor".into(),
        sys::ASCSIM_EV_CROSS_SET => "CrossCoreSetFlag".into(),
        sys::ASCSIM_EV_CROSS_WAIT => "CrossCoreWaitFlag".into(),
        sys::ASCSIM_EV_SYNC_ALL => "SyncAll".into(),
        k => format!("event kind {k}"),
    }
}

// ---------------------------------------------------------------- engine

const PIPES: usize = 7;
const PIPE_LIST: [Pipe; PIPES] = [
    Pipe::S,
    Pipe::V,
    Pipe::M,
    Pipe::Mte1,
    Pipe::Mte2,
    Pipe::Mte3,
    Pipe::Fix,
];

/// How many instructions an event stands for: the simulator records a run
/// of equal scalar UB accesses as one event with the count in `repeats`.
fn scalar_run(e: &sys::ascsim_event, pipe: Pipe) -> f64 {
    if u32::from(e.kind) == sys::ASCSIM_EV_INSTR && pipe == Pipe::S && e.gm_bytes == 0 {
        f64::from(e.repeats.max(1))
    } else {
        1.0
    }
}

fn pipe_index(p: Pipe) -> Option<usize> {
    PIPE_LIST.iter().position(|q| *q == p)
}

/// How the model costs an instruction, by op name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum OpClass {
    Plain,
    Reduce,
    Gather,
    GatherMask,
    Cast,
    Compare,
    ScalarAccess,
    GmScalarRead,
    DcacheFlush,
    Mmad,
}

fn classify(name: &str) -> OpClass {
    match name {
        "ReduceSum" | "ReduceMax" | "ReduceMin" | "WholeReduceSum" | "WholeReduceMax"
        | "WholeReduceMin" | "BlockReduceSum" | "BlockReduceMax" | "BlockReduceMin" => {
            OpClass::Reduce
        }
        "Gather" => OpClass::Gather,
        "GatherMask" => OpClass::GatherMask,
        "Cast" => OpClass::Cast,
        "Compare" | "CompareScalar" | "Select" => OpClass::Compare,
        "LocalTensor::GetValue" | "LocalTensor::SetValue" | "GlobalTensor::SetValue" => {
            OpClass::ScalarAccess
        }
        "GlobalTensor::GetValue" => OpClass::GmScalarRead,
        "DataCacheCleanAndInvalid" => OpClass::DcacheFlush,
        "Mmad" => OpClass::Mmad,
        _ => OpClass::Plain,
    }
}

/// Set-associative LRU cache of GM lines (write-allocate, write-back): sets
/// are indexed by line address modulo the set count, each set replaces its
/// least recently used way. Dirty data is tracked per 32-byte sector (the DMA
/// granularity of GM writes), so a line written by several cores is written
/// back once, with the union of what they wrote.
#[derive(Debug)]
struct L2 {
    line: u64,
    sets: u64,
    ways: usize,
    slots: Vec<Slot>,
    stamp: u64,
}

/// One way of one set: tag = line id + 1 (0: empty), LRU stamp, dirty sectors.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    tag: u64,
    stamp: u64,
    dirty: u64,
}

/// Bytes of one dirty-tracking sector.
const SECTOR: u64 = 32;

/// What an access cost in HBM traffic.
#[derive(Debug, Default, Clone, Copy)]
struct Access {
    hit_bytes: u64,
    miss_bytes: u64,
    hbm_read: u64,
    hbm_write: u64,
}

impl L2 {
    fn new(bytes: u64, line: u64, ways: u32) -> L2 {
        // At most 64 sectors per line (the dirty mask is a u64).
        let line = line.clamp(SECTOR, 64 * SECTOR);
        let lines = (bytes / line).max(1);
        let ways = u64::from(ways).clamp(1, lines);
        let sets = (lines / ways).max(1);
        L2 {
            line,
            sets,
            ways: ways as usize,
            slots: vec![Slot::default(); (sets * ways) as usize],
            stamp: 0,
        }
    }

    /// Marks line `id` most recently used in its set, ORs `dirty` into its
    /// mask, evicting the set's least recently used way if needed. Returns the
    /// previous mask if the line was resident.
    fn touch(&mut self, id: u64, dirty: u64) -> Option<u64> {
        self.stamp += 1;
        let first = (id % self.sets) as usize * self.ways;
        let set = &mut self.slots[first..first + self.ways];
        if let Some(slot) = set.iter_mut().find(|s| s.tag == id + 1) {
            let prev = slot.dirty;
            slot.stamp = self.stamp;
            slot.dirty |= dirty;
            return Some(prev);
        }
        // Empty ways have stamp 0 and go first.
        if let Some(victim) = set.iter_mut().min_by_key(|s| s.stamp) {
            *victim = Slot {
                tag: id + 1,
                stamp: self.stamp,
                dirty,
            };
        }
        None
    }

    /// Calls `f(line id, first byte, end byte)` for each line of [addr, addr + len).
    fn for_lines(&self, addr: u64, len: u64, mut f: impl FnMut(u64, u64, u64)) {
        if len == 0 {
            return;
        }
        for id in addr / self.line..=(addr + len - 1) / self.line {
            f(
                id,
                (id * self.line).max(addr),
                ((id + 1) * self.line).min(addr + len),
            );
        }
    }

    /// A read of [addr, addr + len): hit/miss per line; misses fill whole lines.
    fn read(&mut self, addr: u64, len: u64) -> Access {
        let mut a = Access::default();
        let mut spans = Vec::new();
        self.for_lines(addr, len, |id, lo, hi| spans.push((id, lo, hi)));
        for (id, lo, hi) in spans {
            if self.touch(id, 0).is_some() {
                a.hit_bytes += hi - lo;
            } else {
                a.miss_bytes += hi - lo;
                a.hbm_read += self.line;
            }
        }
        a
    }

    /// A write of [addr, addr + len): lines are allocated without a fill; each
    /// 32-byte sector costs HBM write-back when it first becomes dirty.
    fn write(&mut self, addr: u64, len: u64) -> Access {
        let mut a = Access::default();
        let mut spans = Vec::new();
        self.for_lines(addr, len, |id, lo, hi| spans.push((id, lo, hi)));
        for (id, lo, hi) in spans {
            let base = id * self.line;
            let (s0, s1) = ((lo - base) / SECTOR, (hi - base).div_ceil(SECTOR));
            let mask = if s1 - s0 >= 64 {
                u64::MAX
            } else {
                ((1u64 << (s1 - s0)) - 1) << s0
            };
            let prev = self.touch(id, mask);
            let new = mask & !prev.unwrap_or(0);
            if new == 0 {
                a.hit_bytes += hi - lo;
            } else {
                a.miss_bytes += hi - lo;
                a.hbm_write += u64::from(new.count_ones()) * SECTOR;
            }
        }
        a
    }
}

/// The GM byte ranges of a DMA event. The trace gives the first address, the
/// span (`gm_bytes`), the burst count (`repeats`) and the bytes moved; when
/// those describe evenly strided bursts (DataCopy with a source gap, Nd2Nz
/// rows, Fixpipe rows), the bursts are reconstructed so that the gaps between
/// them cost no L2 or HBM traffic. Otherwise the whole span is used.
fn gm_bursts(e: &sys::ascsim_event) -> Vec<(u64, u64)> {
    let (count, bytes, span) = (u64::from(e.repeats), e.bytes, e.gm_bytes);
    if count > 1 && bytes < span && bytes % count == 0 {
        let len = bytes / count;
        let rest = span - len;
        if len > 0 && rest % (count - 1) == 0 && rest / (count - 1) > len {
            let stride = rest / (count - 1);
            return (0..count).map(|i| (e.gm_addr + i * stride, len)).collect();
        }
    }
    vec![(e.gm_addr, span)]
}

#[derive(Debug, Default, Clone)]
struct CoreState {
    pos: usize,
    /// Scalar issue cursor.
    issue: f64,
    /// When each pipe can start its next instruction.
    free: [f64; PIPES],
    /// When everything issued so far on each pipe is done (incl. latency).
    done: [f64; PIPES],
    /// Time each pipe was occupied (including stalls on the shared L2/HBM servers).
    busy: [f64; PIPES],
    /// Time each pipe spent on its own work (occupancy minus stalls on the
    /// shared servers): what the critical resource is judged by.
    work: [f64; PIPES],
    /// Start times of the instructions still counted in each pipe's queue.
    queued: [VecDeque<f64>; PIPES],
    flags: HashMap<(i32, i32), VecDeque<f64>>,
    enqueued: HashMap<(i32, i32), VecDeque<f64>>,
    freed: HashMap<(i32, i32), VecDeque<f64>>,
    sync_arrived: Option<u32>,
}

impl CoreState {
    fn all_done(&self) -> f64 {
        self.done
            .iter()
            .chain(self.free.iter())
            .fold(self.issue, |a, b| a.max(*b))
    }
    /// Done time of pipe `p` as a sync source (S and NONE: the issue cursor).
    fn src_done(&self, p: Pipe) -> f64 {
        match pipe_index(p) {
            Some(0) | None => self.issue,
            Some(i) => self.done[i],
        }
    }
    /// A sync edge that orders later work on pipe `p` after `t`.
    fn gate(&mut self, p: Pipe, t: f64) {
        match pipe_index(p) {
            Some(0) | None => self.issue = self.issue.max(t),
            Some(i) => self.free[i] = self.free[i].max(t),
        }
    }
}

#[derive(Debug)]
struct Engine {
    cores: Vec<CoreState>,
    l2: L2,
    hbm_free: f64,
    l2_free: f64,
    hbm_read: u64,
    hbm_write: u64,
    l2_bytes: u64,
    l2_hit: u64,
    /// CrossCore sets by sequence number: one member for a direct set, every
    /// member of a group round (modes 0 and 1, and mode 2 from the AIVs).
    cross_sets: Rendezvous,
    /// SyncAll rounds.
    sync_all: Rendezvous,
    classes: HashMap<u16, OpClass>,
    p: CostParams,
    /// Filled only when profiling.
    profile: Option<Profile>,
}

/// Meetings of several cores named by a sequence number (a SyncAll round, a
/// CrossCore set or group round): complete once every member has arrived, at
/// the latest arrival.
#[derive(Debug, Default)]
struct Rendezvous {
    /// Members per sequence number: the events of `kind` naming it.
    members: HashMap<u32, usize>,
    /// Arrival times so far: how many, and the latest.
    arrivals: HashMap<u32, (usize, f64)>,
}

impl Rendezvous {
    fn of(traces: &[CoreTrace], kind: u32) -> Rendezvous {
        let mut members: HashMap<u32, usize> = HashMap::new();
        for e in traces.iter().flat_map(|t| &t.events) {
            if u32::from(e.kind) == kind {
                *members.entry(e.seq).or_default() += 1;
            }
        }
        Rendezvous {
            members,
            arrivals: HashMap::new(),
        }
    }

    fn arrive(&mut self, seq: u32, t: f64) {
        let a = self.arrivals.entry(seq).or_insert((0, 0.0));
        *a = (a.0 + 1, a.1.max(t));
    }

    /// The latest arrival once every member has arrived.
    fn complete(&self, seq: u32) -> Option<f64> {
        let (arrived, latest) = *self.arrivals.get(&seq)?;
        (arrived >= self.members.get(&seq).copied().unwrap_or(0)).then_some(latest)
    }
}

/// Per core: the cycles by which each event name pushed the core's finish
/// time out, and each pipe's work by event name.
#[derive(Debug, Default)]
struct Profile {
    finish: Vec<HashMap<String, f64>>,
    work: Vec<Vec<HashMap<String, f64>>>,
    timeline: Vec<Vec<(String, f64)>>,
}

impl Engine {
    fn new(traces: &[CoreTrace], p: &CostParams) -> Engine {
        Engine {
            cores: vec![CoreState::default(); traces.len()],
            l2: L2::new(p.l2_bytes, p.l2_line_bytes, p.l2_ways),
            hbm_free: 0.0,
            l2_free: 0.0,
            hbm_read: 0,
            hbm_write: 0,
            l2_bytes: 0,
            l2_hit: 0,
            cross_sets: Rendezvous::of(traces, sys::ASCSIM_EV_CROSS_SET),
            sync_all: Rendezvous::of(traces, sys::ASCSIM_EV_SYNC_ALL),
            classes: HashMap::new(),
            p: p.clone(),
            profile: None,
        }
    }

    /// Earliest time core `c` can process its next event; None when finished
    /// or blocked on another core.
    fn next_time(&self, c: usize, traces: &[CoreTrace]) -> Option<f64> {
        let st = &self.cores[c];
        let e = traces[c].events.get(st.pos)?;
        let kind = u32::from(e.kind);
        if kind == sys::ASCSIM_EV_CROSS_WAIT {
            return self.cross_sets.complete(e.seq).map(|t| st.issue.max(t));
        }
        if kind == sys::ASCSIM_EV_SYNC_ALL && st.sync_arrived == Some(e.seq) {
            return self.sync_all.complete(e.seq).map(|t| st.issue.max(t));
        }
        if kind == sys::ASCSIM_EV_INSTR {
            if let Some(i) = pipe_index(Pipe::from_raw(e.pipe)) {
                return Some(st.issue.max(st.free[i]));
            }
        }
        Some(st.issue)
    }

    fn run(
        &mut self,
        traces: &[CoreTrace],
        op_name: &mut dyn FnMut(u16) -> String,
    ) -> Result<(), String> {
        loop {
            let mut best: Option<(usize, f64)> = None;
            let mut unfinished = false;
            for c in 0..traces.len() {
                if self.cores[c].pos < traces[c].events.len() {
                    unfinished = true;
                }
                if let Some(t) = self.next_time(c, traces) {
                    if best.is_none_or(|(_, b)| t < b) {
                        best = Some((c, t));
                    }
                }
            }
            match best {
                Some((c, _)) => self.step(c, traces, op_name),
                None if unfinished => {
                    let stuck: Vec<String> = (0..traces.len())
                        .filter(|&c| self.cores[c].pos < traces[c].events.len())
                        .map(|c| {
                            let e = &traces[c].events[self.cores[c].pos];
                            format!(
                                "core {c} event {} (kind {}, seq {})",
                                self.cores[c].pos, e.kind, e.seq
                            )
                        })
                        .collect();
                    return Err(stuck.join("; "));
                }
                None => return Ok(()),
            }
        }
    }

    fn step(&mut self, c: usize, traces: &[CoreTrace], op_name: &mut dyn FnMut(u16) -> String) {
        if self.profile.is_none() {
            self.step_event(c, traces, op_name);
            return;
        }
        let e = traces[c].events[self.cores[c].pos];
        let before = self.cores[c].all_done();
        let work_before = self.cores[c].work;
        self.step_event(c, traces, op_name);
        let after = self.cores[c].all_done();
        let work_after = self.cores[c].work;
        if after <= before && work_after == work_before {
            return;
        }
        let name = event_name(&e, op_name);
        if let Some(profile) = self.profile.as_mut() {
            if after > before {
                *profile.finish[c].entry(name.clone()).or_default() += after - before;
                profile.timeline[c].push((name.clone(), after));
            }
            for i in 0..PIPES {
                if work_after[i] > work_before[i] {
                    *profile.work[c][i].entry(name.clone()).or_default() +=
                        work_after[i] - work_before[i];
                }
            }
        }
    }

    fn step_event(
        &mut self,
        c: usize,
        traces: &[CoreTrace],
        op_name: &mut dyn FnMut(u16) -> String,
    ) {
        let e = traces[c].events[self.cores[c].pos];
        let pipe = Pipe::from_raw(e.pipe);
        let kind = u32::from(e.kind);
        let p = self.p.clone();
        // The scalar unit spends its issue cost on every event it issues (a
        // scalar event may stand for a run of equal instructions).
        if kind != sys::ASCSIM_EV_SYNC_ALL || self.cores[c].sync_arrived.is_none() {
            let issued = p.scalar_issue_cycles * scalar_run(&e, pipe);
            self.cores[c].issue += issued;
            self.cores[c].busy[0] += issued;
            self.cores[c].work[0] += issued;
        }
        match kind {
            sys::ASCSIM_EV_INSTR => self.instr(c, &e, pipe, op_name),
            sys::ASCSIM_EV_SET_FLAG => {
                let st = &mut self.cores[c];
                let t = st.src_done(pipe);
                st.flags.entry((e.a, e.b)).or_default().push_back(t);
            }
            sys::ASCSIM_EV_WAIT_FLAG => {
                let st = &mut self.cores[c];
                if let Some(t) = st.flags.get_mut(&(e.a, e.b)).and_then(VecDeque::pop_front) {
                    st.gate(pipe, t);
                }
            }
            sys::ASCSIM_EV_PIPE_BARRIER => {
                let st = &mut self.cores[c];
                match pipe_index(pipe) {
                    Some(0) => {}
                    Some(i) => st.free[i] = st.free[i].max(st.done[i]),
                    None => {
                        // PIPE_ALL: everything waits for everything.
                        let t = st.all_done();
                        st.issue = t;
                        st.free.iter_mut().for_each(|f| *f = f.max(t));
                    }
                }
            }
            sys::ASCSIM_EV_ENQUE => {
                let st = &mut self.cores[c];
                let t = st.src_done(pipe);
                st.enqueued.entry((e.a, e.b)).or_default().push_back(t);
            }
            sys::ASCSIM_EV_DEQUE => {
                let st = &mut self.cores[c];
                if let Some(t) = st
                    .enqueued
                    .get_mut(&(e.a, e.b))
                    .and_then(VecDeque::pop_front)
                {
                    st.gate(pipe, t);
                }
            }
            sys::ASCSIM_EV_FREE => {
                let st = &mut self.cores[c];
                let t = st.src_done(pipe);
                st.freed.entry((e.a, e.b)).or_default().push_back(t);
            }
            sys::ASCSIM_EV_ALLOC => {
                let st = &mut self.cores[c];
                if let Some(t) = st.freed.get_mut(&(e.a, e.b)).and_then(VecDeque::pop_front) {
                    st.gate(pipe, t);
                }
            }
            sys::ASCSIM_EV_CROSS_SET => {
                let t = self.cores[c].src_done(pipe);
                self.cross_sets
                    .arrive(e.seq, t + p.cross_core_latency_cycles);
            }
            sys::ASCSIM_EV_CROSS_WAIT => {
                let t = self.cross_sets.complete(e.seq).unwrap_or(0.0);
                let st = &mut self.cores[c];
                st.issue = st.issue.max(t);
            }
            sys::ASCSIM_EV_SYNC_ALL => {
                if self.cores[c].sync_arrived != Some(e.seq) {
                    // Arrive (SyncAll implies a barrier over all pipes), then wait.
                    let t = self.cores[c].all_done();
                    self.sync_all.arrive(e.seq, t);
                    self.cores[c].sync_arrived = Some(e.seq);
                    return; // the event is processed again once everyone arrived
                }
                let t = self.sync_all.complete(e.seq).unwrap_or(0.0) + p.sync_all_cycles;
                let st = &mut self.cores[c];
                st.sync_arrived = None;
                st.issue = st.issue.max(t);
                st.free.iter_mut().for_each(|f| *f = f.max(t));
            }
            _ => {}
        }
        self.cores[c].pos += 1;
    }

    fn instr(
        &mut self,
        c: usize,
        e: &sys::ascsim_event,
        pipe: Pipe,
        op_name: &mut dyn FnMut(u16) -> String,
    ) {
        let class = *self
            .classes
            .entry(e.op)
            .or_insert_with(|| classify(&op_name(e.op)));
        let Some(i) = pipe_index(pipe) else { return };
        if i == 0 {
            self.scalar(c, e, class);
            return;
        }
        let p = &self.p;
        let st = &mut self.cores[c];
        // A full instruction queue stalls issue until its oldest entry starts.
        if st.queued[i].len() >= p.queue_depth.max(1) {
            if let Some(t) = st.queued[i].pop_front() {
                st.issue = st.issue.max(t);
            }
        }
        let start = st.issue.max(st.free[i]);
        let bytes = e.bytes as f64;
        let repeats = f64::from(e.repeats);
        let (mut occupancy, latency) = match pipe {
            Pipe::V => {
                let factor = match class {
                    OpClass::Reduce => p.vec_reduce_factor,
                    OpClass::Gather => p.vec_gather_factor,
                    OpClass::GatherMask => p.vec_gather_mask_factor,
                    OpClass::Cast => p.vec_cast_factor,
                    OpClass::Compare => p.vec_compare_factor,
                    _ => 1.0,
                };
                // The trace's repeats are the instruction's repeat count (its
                // bytes count every operand); without repeats, 256 B per cycle.
                let reps = if e.repeats > 0 {
                    repeats
                } else {
                    (bytes / p.vector_bytes_per_cycle).ceil()
                };
                (
                    p.compute_fixed_cycles + factor * p.vec_bank_conflict_factor * reps,
                    p.onchip_latency_cycles,
                )
            }
            // attr: the Mmad's input element size (0 in hand-built traces: fp16).
            Pipe::M => (
                p.compute_fixed_cycles + repeats * p.cube_cycles_per_fractal(e.attr),
                p.onchip_latency_cycles,
            ),
            Pipe::Mte1 => {
                let rate = if u32::from(e.attr) == sys::ASCSIM_ATTR_L0B {
                    p.l1_to_l0b_bytes_per_cycle
                } else {
                    p.l1_to_l0a_bytes_per_cycle
                };
                (p.mte_fixed_cycles + bytes / rate, p.onchip_latency_cycles)
            }
            _ if e.gm_bytes == 0 => (
                p.mte_fixed_cycles + bytes / p.mte2_onchip_bytes_per_cycle,
                p.onchip_latency_cycles,
            ),
            _ => (0.0, p.gm_latency_cycles),
        };
        let mut own = occupancy;
        if matches!(pipe, Pipe::Mte2 | Pipe::Mte3 | Pipe::Fix) && e.gm_bytes > 0 {
            let write = e.gm_write != 0;
            let mut a = Access::default();
            for (addr, len) in gm_bursts(e) {
                let b = if write {
                    self.l2.write(addr, len)
                } else {
                    self.l2.read(addr, len)
                };
                a.hit_bytes += b.hit_bytes;
                a.miss_bytes += b.miss_bytes;
                a.hbm_read += b.hbm_read;
                a.hbm_write += b.hbm_write;
            }
            let p = &self.p;
            // Per-core time: the requested bytes at the core's rate (hit / miss split).
            let total = (a.hit_bytes + a.miss_bytes).max(1) as f64;
            let core_cycles = if write {
                let rate = if pipe == Pipe::Fix {
                    p.fix_bytes_per_cycle
                } else {
                    p.mte3_bytes_per_cycle
                };
                bytes.max(total) / rate
            } else {
                let b = bytes.max(total);
                b * (a.hit_bytes as f64 / total) / p.l2_read_bytes_per_cycle
                    + b * (a.miss_bytes as f64 / total) / p.ddr_read_bytes_per_cycle
            };
            own = p.mte_fixed_cycles + core_cycles;
            let end = (start + own).max(self.share(start, &a));
            occupancy = end - start;
            self.count(&a, write);
        }
        let st = &mut self.cores[c];
        st.queued[i].push_back(start);
        st.free[i] = start + occupancy;
        st.done[i] = st.done[i].max(start + occupancy + latency);
        if class == OpClass::GatherMask {
            // The API reads the kept count (a register the instruction sets)
            // into its rsvdCnt argument: the scalar unit stalls until the
            // GatherMask is done, as for a V -> S flag.
            st.issue = st.issue.max(start + occupancy + latency);
        }
        st.busy[i] += occupancy;
        st.work[i] += own;
    }

    /// A scalar instruction: it runs on the issue cursor and delays everything
    /// after it. A GM read that misses the data cache fills a 64 B line through
    /// L2 (its traffic is counted; its time is the miss time).
    fn scalar(&mut self, c: usize, e: &sys::ascsim_event, class: OpClass) {
        let p = &self.p;
        let cost = match class {
            OpClass::ScalarAccess => p.scalar_access_cycles,
            OpClass::GmScalarRead if e.gm_bytes > 0 => p.dcache_miss_s * p.clock_hz,
            OpClass::GmScalarRead => p.scalar_access_cycles,
            OpClass::DcacheFlush => p.dcache_flush_cycles,
            _ => 0.0,
        } * scalar_run(e, Pipe::S);
        let st = &mut self.cores[c];
        let start = st.issue.max(st.free[0]);
        if class == OpClass::GmScalarRead && e.gm_bytes > 0 {
            let a = self.l2.read(e.gm_addr, e.gm_bytes);
            self.share(start, &a);
            self.count(&a, false);
        }
        let st = &mut self.cores[c];
        st.issue = start + cost;
        st.free[0] = st.issue;
        st.done[0] = st.issue;
        st.busy[0] += cost;
        st.work[0] += cost;
    }

    /// Passes an access's bytes through the shared L2 and HBM bandwidth
    /// servers (FIFO, in the order of the requests' start times). Returns when
    /// the last of them is through.
    fn share(&mut self, start: f64, a: &Access) -> f64 {
        let mut end = start;
        let l2 = (a.hit_bytes + a.miss_bytes) as f64;
        if l2 > 0.0 {
            self.l2_free = self.l2_free.max(start) + l2 / self.p.l2_bytes_per_cycle();
            end = end.max(self.l2_free);
        }
        let hbm = (a.hbm_read + a.hbm_write) as f64;
        if hbm > 0.0 {
            self.hbm_free = self.hbm_free.max(start) + hbm / self.p.hbm_bytes_per_cycle();
            end = end.max(self.hbm_free);
        }
        end
    }

    /// Adds an access to the launch's traffic counters.
    fn count(&mut self, a: &Access, write: bool) {
        self.hbm_read += a.hbm_read;
        self.hbm_write += a.hbm_write;
        self.l2_bytes += a.hit_bytes + a.miss_bytes;
        if !write {
            self.l2_hit += a.hit_bytes;
        }
    }

    fn report(
        &self,
        kernel: &str,
        traces: &[CoreTrace],
        p: &CostParams,
        elements: u64,
    ) -> ModelReport {
        let cycles = self
            .cores
            .iter()
            .map(CoreState::all_done)
            .fold(0.0f64, f64::max);
        let kernel_time_s = cycles / p.clock_hz;
        let time_s = kernel_time_s + p.launch_overhead_s;
        let mut busy = Vec::new();
        let mut resources = Vec::new();
        for kind in [CoreKind::Aic, CoreKind::Aiv] {
            let idx: Vec<usize> = (0..traces.len())
                .filter(|&c| traces[c].is_cube == (kind == CoreKind::Aic))
                .collect();
            if idx.is_empty() {
                continue;
            }
            for (i, pipe) in PIPE_LIST.iter().enumerate() {
                let sum: f64 = idx.iter().map(|&c| self.cores[c].busy[i]).sum();
                if sum <= 0.0 {
                    continue;
                }
                let max = idx
                    .iter()
                    .map(|&c| self.cores[c].busy[i])
                    .fold(0.0f64, f64::max);
                // A pipe stalled on the shared L2/HBM servers is not what is
                // saturated: its resource time is its own work.
                let max_work = idx
                    .iter()
                    .map(|&c| self.cores[c].work[i])
                    .fold(0.0f64, f64::max);
                resources.push(ResourceBusy {
                    resource: Resource::Pipe(kind, *pipe),
                    busy_s: max_work / p.clock_hz,
                });
                let fraction = if time_s > 0.0 {
                    sum / p.clock_hz / (idx.len() as f64 * time_s)
                } else {
                    0.0
                };
                busy.push(PipeBusy {
                    core: kind,
                    pipe: *pipe,
                    fraction,
                    max_core_busy_s: max / p.clock_hz,
                });
            }
        }
        let hbm_s = (self.hbm_read + self.hbm_write) as f64 / p.hbm_bytes_per_cycle() / p.clock_hz;
        let l2_s = self.l2_bytes as f64 / p.l2_bytes_per_cycle() / p.clock_hz;
        for (resource, busy_s) in [(Resource::Hbm, hbm_s), (Resource::L2, l2_s)] {
            if busy_s > 0.0 {
                resources.push(ResourceBusy { resource, busy_s });
            }
        }
        let frac = |x: f64| if time_s > 0.0 { x / time_s } else { 0.0 };
        ModelReport {
            kernel: kernel.to_string(),
            time_s,
            kernel_time_s,
            launch_overhead_s: p.launch_overhead_s,
            launches: 1,
            elements,
            hbm_read_bytes: self.hbm_read,
            hbm_write_bytes: self.hbm_write,
            l2_bytes: self.l2_bytes,
            l2_hit_bytes: self.l2_hit,
            busy,
            hbm_busy: frac(hbm_s),
            l2_busy: frac(l2_s),
            critical: critical_of(&resources, time_s),
            resources,
        }
    }
}
