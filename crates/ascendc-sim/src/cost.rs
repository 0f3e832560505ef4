//! The cost model: replays the per-core traces of a launch as parallel pipes
//! joined by the recorded sync edges and estimates a *modeled* run time on a
//! SoC profile. See `docs/cost-model.md` for the sources and limits.
//!
//! Per core, the pipes MTE1, MTE2, MTE3, FIX, M, V and S run in parallel. The
//! scalar unit issues the core's events in program order; an instruction
//! starts when it has been issued, its pipe is free and its sync predecessors
//! are done (EnQue -> DeQue, FreeTensor -> AllocTensor, SetFlag -> WaitFlag,
//! PipeBarrier, CrossCore set -> wait across cores, SyncAll joining all
//! participants). GM traffic goes through a shared L2 (LRU) into HBM, whose
//! bandwidth all cores share (a FIFO bandwidth server).
//!
//! Every number that is not a documented hardware figure lives in
//! [`CostParams`] and is marked there as an ASSUMPTION.

use std::collections::{BTreeMap, HashMap, VecDeque};

use ascend_sys as sys;

use crate::report::{CoreTrace, LaunchReport, Pipe};
use crate::soc::SocProfile;

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

/// The numbers the model uses, in cycles of the core clock and bytes.
///
/// Built from a [`SocProfile`] by [`CostParams::from_profile`]: the documented
/// numbers come from the profile (which cites them); every field whose doc
/// says ASSUMPTION is a number no public document states. All fields are
/// public so tests can build simple parameter sets.
#[derive(Debug, Clone, PartialEq)]
pub struct CostParams {
    /// Core clock, Hz. From the profile (`clock_mhz`; an assumption for 910B4).
    pub clock_hz: f64,
    /// HBM bandwidth shared by all cores, bytes/s. From the profile (`hbm_gbps`,
    /// an assumption in the profile: third-party modelling configs).
    pub hbm_bytes_per_s: f64,
    /// L2 capacity, bytes. From the profile (`l2_bytes`, ini `l2_size`).
    pub l2_bytes: u64,
    /// L2 line size of the model, bytes. ASSUMPTION: 512 B. The asc-devkit
    /// performance guide says GM traffic is split into 128/256/512 B requests
    /// and that 512 B-aligned addresses are best; no document states the L2
    /// line. The L2 is modeled fully associative with LRU replacement
    /// (ASSUMPTION: the real associativity and policy are not documented).
    pub l2_line_bytes: u64,
    /// Per-core GM read rate on an L2 miss, bytes/cycle (profile `ddr_read_bytes_per_cycle`).
    pub ddr_read_bytes_per_cycle: f64,
    /// Per-core GM read rate on an L2 hit, bytes/cycle (profile `l2_read_bytes_per_cycle`).
    pub l2_read_bytes_per_cycle: f64,
    /// MTE3 UB -> GM rate, bytes/cycle (profile `ub_to_l2_bytes_per_cycle`).
    pub mte3_bytes_per_cycle: f64,
    /// FIX L0C -> GM rate, bytes/cycle. ASSUMPTION: the profile's `l2_write_bytes_per_cycle`
    /// (86, ini `l2_write_rate`); no document gives a Fixpipe rate.
    pub fix_bytes_per_cycle: f64,
    /// MTE1 L1 -> L0 rate, bytes/cycle (profile `l1_to_l0a_bytes_per_cycle`, 256). The trace
    /// does not say whether a LoadData targets L0A or L0B (L0B: 128 per the doc), so
    /// all MTE1 loads use the L0A rate (a known optimism for L0B loads).
    pub mte1_bytes_per_cycle: f64,
    /// MTE2 rate for on-chip sources (GM -> L0 LoadData uses the GM rates above), bytes/cycle.
    /// Same as the L2 read rate (ASSUMPTION: no separate figure).
    pub mte2_onchip_bytes_per_cycle: f64,
    /// Cube fractal products per cycle. A trace `Mmad` event counts fractal products
    /// (16x16xK0 with K0 = 32 B of input: 16 fp16, 32 int8, 8 fp32). fp16/bf16 do one
    /// 16x16x16 product per cycle and int8 one 16x32x16 (profile: 4096 / 8192 MAC/cycle),
    /// so both are one fractal per cycle. fp32 (16x16x8 fractal at 1/4 the fp16 MAC rate)
    /// would take 2 cycles, but the trace does not record the Mmad dtype: ASSUMPTION:
    /// one fractal per cycle for every Mmad.
    pub cube_fractals_per_cycle: f64,
    /// Vector bytes per repeat-cycle (profile `vector_bytes_per_cycle`, 256 B).
    pub vector_bytes_per_cycle: f64,
    /// Cycles per repeat of reductions (ReduceSum/Max/Min, WholeReduceSum,
    /// BlockReduceSum). ASSUMPTION: 2 (a reduction tree pass after the element pass);
    /// the docs give no per-op cycle counts.
    pub vec_reduce_factor: f64,
    /// Cycles per repeat of Gather. ASSUMPTION: 4 (index-driven reads of UB banks).
    pub vec_gather_factor: f64,
    /// Cycles per repeat of GatherMask. ASSUMPTION: 2.
    pub vec_gather_mask_factor: f64,
    /// Cycles per repeat of Cast. ASSUMPTION: 1. The simulator counts a Cast's
    /// repeats on its wider operand (256 B of it per repeat), so a widening
    /// f16 -> f32 cast already takes two repeats per 128 source elements.
    pub vec_cast_factor: f64,
    /// Cycles per repeat of Compare, CompareScalar and Select. ASSUMPTION: 2.
    pub vec_compare_factor: f64,
    /// Fixed cycles an instruction occupies its pipe besides its data (issue,
    /// descriptor decode). ASSUMPTION: 8 for MTE/FIX, 2 for V and M.
    pub mte_fixed_cycles: f64,
    /// Fixed cycles of a V or M instruction. ASSUMPTION: 2.
    pub compute_fixed_cycles: f64,
    /// Latency of a GM access after its pipe time, before a sync edge sees it done, cycles.
    /// ASSUMPTION: 500 (order of a GPU HBM load latency; no Ascend figure is published).
    pub gm_latency_cycles: f64,
    /// Latency of an on-chip DMA (MTE1, MTE2/3 without GM) or compute result, cycles.
    /// ASSUMPTION: 20.
    pub onchip_latency_cycles: f64,
    /// Scalar cycles to issue any traced event (address arithmetic, loop control,
    /// queue bookkeeping around one API call): the model's stand-in for loop
    /// overhead, which the trace does not record. ASSUMPTION: 4.
    pub scalar_issue_cycles: f64,
    /// Scalar cycles of LocalTensor::GetValue/SetValue (UB access from the scalar
    /// unit). ASSUMPTION: 20.
    pub scalar_access_cycles: f64,
    /// Scalar cycles of DataCacheCleanAndInvalid. ASSUMPTION: 200.
    pub dcache_flush_cycles: f64,
    /// Latency of a CrossCore flag from set to the waiting core, cycles. ASSUMPTION: 200.
    pub cross_core_latency_cycles: f64,
    /// Cost of a SyncAll after the last participant arrives, cycles. ASSUMPTION: 1000.
    pub sync_all_cycles: f64,
    /// Instructions a pipe's queue holds before the scalar unit stalls on issue.
    /// Source: asc-devkit HW constraints (MTE1 and MMAD instruction queues: depth 32);
    /// ASSUMPTION: the same depth for every pipe.
    pub queue_depth: usize,
}

