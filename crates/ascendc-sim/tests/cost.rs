//! Cost model tests on hand-built traces, each with a hand-computed time.
//!
//! The parameters are simplified so the arithmetic is by hand: a 1 GHz clock
//! (1 cycle = 1 ns), no fixed, latency, issue or launch costs unless a test
//! sets them, HBM and L2 bandwidth effectively unlimited.
use ascend_sys as sys;
use ascendc_sim::cost::{
    assumptions, assumptions_markdown, model_traces, profile_traces, CoreKind, Resource,
};
use ascendc_sim::{
    model_launch, model_launches, CoreTrace, CostParams, LaunchReport, ModelProfile, ModelReport,
    Pipe, Soc, Task,
};

const P_S: u8 = sys::ASCSIM_PIPE_S as u8;
const P_V: u8 = sys::ASCSIM_PIPE_V as u8;
const P_M: u8 = sys::ASCSIM_PIPE_M as u8;
const P_MTE1: u8 = sys::ASCSIM_PIPE_MTE1 as u8;
const P_MTE2: u8 = sys::ASCSIM_PIPE_MTE2 as u8;
const P_MTE3: u8 = sys::ASCSIM_PIPE_MTE3 as u8;
const P_FIX: u8 = sys::ASCSIM_PIPE_FIX as u8;
const P_NONE: u8 = sys::ASCSIM_PIPE_NONE as u8;

/// Op ids of the test traces; `name` maps them.
const OP_DATACOPY: u16 = 0;
const OP_ADD: u16 = 1;
const OP_FIXPIPE: u16 = 2;
const OP_REDUCE: u16 = 3;
const OP_MMAD: u16 = 4;
const OP_LOAD: u16 = 5;

/// `name`, with op id `op` named `as_name` instead.
fn names_with(op: u16, as_name: &'static str) -> impl FnMut(u16) -> String {
    move |o| {
        if o == op {
            as_name.to_string()
        } else {
            name(o)
        }
    }
}

fn name(op: u16) -> String {
    [
        "DataCopy",
        "Add",
        "Fixpipe",
        "ReduceSum",
        "Mmad",
        "LoadData",
    ][op as usize]
        .to_string()
}

fn params() -> CostParams {
    let mut p = CostParams::from_profile(&Soc::Ascend910B4.profile());
    p.clock_hz = 1e9;
    p.hbm_bytes_per_s = 1e15; // effectively unlimited unless a test sets it
    p.hbm_efficiency = 1.0;
    p.l2_bytes_per_s = 1e15;
    p.l2_bytes = 64 << 20;
    p.l2_line_bytes = 512;
    p.l2_ways = 16;
    p.launch_overhead_s = 0.0;
    p.ddr_read_bytes_per_cycle = 102.4;
    p.l2_read_bytes_per_cycle = 102.4;
    p.mte3_bytes_per_cycle = 102.4;
    p.fix_bytes_per_cycle = 102.4;
    p.vector_bytes_per_cycle = 256.0;
    p.mte_fixed_cycles = 0.0;
    p.compute_fixed_cycles = 0.0;
    p.gm_latency_cycles = 0.0;
    p.onchip_latency_cycles = 0.0;
    p.scalar_issue_cycles = 0.0;
    p.cross_core_latency_cycles = 0.0;
    p.sync_all_cycles = 0.0;
    p
}

