//! An LLM decode loop's sampling step, stream-ordered: the model's f32
//! logits and each request's own temperature, top-k and top-p on the
//! device, one stream, outputs and workspace made once, and per step only
//! the enqueues, one synchronisation and the download of the tokens. The
//! simulator counts every device allocation: no step allocates.
//!
//! `cargo run --release --example decode_loop` (on the simulated
//! Ascend910B4; the modeled time per step is the cost model's replay of
//! the step's launches, conservative profile).
use ascend_scan::{
    model_launches, sample_logits_on, sample_logits_workspace_bytes, Batch, CostParams, Device,
    DeviceBuffer, LogitsCheck, LogitsRows, LogitsSampling, RowTopK, Soc, Workspace,
};

/// A batch of next-token logits (stand-in for a model's output): a few
/// likely tokens and a long tail, different every step.
fn next_logits(rows: usize, vocab: usize, step: u64) -> Vec<f32> {
    let mut s = (step + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..rows * vocab)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            if s.is_multiple_of(500) {
                8.0 + (s >> 44) as f32 / (1u32 << 20) as f32
            } else {
                ((s >> 40) % 64) as f32 / 16.0 - 2.0
            }
        })
        .collect()
}

/// Each request's parameters: greedy ones (temperature 0), top-k of
/// 20..50 or off (0), top-p of 0.8..1.
struct Requests {
    temperature: Vec<f32>,
    top_k: Vec<i32>,
    top_p: Vec<f32>,
}

fn requests(rows: usize) -> Requests {
    Requests {
        temperature: (0..rows).map(|r| [0.0, 0.7, 1.0, 0.8][r % 4]).collect(),
        top_k: (0..rows).map(|r| [1, 50, 0, 20][r % 4]).collect(),
        top_p: (0..rows).map(|r| [1.0, 0.9, 0.95, 0.8][r % 4]).collect(),
    }
}

/// The per-row inputs: every k at most 50, some rows off (the whole-row
/// path).
fn per_row<'a>(
    temperature: &'a DeviceBuffer<f32>,
    k: &'a DeviceBuffer<i32>,
    top_p: &'a DeviceBuffer<f32>,
) -> LogitsRows<'a> {
    LogitsRows {
        temperature: Some(temperature),
        top_k: Some(RowTopK {
            k,
            max: 50,
            some_off: true,
        }),
        top_p: Some(top_p),
        ..Default::default()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (rows, vocab, steps) = (8, 32000, 6);
    let dev = Device::simulated(Soc::Ascend910B4)?;
    let stream = dev.create_stream()?;
    let options = LogitsSampling::default();

    // Made once: the logits' buffer (a model would write its own output
    // here; with a framework's allocation, wrap it with
    // DeviceBuffer::from_raw_parts), the parameters' buffers, the tokens,
    // the check and the workspace.
    let mut logits = dev.alloc::<f32>(rows * vocab)?;
    let mut temperature = dev.alloc::<f32>(rows)?;
    let mut top_k = dev.alloc::<i32>(rows)?;
    let mut top_p = dev.alloc::<f32>(rows)?;
    let mut tokens = dev.alloc::<i32>(rows)?;
    let mut check = LogitsCheck::new(&dev, rows)?;
    let bytes = sample_logits_workspace_bytes::<f32>(
        &dev,
        rows,
        vocab,
        &per_row(&temperature, &top_k, &top_p),
        options,
    )?;
    let mut workspace = Workspace::new(&dev, bytes)?;
    let params = CostParams::conservative(dev.profile());
    let req = requests(rows);

    println!(
        "logits sampling (per request: temperature {:?}, top_k {:?}, top_p {:?}) of {rows} rows \
         x {vocab} f32 on the simulated {}",
        req.temperature,
        req.top_k,
        req.top_p,
        dev.soc()
    );
    println!("step  allocations  modeled us (conservative)  tokens");
    for step in 0..steps {
        let before = dev.allocation_count();
        // The host writes only after the previous step's synchronisation.
        logits.write_from_host(0, &next_logits(rows, vocab, step))?;
        temperature.write_from_host(0, &req.temperature)?;
        top_k.write_from_host(0, &req.top_k)?;
        top_p.write_from_host(0, &req.top_p)?;
        // One uniform per row from the step's seed, made by the draw
        // (`uniforms: Some(buffer)` takes them from any other source).
        let step_options = LogitsSampling {
            seed: step,
            ..options
        };
        sample_logits_on(
            &stream,
            Batch::rows(&logits, rows)?,
            per_row(&temperature, &top_k, &top_p),
            step_options,
            &mut tokens,
            &mut check,
            &mut workspace,
        )?;
        stream.synchronize()?;
        check.download()?;
        let t = tokens.download()?;
        let allocations = dev.allocation_count() - before;
        let modeled = model_launches(&dev.take_reports(), &params, (rows * vocab) as u64)?
            .map_or(0.0, |m| m.time_s * 1e6);
        println!("{step:>4}  {allocations:>11}  {modeled:>25.1}  {t:?}");
        if allocations != 0 {
            return Err(format!("step {step} allocated {allocations} device buffers").into());
        }
    }
    Ok(())
}