impl CostParams {
    /// The parameters of a SoC profile.
    pub fn from_profile(p: &SocProfile) -> CostParams {
        let clock_hz = f64::from(p.clock_mhz) * 1e6;
        CostParams {
            clock_hz,
            hbm_bytes_per_s: p.hbm_gbps * 1e9,
            l2_bytes: p.l2_bytes,
            l2_line_bytes: 512,
            ddr_read_bytes_per_cycle: p.ddr_read_bytes_per_cycle,
            l2_read_bytes_per_cycle: p.l2_read_bytes_per_cycle,
            mte3_bytes_per_cycle: p.ub_to_l2_bytes_per_cycle,
            fix_bytes_per_cycle: p.l2_write_bytes_per_cycle,
            mte1_bytes_per_cycle: p.l1_to_l0a_bytes_per_cycle,
            mte2_onchip_bytes_per_cycle: p.l2_read_bytes_per_cycle,
            cube_fractals_per_cycle: f64::from(p.cube_fp16_macs_per_cycle) / 4096.0,
            vector_bytes_per_cycle: p.vector_bytes_per_cycle,
            vec_reduce_factor: 2.0,
            vec_gather_factor: 4.0,
            vec_gather_mask_factor: 2.0,
            vec_cast_factor: 1.0,
            vec_compare_factor: 2.0,
            mte_fixed_cycles: 8.0,
            compute_fixed_cycles: 2.0,
            gm_latency_cycles: 500.0,
            onchip_latency_cycles: 20.0,
            scalar_issue_cycles: 4.0,
            scalar_access_cycles: 20.0,
            dcache_flush_cycles: 200.0,
            cross_core_latency_cycles: 200.0,
            sync_all_cycles: 1000.0,
            queue_depth: 32,
        }
    }