fn ev(kind: u32, pipe: u8) -> sys::ascsim_event {
    sys::ascsim_event {
        kind: kind as u8,
        pipe,
        peer: -1,
        ..Default::default()
    }
}
fn read(addr: u64, bytes: u64) -> sys::ascsim_event {
    sys::ascsim_event {
        op: OP_DATACOPY,
        repeats: 1,
        bytes,
        gm_addr: addr,
        gm_bytes: bytes,
        ..ev(sys::ASCSIM_EV_INSTR, P_MTE2)
    }
}
fn write(addr: u64, bytes: u64) -> sys::ascsim_event {
    sys::ascsim_event {
        gm_write: 1,
        ..sys::ascsim_event {
            pipe: P_MTE3,
            ..read(addr, bytes)
        }
    }
}
fn vec_op(op: u16, repeats: u32) -> sys::ascsim_event {
    sys::ascsim_event {
        op,
        repeats,
        bytes: u64::from(repeats) * 256,
        ..ev(sys::ASCSIM_EV_INSTR, P_V)
    }
}
fn sync(kind: u32, pipe: u8, a: i32, b: i32) -> sys::ascsim_event {
    sys::ascsim_event {
        a,
        b,
        ..ev(kind, pipe)
    }
}
/// A CrossCore set of `flag` in `mode` after `pipe`'s work, round `seq`.
fn cross_set(flag: i32, mode: i32, pipe: u8, seq: u32) -> sys::ascsim_event {
    sys::ascsim_event {
        seq,
        ..sync(sys::ASCSIM_EV_CROSS_SET, pipe, flag, mode)
    }
}
/// A CrossCore wait for `flag` set by `peer`, round `seq`.
fn cross_wait(flag: i32, peer: i32, seq: u32) -> sys::ascsim_event {
    sys::ascsim_event {
        peer,
        seq,
        ..sync(sys::ASCSIM_EV_CROSS_WAIT, P_NONE, flag, 0)
    }
}
fn aiv(events: Vec<sys::ascsim_event>) -> CoreTrace {
    CoreTrace {
        is_cube: false,
        block_idx: 0,
        events,
    }
}

fn run(traces: &[CoreTrace], p: &CostParams, elements: u64) -> ModelReport {
    model_traces("test", traces, &mut name, p, elements).expect("model")
}

fn cycles(r: &ModelReport) -> f64 {
    r.time_s * 1e9
}

fn assert_near(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-6 * want.max(1.0),
        "got {got}, want {want}"
    );
}

const MB: u64 = 1 << 20;

/// MTE2 (1024 B = 10 cycles), V (10 repeats = 10 cycles), MTE3 (10 cycles):
/// chained by flags they take 30 cycles; independent they overlap in 10.
#[test]
fn serial_vs_overlapped_pipes() {
    let p = params();
    let serial = aiv(vec![
        read(MB, 1024),
        sync(sys::ASCSIM_EV_SET_FLAG, P_MTE2, 0, 0),
        sync(sys::ASCSIM_EV_WAIT_FLAG, P_V, 0, 0),
        vec_op(OP_ADD, 10),
        sync(sys::ASCSIM_EV_SET_FLAG, P_V, 1, 0),
        sync(sys::ASCSIM_EV_WAIT_FLAG, P_MTE3, 1, 0),
        write(2 * MB, 1024),
    ]);
    let r = run(std::slice::from_ref(&serial), &p, 512);
    assert_near(cycles(&r), 30.0);
    assert_eq!(r.hbm_read_bytes, 1024);
    assert_eq!(r.hbm_write_bytes, 1024);

    let overlapped = aiv(vec![
        read(MB, 1024),
        vec_op(OP_ADD, 10),
        write(2 * MB, 1024),
    ]);
    let r = run(std::slice::from_ref(&overlapped), &p, 512);
    assert_near(cycles(&r), 10.0);
    // Every pipe was busy all the time.
    for b in &r.busy {
        assert_near(b.fraction, 1.0);
    }

    // The profile charges each event what it added to the finish time.
    let profile = |t: CoreTrace| {
        let prof = profile_traces("test", &[t], &mut name, &p, None).expect("profile");
        assert_eq!(prof.len(), 1, "one vector core, no cube core");
        let total: f64 = prof[0].by_event.iter().map(|(_, c)| c).sum();
        assert_near(total, prof[0].cycles);
        prof[0].by_event.clone()
    };
    let serial_profile = profile(serial.clone());
    assert_eq!(serial_profile[0].0, "DataCopy");
    assert_near(serial_profile[0].1, 20.0);
    assert_eq!(serial_profile[1].0, "Add");
    assert_near(serial_profile[1].1, 10.0);
    // The busiest pipe's work by event: a long Add after the serial chain
    // makes V the busiest pipe, and its work is the two Adds'.
    let mut vector_bound = serial;
    vector_bound.events.push(vec_op(OP_ADD, 40));
    let prof = profile_traces("test", &[vector_bound], &mut name, &p, None).expect("profile");
    assert_eq!(prof[0].busiest_pipe.0, "V");
    assert_near(prof[0].busiest_pipe.1, 50.0);
    assert_eq!(prof[0].busiest_by_event.len(), 1);
    assert_eq!(prof[0].busiest_by_event[0].0, "Add");
    assert_near(prof[0].busiest_by_event[0].1, 50.0);
    // Overlapped, the Add and the write hide under the read.
    let overlapped_profile = profile(overlapped);
    assert_eq!(overlapped_profile.len(), 1);
    assert_eq!(overlapped_profile[0].0, "DataCopy");
    assert_near(overlapped_profile[0].1, 10.0);

    // A reduction costs 2 cycles per repeat (the documented assumption).
    let r = run(&[aiv(vec![vec_op(OP_REDUCE, 10)])], &p, 0);
    assert_near(cycles(&r), 20.0);

    // PIPE_ALL barrier serialises as well.
    let barrier = aiv(vec![
        read(MB, 1024),
        sync(sys::ASCSIM_EV_PIPE_BARRIER, P_NONE, 0, 0),
        vec_op(OP_ADD, 10),
    ]);
    assert_near(cycles(&run(&[barrier], &p, 0)), 20.0);
}

