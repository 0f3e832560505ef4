//! An LLM decode loop's sampling step, stream-ordered: one stream, outputs
//! and workspace made once, and per step only the enqueues, one
//! synchronisation and the download of the tokens. The simulator counts
//! every device allocation: no step allocates (the workspace query also
//! uploads the scan's constant matrices, once per device).
//!
//! `cargo run --release --example decode_loop` (on the simulated
//! Ascend910B4; the modeled time per step is the cost model's replay of
//! the step's launches, conservative profile).
use ascend_scan::{
    model_launches, top_p_sample_on, top_p_sample_workspace_bytes, Batch, CostParams, Device, Soc,
    TopPCheck, TopPOptions, TopPRows, Workspace,
};
use half::f16;

/// A batch of next-token distributions (stand-in for a model's softmax):
/// a few likely tokens and a long tail, different every step.
fn next_probs(rows: usize, vocab: usize, step: u64) -> Vec<f16> {
    let mut s = (step + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = Vec::with_capacity(rows * vocab);
    for _ in 0..rows {
        let raw: Vec<f64> = (0..vocab)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                if s.is_multiple_of(500) {
                    1.0 + (s >> 44) as f64 / (1u64 << 20) as f64
                } else {
                    1e-4 * ((s >> 40) % 8) as f64
                }
            })
            .collect();
        let total: f64 = raw.iter().sum();
        out.extend(raw.iter().map(|v| f16::from_f64(v / total)));
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (rows, vocab, steps) = (8, 32000, 6);
    let dev = Device::simulated(Soc::Ascend910B4)?;
    let stream = dev.create_stream()?;
    let options = TopPOptions {
        p: 0.9,
        top_k: Some(50),
        min_p: 0.0,
        seed: 0,
    };

    // Made once: the probabilities' buffer (a model would write its own
    // output here; with a framework's allocation, wrap it with
    // DeviceBuffer::from_raw_parts), the tokens, the check
    // and the workspace.
    let mut probs = dev.alloc::<f16>(rows * vocab)?;
    let mut tokens = dev.alloc::<i32>(rows)?;
    let mut check = TopPCheck::new(&dev, rows)?;
    let mut workspace = Workspace::new(
        &dev,
        top_p_sample_workspace_bytes::<f16>(&dev, rows, vocab, options)?,
    )?;
    let params = CostParams::conservative(dev.profile());

    println!(
        "top-p sampling (p = {}, top_k = {:?}) of {rows} rows x {vocab} f16 on the simulated {}",
        options.p,
        options.top_k,
        dev.soc()
    );
    println!("step  allocations  modeled us (conservative)  tokens");
    for step in 0..steps {
        let before = dev.allocation_count();
        // The host writes only after the previous step's synchronisation.
        probs.write_from_host(0, &next_probs(rows, vocab, step))?;
        // One uniform per row from the step's seed, made on the device
        // (Some(buffer) takes uniforms from any other source).
        let step_options = TopPOptions {
            seed: step,
            ..options
        };
        top_p_sample_on(
            &stream,
            Batch::rows(&probs, rows)?,
            step_options,
            TopPRows::default(),
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