    fn hbm_bytes_per_cycle(&self) -> f64 {
        self.hbm_bytes_per_s / self.clock_hz
    }
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

/// The resource that bounds a launch in the model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Critical {
    /// One pipe of one core type (its busiest core is busy the longest).
    Pipe(CoreKind, Pipe),
    /// The shared HBM bandwidth.
    Hbm,
    /// Neither: latency and sync edges dominate (no resource busy > 50 % of the time).
    Latency,
}

impl std::fmt::Display for Critical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Critical::Pipe(c, p) => write!(f, "{c} {}", pipe_name(*p)),
            Critical::Hbm => f.write_str("HBM"),
            Critical::Latency => f.write_str("latency/sync"),
        }
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

/// The modeled performance of one launch.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReport {
    /// Kernel name.
    pub kernel: String,
    /// Modeled run time of the launch (first issue to last completion), seconds.
    /// Launch overhead is not included.
    pub time_s: f64,
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
    /// HBM busy fraction (HBM bytes / bandwidth / modeled time).
    pub hbm_busy: f64,
    /// The bounding resource.
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
    let mut engine = Engine::new(traces, params);
    engine
        .run(traces, op_name)
        .map_err(|detail| CostError::Deadlock {
            kernel: kernel.to_string(),
            detail,
        })?;
    Ok(engine.report(kernel, traces, params, elements))
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
        "LocalTensor::GetValue" | "LocalTensor::SetValue" => OpClass::ScalarAccess,
        "DataCacheCleanAndInvalid" => OpClass::DcacheFlush,
        "Mmad" => OpClass::Mmad,
        _ => OpClass::Plain,
    }
}

/// Fully associative LRU cache of GM lines (write-allocate, write-back). Dirty
/// data is tracked per 32-byte sector (the DMA granularity of GM writes), so a
/// line written by several cores is written back once, with the union of what
/// they wrote.
#[derive(Debug)]
struct L2 {
    line: u64,
    capacity_lines: usize,
    /// line -> (LRU stamp, dirty sector mask)
    lines: HashMap<u64, (u64, u64)>,
    lru: BTreeMap<u64, u64>,
    stamp: u64,
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
    fn new(bytes: u64, line: u64) -> L2 {
        // At most 64 sectors per line (the dirty mask is a u64).
        let line = line.clamp(SECTOR, 64 * SECTOR);
        L2 {
            line,
            capacity_lines: (bytes / line).max(1) as usize,
            lines: HashMap::new(),
            lru: BTreeMap::new(),
            stamp: 0,
        }
    }