/// GM -> UB -> GM copy of 8 tiles of 1024 B through a queue. Each transfer is
/// 10 cycles. With two buffers MTE2 of tile i+1 overlaps MTE3 of tile i:
/// 8 x 10 + 10 = 90 cycles, the bandwidth bound (8192 B / 102.4 B/cycle = 80)
/// plus one tile. With one buffer every tile waits for the previous one's
/// FreeTensor: 8 x 20 = 160 cycles.
#[test]
fn double_buffered_copy_reaches_bandwidth_bound() {
    let p = params();
    let copy = |buffers: i32| {
        let mut ev = Vec::new();
        for i in 0..8u64 {
            let b = (i % buffers as u64) as i32;
            ev.push(sync(sys::ASCSIM_EV_ALLOC, P_MTE2, 0, b));
            ev.push(read(MB + i * 1024, 1024));
            ev.push(sync(sys::ASCSIM_EV_ENQUE, P_MTE2, 0, b));
            ev.push(sync(sys::ASCSIM_EV_DEQUE, P_MTE3, 0, b));
            ev.push(write(64 * MB + i * 1024, 1024));
            ev.push(sync(sys::ASCSIM_EV_FREE, P_MTE3, 0, b));
        }
        aiv(ev)
    };
    let r = run(&[copy(2)], &p, 4096);
    assert_near(cycles(&r), 90.0);
    assert_eq!(r.hbm_bytes(), 16384);
    assert_near(r.hbm_bytes_per_element(), 4.0);
    assert_near(r.gbps(16384), 16384.0 / 90.0);
    assert!(
        matches!(
            r.critical.resource,
            Resource::Pipe(CoreKind::Aiv, Pipe::Mte2 | Pipe::Mte3)
        ),
        "{:?}",
        r.critical
    );

    let r = run(&[copy(1)], &p, 4096);
    assert_near(cycles(&r), 160.0);
}

/// Core 0 works 100 cycles, core 1 10 cycles; both SyncAll (cost 50), then
/// core 1 works 10 more: 100 + 50 + 10 = 160 cycles (20 without the barrier).
#[test]
fn sync_all_joins_cores() {
    let mut p = params();
    p.sync_all_cycles = 50.0;
    let sa = sys::ascsim_event {
        seq: 0,
        ..ev(sys::ASCSIM_EV_SYNC_ALL, P_NONE)
    };
    let core0 = aiv(vec![vec_op(OP_ADD, 100), sa]);
    let core1 = aiv(vec![vec_op(OP_ADD, 10), sa, vec_op(OP_ADD, 10)]);
    let r = run(&[core0, core1], &p, 0);
    assert_near(cycles(&r), 160.0);

    let core0 = aiv(vec![vec_op(OP_ADD, 100)]);
    let core1 = aiv(vec![vec_op(OP_ADD, 10), vec_op(OP_ADD, 10)]);
    assert_near(cycles(&run(&[core0, core1], &p, 0)), 100.0);
}

/// A cube core's Fixpipe (1024 B = 10 cycles) sets a CrossCore flag (latency
/// 5); the vector core waits for it, then reads (10): 25 cycles.
#[test]
fn cross_core_flag_orders_cores() {
    let mut p = params();
    p.cross_core_latency_cycles = 5.0;
    let fix = sys::ascsim_event {
        op: OP_FIXPIPE,
        pipe: P_FIX,
        ..write(MB, 1024)
    };
    let set = cross_set(3, 2, P_FIX, 7);
    let wait = cross_wait(3, 0, 7);
    let aic = CoreTrace {
        is_cube: true,
        block_idx: 0,
        events: vec![fix, set],
    };
    let vec = aiv(vec![wait, read(MB, 1024)]);
    let r = run(&[aic, vec], &p, 0);
    assert_near(cycles(&r), 25.0);
    // The AIV re-reads what the AIC wrote: an L2 hit, no HBM read.
    assert_eq!(r.hbm_read_bytes, 0);
    assert_eq!(r.l2_hit_bytes, 1024);

    // A wait whose set never happens is a deadlock, not a hang.
    let lone = aiv(vec![wait]);
    assert!(model_traces("test", &[lone], &mut name, &p, 0).is_err());
}

/// A group round (here the two vector cores of an AI core setting mode 2 for
/// their cube core) completes at its latest member's set in modeled time, not
/// at the set that reached the simulator last: the vector core that sets
/// first in the trace order does 30 cycles of vector work before its set, the
/// other none. The cube core's read (10) starts at 30: 40 cycles, whichever
/// member comes first in the traces.
#[test]
fn group_round_joins_every_member() {
    let p = params();
    let set = cross_set(4, 2, P_V, 9);
    let wait = cross_wait(4, 2, 9);
    let aic = CoreTrace {
        is_cube: true,
        block_idx: 0,
        events: vec![wait, read(MB, 1024)],
    };
    let slow = aiv(vec![vec_op(OP_ADD, 30), set]);
    let quick = aiv(vec![set]);
    for vecs in [[slow.clone(), quick.clone()], [quick, slow]] {
        let r = run(&[aic.clone(), vecs[0].clone(), vecs[1].clone()], &p, 0);
        assert_near(cycles(&r), 40.0);
    }
}

/// Reading 4096 B twice: the first read misses (32 B/cycle: 128 cycles), the
/// second hits (128 B/cycle: 32 cycles), 160 in all, 4096 B of HBM. With an
/// L2 of two lines the second read misses too: 256 cycles, 8192 B of HBM.
#[test]
fn l2_hits_on_rereads() {
    let mut p = params();
    p.ddr_read_bytes_per_cycle = 32.0;
    p.l2_read_bytes_per_cycle = 128.0;
    let trace = aiv(vec![read(MB, 4096), read(MB, 4096)]);
    let r = run(std::slice::from_ref(&trace), &p, 0);
    assert_near(cycles(&r), 160.0);
    assert_eq!(r.hbm_read_bytes, 4096);
    assert_eq!(r.l2_hit_bytes, 4096);
    assert_eq!(r.l2_bytes, 8192);

    p.l2_bytes = 1024;
    let r = run(&[trace], &p, 0);
    assert_near(cycles(&r), 256.0);
    assert_eq!(r.hbm_read_bytes, 8192);
    assert_eq!(r.l2_hit_bytes, 0);

    // Reads fill whole lines: 100 B at a line start cost one 512 B line.
    let r = run(&[aiv(vec![read(MB, 100)])], &params(), 0);
    assert_eq!(r.hbm_read_bytes, 512);

    // Two cores write the two halves of one line, then one rewrites its half:
    // the line is written back once, 512 B (dirty 32 B sectors are counted).
    let a = aiv(vec![write(MB, 256), write(MB, 256)]);
    let b = aiv(vec![write(MB + 256, 256)]);
    let r = run(&[a, b], &params(), 0);
    assert_eq!(r.hbm_write_bytes, 512);
    // A 40 B write dirties two sectors: 64 B of write-back.
    let r = run(&[aiv(vec![write(MB + 16, 40)])], &params(), 0);
    assert_eq!(r.hbm_write_bytes, 64);
}