    /// Marks line `id` most recently used, ORs `dirty` into its mask, evicting
    /// the least recently used line if needed. Returns the previous mask if
    /// the line was resident.
    fn touch(&mut self, id: u64, dirty: u64) -> Option<u64> {
        self.stamp += 1;
        let prev = self.lines.get(&id).copied();
        if let Some((old, _)) = prev {
            self.lru.remove(&old);
        } else if self.lines.len() >= self.capacity_lines {
            if let Some((_, victim)) = self.lru.pop_first() {
                self.lines.remove(&victim);
            }
        }
        let mask = prev.map_or(0, |p| p.1) | dirty;
        self.lines.insert(id, (self.stamp, mask));
        self.lru.insert(self.stamp, id);
        prev.map(|p| p.1)
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
    busy: [f64; PIPES],
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
    hbm_read: u64,
    hbm_write: u64,
    l2_bytes: u64,
    l2_hit: u64,
    cross_sets: HashMap<u32, f64>,
    /// Sequence numbers of every CrossCore set in the traces.
    set_seqs: std::collections::HashSet<u32>,
    sync_members: HashMap<u32, usize>,
    sync_arrivals: HashMap<u32, Vec<f64>>,
    classes: HashMap<u16, OpClass>,
    p: CostParams,
}

impl Engine {
    fn new(traces: &[CoreTrace], p: &CostParams) -> Engine {
        let mut sync_members: HashMap<u32, usize> = HashMap::new();
        let mut set_seqs = std::collections::HashSet::new();
        for t in traces {
            for e in &t.events {
                if u32::from(e.kind) == sys::ASCSIM_EV_SYNC_ALL {
                    *sync_members.entry(e.seq).or_default() += 1;
                }
                if u32::from(e.kind) == sys::ASCSIM_EV_CROSS_SET {
                    set_seqs.insert(e.seq);
                }
            }
        }
        Engine {
            cores: vec![CoreState::default(); traces.len()],
            l2: L2::new(p.l2_bytes, p.l2_line_bytes),
            hbm_free: 0.0,
            hbm_read: 0,
            hbm_write: 0,
            l2_bytes: 0,
            l2_hit: 0,
            cross_sets: HashMap::new(),
            set_seqs,
            sync_members,
            sync_arrivals: HashMap::new(),
            classes: HashMap::new(),
            p: p.clone(),
        }
    }

    /// The set a CrossCore wait consumed. A direct set carries the set's own
    /// sequence number; a group round (modes 0/1, and mode 2 from AIVs) gets a
    /// fresh number right after its last member's set (the simulator takes
    /// both under one lock), so the wait names seq = last setter's seq + 1.
    /// The model joins on the last setter only (the other members' sets are
    /// not identified in the trace).
    fn wait_key(&self, seq: u32) -> u32 {
        if self.set_seqs.contains(&seq) || seq == 0 {
            seq
        } else {
            seq - 1
        }
    }