/// Each core reads 10240 B at 102.4 B/cycle (100 cycles alone). HBM gives
/// 204.8 B/cycle to all cores: one core takes 100 cycles (HBM half busy), four
/// cores at once need 40960 / 204.8 = 200 cycles and HBM is the bound.
#[test]
fn hbm_contention_when_many_cores_copy() {
    let mut p = params();
    p.hbm_bytes_per_s = 204.8e9;
    let core = |i: u64| aiv(vec![read(MB * (i + 1), 10240)]);
    let r = run(&[core(0)], &p, 0);
    assert_near(cycles(&r), 100.0);
    assert_near(r.hbm_busy, 0.5);
    // Critical is the busiest resource, not HBM at half busy: the core's MTE2
    // is busy all the time.
    assert_eq!(
        r.critical.resource,
        Resource::Pipe(CoreKind::Aiv, Pipe::Mte2)
    );
    assert_near(r.critical.busy, 1.0);
    assert_eq!(r.critical.to_string(), "AIV MTE2 100%");

    let cores: Vec<CoreTrace> = (0..4).map(core).collect();
    let r = run(&cores, &p, 0);
    assert_near(cycles(&r), 200.0);
    assert_eq!(r.hbm_read_bytes, 40960);
    assert_eq!(r.critical.resource, Resource::Hbm);
    assert_near(r.critical.busy, 1.0);

    // Split into 10 chunks per core, the shared bandwidth still bounds at 200.
    let chunked: Vec<CoreTrace> = (0..4u64)
        .map(|i| {
            aiv((0..10u64)
                .map(|k| read(MB * (i + 1) + k * 1024, 1024))
                .collect())
        })
        .collect();
    assert_near(cycles(&run(&chunked, &p, 0)), 200.0);
}

/// Scalar work runs on the issue cursor and delays everything after it.
#[test]
fn scalar_costs_delay_issue() {
    let mut p = params();
    p.scalar_issue_cycles = 1.0;
    p.scalar_access_cycles = 20.0;
    const OP_GET: u16 = 4;
    let mut names = names_with(OP_GET, "LocalTensor::GetValue");
    let get = sys::ascsim_event {
        op: OP_GET,
        repeats: 1,
        bytes: 4,
        ..ev(sys::ASCSIM_EV_INSTR, P_S)
    };
    // issue 1 + GetValue 20, then V issued at 22 and runs 10 cycles: 32.
    let r = model_traces(
        "t",
        &[aiv(vec![get, vec_op(OP_ADD, 10)])],
        &mut names,
        &p,
        0,
    )
    .unwrap();
    assert_near(cycles(&r), 32.0);
}

/// GatherMask's API reads the kept count into its `rsvdCnt` argument: the
/// scalar unit waits for the instruction (10 repeats, 10 cycles) before it
/// issues the read after it (10 cycles): 20. After an Add of the same size
/// the read is issued at once and both run in parallel: 10.
#[test]
fn gather_mask_count_stalls_the_scalar_unit() {
    let mut p = params();
    p.vec_gather_mask_factor = 1.0;
    p.vec_bank_conflict_factor = 1.0;
    const OP_GATHER_MASK: u16 = 6;
    let mut names = names_with(OP_GATHER_MASK, "GatherMask");
    let mut time = |op: u16| {
        let trace = aiv(vec![vec_op(op, 10), read(MB, 1024)]);
        cycles(&model_traces("t", &[trace], &mut names, &p, 0).unwrap())
    };
    assert_near(time(OP_GATHER_MASK), 20.0);
    assert_near(time(OP_ADD), 10.0);
}

/// Three MTE2 reads of 10 cycles and a 25-cycle vector op: with deep queues
/// they overlap (30 cycles); with a queue of one, the third read waits in
/// issue until the second starts (10), so the vector op starts at 10: 35.
#[test]
fn full_instruction_queue_stalls_issue() {
    let mut p = params();
    let trace = aiv(vec![
        read(MB, 1024),
        read(2 * MB, 1024),
        read(3 * MB, 1024),
        vec_op(OP_ADD, 25),
    ]);
    assert_near(cycles(&run(std::slice::from_ref(&trace), &p, 0)), 30.0);
    p.queue_depth = 1;
    assert_near(cycles(&run(&[trace], &p, 0)), 35.0);
}

/// A strided read of 4 bursts of 64 B, 1024 B apart (span 3136 B): only the
/// 4 lines holding the bursts are filled (2048 B of HBM), not the 7 lines of
/// the span; the core moves 256 B (2.5 cycles at 102.4 B/cycle).
#[test]
fn strided_dma_touches_only_its_bursts() {
    let p = params();
    let strided = sys::ascsim_event {
        repeats: 4,
        bytes: 256,
        gm_bytes: 3 * 1024 + 64,
        ..read(MB, 0)
    };
    let r = run(&[aiv(vec![strided])], &p, 0);
    assert_eq!(r.hbm_read_bytes, 2048);
    assert_eq!(r.l2_bytes, 256);
    assert_near(cycles(&r), 2.5);
}

/// Mmad costs its fractal products at the rate of its input dtype (the trace
/// records the input element size): one fp16 fractal (16x16x16) per cycle,
/// one int8 fractal (16x32x16) per cycle, one fp32 fractal (16x16x8) per two
/// cycles (a quarter of the fp16 MAC rate). LoadData into L0B runs at
/// 128 B/cycle, into L0A at 256 B/cycle.
#[test]
fn mmad_dtype_and_l0_target_set_the_rate() {
    let p = params();
    let cube = |events| CoreTrace {
        is_cube: true,
        block_idx: 0,
        events,
    };
    let mmad = |elem: u8| sys::ascsim_event {
        op: OP_MMAD,
        repeats: 100,
        attr: elem,
        ..ev(sys::ASCSIM_EV_INSTR, P_M)
    };
    for (elem, want) in [(2u8, 100.0), (1, 100.0), (4, 200.0)] {
        assert_near(cycles(&run(&[cube(vec![mmad(elem)])], &p, 0)), want);
    }
    let load = |attr: u32| sys::ascsim_event {
        op: OP_LOAD,
        repeats: 2,
        bytes: 1024,
        attr: attr as u8,
        ..ev(sys::ASCSIM_EV_INSTR, P_MTE1)
    };
    let r = run(&[cube(vec![load(sys::ASCSIM_ATTR_L0A)])], &p, 0);
    assert_near(cycles(&r), 4.0);
    let r = run(&[cube(vec![load(sys::ASCSIM_ATTR_L0B)])], &p, 0);
    assert_near(cycles(&r), 8.0);
}

/// The L2 is set-associative: with 4 lines in 2 sets of 2 ways, three lines
/// of one set evict each other (a fully associative L2 of 4 lines would keep
/// all three), while lines spread over both sets stay resident.
#[test]
fn set_associative_l2_conflicts() {
    let mut p = params();
    p.l2_bytes = 4 * 512;
    p.l2_ways = 2;
    // Line ids 0, 2, 4 all map to set 0; re-reading line 0 misses.
    let same_set = aiv(vec![
        read(0, 512),
        read(2 * 512, 512),
        read(4 * 512, 512),
        read(0, 512),
    ]);
    let r = run(&[same_set], &p, 0);
    assert_eq!(r.hbm_read_bytes, 4 * 512);
    assert_eq!(r.l2_hit_bytes, 0);
    // Line ids 0, 1, 2 use both sets; re-reading line 0 hits.
    let spread = aiv(vec![
        read(0, 512),
        read(512, 512),
        read(2 * 512, 512),
        read(0, 512),
    ]);
    let r = run(&[spread], &p, 0);
    assert_eq!(r.hbm_read_bytes, 3 * 512);
    assert_eq!(r.l2_hit_bytes, 512);
}