    /// Earliest time core `c` can process its next event; None when finished
    /// or blocked on another core.
    fn next_time(&self, c: usize, traces: &[CoreTrace]) -> Option<f64> {
        let st = &self.cores[c];
        let e = traces[c].events.get(st.pos)?;
        let kind = u32::from(e.kind);
        if kind == sys::ASCSIM_EV_CROSS_WAIT {
            return self
                .cross_sets
                .get(&self.wait_key(e.seq))
                .map(|t| st.issue.max(*t));
        }
        if kind == sys::ASCSIM_EV_SYNC_ALL && st.sync_arrived == Some(e.seq) {
            let arrived = self.sync_arrivals.get(&e.seq).map_or(0, Vec::len);
            let members = self.sync_members.get(&e.seq).copied().unwrap_or(0);
            return (arrived >= members).then(|| {
                self.sync_arrivals[&e.seq]
                    .iter()
                    .fold(st.issue, |a, b| a.max(*b))
            });
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
        let e = traces[c].events[self.cores[c].pos];
        let pipe = Pipe::from_raw(e.pipe);
        let kind = u32::from(e.kind);
        let p = self.p.clone();
        // The scalar unit spends its issue cost on every event it issues.
        if kind != sys::ASCSIM_EV_SYNC_ALL || self.cores[c].sync_arrived.is_none() {
            self.cores[c].issue += p.scalar_issue_cycles;
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
                    .insert(e.seq, t + p.cross_core_latency_cycles);
            }
            sys::ASCSIM_EV_CROSS_WAIT => {
                let t = self
                    .cross_sets
                    .get(&self.wait_key(e.seq))
                    .copied()
                    .unwrap_or(0.0);
                let st = &mut self.cores[c];
                st.issue = st.issue.max(t);
            }
            sys::ASCSIM_EV_SYNC_ALL => {
                if self.cores[c].sync_arrived != Some(e.seq) {
                    // Arrive (SyncAll implies a barrier over all pipes), then wait.
                    let t = self.cores[c].all_done();
                    self.sync_arrivals.entry(e.seq).or_default().push(t);
                    self.cores[c].sync_arrived = Some(e.seq);
                    return; // the event is processed again once everyone arrived
                }
                let t = self.sync_arrivals[&e.seq]
                    .iter()
                    .fold(0.0f64, |a, b| a.max(*b))
                    + p.sync_all_cycles;
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
        let p = &self.p;
        let class = *self
            .classes
            .entry(e.op)
            .or_insert_with(|| classify(&op_name(e.op)));
        let Some(i) = pipe_index(pipe) else { return };
        let st = &mut self.cores[c];
        if i == 0 {
            // Scalar work runs on the issue cursor itself.
            let cost = match class {
                OpClass::ScalarAccess => p.scalar_access_cycles,
                OpClass::DcacheFlush => p.dcache_flush_cycles,
                _ => p.scalar_issue_cycles,
            };
            let start = st.issue.max(st.free[0]);
            st.issue = start + cost;
            st.free[0] = st.issue;
            st.done[0] = st.issue;
            st.busy[0] += cost;
            return;
        }
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
                    p.compute_fixed_cycles + factor * reps,
                    p.onchip_latency_cycles,
                )
            }
            Pipe::M => (
                p.compute_fixed_cycles + repeats / p.cube_fractals_per_cycle,
                p.onchip_latency_cycles,
            ),
            Pipe::Mte1 => (
                p.mte_fixed_cycles + bytes / p.mte1_bytes_per_cycle,
                p.onchip_latency_cycles,
            ),
            _ if e.gm_bytes == 0 => (
                p.mte_fixed_cycles + bytes / p.mte2_onchip_bytes_per_cycle,
                p.onchip_latency_cycles,
            ),
            _ => (0.0, p.gm_latency_cycles),
        };
        if matches!(pipe, Pipe::Mte2 | Pipe::Mte3 | Pipe::Fix) && e.gm_bytes > 0 {
            let mut a = Access::default();
            for (addr, len) in gm_bursts(e) {
                let b = if e.gm_write != 0 {
                    self.l2.write(addr, len)
                } else {
                    self.l2.read(addr, len)
                };
                a.hit_bytes += b.hit_bytes;
                a.miss_bytes += b.miss_bytes;
                a.hbm_read += b.hbm_read;
                a.hbm_write += b.hbm_write;
            }
            // Per-core time: the requested bytes at the core's rate (hit / miss split).
            let total = (a.hit_bytes + a.miss_bytes).max(1) as f64;
            let core_cycles = if e.gm_write != 0 {
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
            // Shared HBM: a FIFO bandwidth server over all cores.
            let hbm = (a.hbm_read + a.hbm_write) as f64;
            let mut end = start + p.mte_fixed_cycles + core_cycles;
            if hbm > 0.0 {
                let hbm_start = self.hbm_free.max(start);
                self.hbm_free = hbm_start + hbm / p.hbm_bytes_per_cycle();
                end = end.max(self.hbm_free);
            }
            occupancy = end - start;
            self.hbm_read += a.hbm_read;
            self.hbm_write += a.hbm_write;
            self.l2_bytes += a.hit_bytes + a.miss_bytes;
            if e.gm_write == 0 {
                self.l2_hit += a.hit_bytes;
            }
        }
        let st = &mut self.cores[c];
        st.queued[i].push_back(start);
        st.free[i] = start + occupancy;
        st.done[i] = st.done[i].max(start + occupancy + latency);
        st.busy[i] += occupancy;
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
        let time_s = cycles / p.clock_hz;
        let mut busy = Vec::new();
        let mut critical = (Critical::Latency, 0.5 * cycles);
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
                if max > critical.1 {
                    critical = (Critical::Pipe(kind, *pipe), max);
                }
                let fraction = if cycles > 0.0 {
                    sum / (idx.len() as f64 * cycles)
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
        let hbm_cycles = (self.hbm_read + self.hbm_write) as f64 / p.hbm_bytes_per_cycle();
        if hbm_cycles >= critical.1 {
            critical = (Critical::Hbm, hbm_cycles);
        }
        ModelReport {
            kernel: kernel.to_string(),
            time_s,
            elements,
            hbm_read_bytes: self.hbm_read,
            hbm_write_bytes: self.hbm_write,
            l2_bytes: self.l2_bytes,
            l2_hit_bytes: self.l2_hit,
            busy,
            hbm_busy: if cycles > 0.0 {
                hbm_cycles / cycles
            } else {
                0.0
            },
            critical: critical.0,
        }
    }
}