/// HBM runs at peak x efficiency, the L2 has a bandwidth of its own, and a
/// launch pays a fixed overhead on top of the cores' run.
#[test]
fn hbm_efficiency_l2_bandwidth_and_launch_overhead() {
    // 4 cores read 10240 B each; HBM 409.6 GB/s at efficiency 0.5 gives
    // 204.8 B/cycle: 200 cycles, HBM the critical resource at 100 %.
    let mut p = params();
    p.hbm_bytes_per_s = 409.6e9;
    p.hbm_efficiency = 0.5;
    let cores: Vec<CoreTrace> = (0..4u64)
        .map(|i| aiv(vec![read(MB * (i + 1), 10240)]))
        .collect();
    let r = run(&cores, &p, 0);
    assert_near(cycles(&r), 200.0);
    assert_eq!(r.critical.resource, Resource::Hbm);

    // Each core reads its 10240 B twice (the second pass hits in L2). An L2
    // of 102.4 GB/s (102.4 B/cycle for all cores) bounds both passes:
    // 2 x 40960 B / 102.4 B/cycle = 800 cycles, against 200 at the cores' rate.
    let mut p = params();
    p.l2_bytes_per_s = 102.4e9;
    let twice: Vec<CoreTrace> = (0..4u64)
        .map(|i| {
            let r = read(MB * (i + 1), 10240);
            aiv(vec![r, r])
        })
        .collect();
    let r = run(&twice, &p, 0);
    assert_near(cycles(&r), 800.0);
    assert_eq!(r.l2_hit_bytes, 40960);
    assert_eq!(r.critical.resource, Resource::L2);
    assert_near(r.critical.busy, 1.0);

    // Launch overhead adds to the time, not to the cores' run.
    let mut p = params();
    p.launch_overhead_s = 5e-6;
    let r = run(&[aiv(vec![read(MB, 1024)])], &p, 0);
    assert_near(r.kernel_time_s * 1e9, 10.0);
    assert_near(cycles(&r), 5010.0);
    assert_eq!(r.launches, 1);
}

/// A copy or memset task of a stream: its overhead plus its HBM bytes at the
/// copy rate, no cores; in a sequence it adds up with the kernel launches,
/// which name the sequence.
#[test]
fn copy_and_memset_tasks_cost_overhead_plus_bytes() {
    let mut p = params();
    p.hbm_bytes_per_s = 409.6e9;
    p.hbm_efficiency = 0.5; // 204.8 B/cycle attainable
    p.copy_task_overhead_s = 3e-6;
    p.copy_task_bandwidth = 0.5; // 102.4 B/cycle for the copy engine
    let task = |task, read: u64, written: u64| LaunchReport {
        kernel: "aclrtMemcpyAsync".to_string(),
        task,
        block_dim: 0,
        cores: 0,
        status: 0,
        error: String::new(),
        gm_read_bytes: read,
        gm_write_bytes: written,
        traces: Vec::new(),
        hazards_checked: true,
    };
    // 10240 B read + 10240 B written at 102.4 B/cycle: 200 cycles + 3000.
    let copy = model_launch(&task(Task::Copy, 10240, 10240), &p, 0).unwrap();
    assert_near(copy.kernel_time_s * 1e9, 200.0);
    assert_near(cycles(&copy), 3200.0);
    assert_eq!(copy.hbm_bytes(), 20480);
    assert_eq!(copy.critical.resource, Resource::Hbm);
    // HBM itself is busy for 100 of the 3200 cycles (the copy engine is slower).
    assert_near(copy.hbm_busy * 3200.0, 100.0);
    // A memset writes only: 10240 B in 100 cycles + 3000.
    let memset = model_launch(&task(Task::Memset, 0, 10240), &p, 0).unwrap();
    assert_near(cycles(&memset), 3100.0);

    // memset, kernel, copy on one stream: the times add up, the kernel names it.
    let mut kernel = task(Task::Kernel, 0, 0);
    kernel.kernel = "copy_kernel".to_string();
    kernel.traces = vec![aiv(vec![read(MB, 1024)])];
    kernel.cores = 1;
    kernel.block_dim = 1;
    let all = model_launches(
        &[
            task(Task::Memset, 0, 10240),
            kernel,
            task(Task::Copy, 10240, 10240),
        ],
        &p,
        0,
    )
    .unwrap()
    .unwrap();
    assert_near(all.time_s * 1e9, 3100.0 + 10.0 + 3200.0);
    assert_eq!(all.launches, 3);
    assert_eq!(all.kernel, "copy_kernel");
}

/// Every number of the nominal and conservative profiles is set, every
/// assumption's range holds its nominal value, the conservative profile sets
/// each assumption to its pessimistic end, and the HBM efficiency is at most
/// 0.9 in both.
#[test]
fn profiles_cover_every_number() {
    for soc in [Soc::Ascend910B4, Soc::Ascend910B1] {
        let prof = soc.profile();
        let nominal = CostParams::nominal(&prof);
        let conservative = CostParams::conservative(&prof);
        assert_eq!(
            nominal,
            CostParams::for_profile(&prof, ModelProfile::Nominal)
        );
        for q in [&nominal, &conservative] {
            for (name, v) in q.numbers() {
                assert!(v.is_finite() && v > 0.0, "{}: {name} = {v}", prof.name);
            }
            assert!(q.hbm_efficiency <= 0.9);
            assert!(q.launch_overhead_s > 0.0);
        }
        let list = assumptions(&prof);
        assert!(list.len() >= 20);
        for a in &list {
            assert!(a.low <= a.nominal && a.nominal <= a.high, "{}", a.name);
            assert!(!a.basis.is_empty(), "{}", a.name);
            // Moving this assumption alone to its pessimistic end gives the
            // conservative profile's value of the field it sets.
            let mut q = nominal.clone();
            a.apply(&mut q, a.pessimistic());
            let changed: Vec<_> = q
                .numbers()
                .into_iter()
                .zip(nominal.numbers())
                .filter(|(x, y)| x.1 != y.1)
                .collect();
            assert!(changed.len() <= 1, "{} sets several fields", a.name);
            for ((field, v), _) in changed {
                let c = conservative
                    .numbers()
                    .into_iter()
                    .find(|(f, _)| *f == field)
                    .map(|(_, v)| v);
                assert_eq!(c, Some(v), "{}: {field}", a.name);
            }
        }
        // Conservative is never faster: rates lower or equal, costs higher or equal.
        assert!(conservative.hbm_bytes_per_cycle() <= nominal.hbm_bytes_per_cycle());
        assert!(conservative.launch_overhead_s >= nominal.launch_overhead_s);
        assert!(conservative.scalar_issue_cycles >= nominal.scalar_issue_cycles);
        // Documented numbers are shared by both profiles.
        assert_eq!(conservative.l2_bytes, prof.l2_bytes);
        assert_near(
            nominal.cube_cycles_per_fractal(4),
            4.0 * nominal.cube_cycles_per_fractal(2) / 2.0,
        );
    }
}

/// docs/cost-model.md carries the current assumption table of the default
/// profile (regenerate it with `cargo xtask bench --sensitivity`).
#[test]
fn docs_list_every_assumption() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cost-model.md");
    let doc = std::fs::read_to_string(path).expect("docs/cost-model.md");
    let table = assumptions_markdown(&Soc::default().profile());
    assert!(
        doc.contains(&table),
        "docs/cost-model.md does not hold the current assumption table:\n{table}"
    );
}
