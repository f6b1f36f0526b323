//! Data-parallel training steps over every device, with HCCL.
//!
//! Every rank (one thread per device) holds the same parameters `w` (broadcast from rank
//! 0), receives its own upstream gradient `g_r` for each step (its shard of the batch),
//! computes the local gradient `mish_backward(g_r, w)` on its device and sums the local
//! gradients of all ranks with `all_reduce`. After the last step, each rank's local
//! gradient is checked against the CPU reference `reference::mish_backward(g_r, w)` under
//! CANN's precision standard for f32, and the summed gradient must be, on every rank and
//! bit for bit, the sum in rank order of the local gradients. Prints the time per step.
//!
//! On the simulator (no CANN found) the devices are `ASCEND_SIM_DEVICES`, four Atlas A2 by
//! default; on an Atlas machine, every NPU.
//!
//! Three ways to run it:
//! * threads: one process, one thread per device (`Communicator::init_all`);
//! * `--processes N` (or `all`): it starts N copies of itself as a job, rank `r` on device
//!   `r`, with `RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT` and `LOCAL_RANK` set; each
//!   joins with `Communicator::from_env`. The ranks' summed gradients must agree bit for bit
//!   with each other and with the threaded run, which the parent makes too;
//! * under a launcher that sets those variables (torchrun-style): the same rank code.
//!
//! ```sh
//! cargo run --release --example data_parallel -- [elements per rank] [steps]
//! cargo run --release --example data_parallel -- --processes 4 [elements per rank] [steps]
//! ```

use ascendcl::hccl::{Communicator, ReduceOp};
use ascendcl::{Device, DeviceTensor, Runtime, Stream, mish_backward, reference};
use ndarray::{Array1, ArrayD, Ix1};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The upstream gradient of rank `rank` at step `step`: a deterministic pattern.
fn upstream(n: usize, rank: usize, step: usize) -> Array1<f32> {
    Array1::from_shape_fn(n, |i| {
        (((i * 7 + rank * 13 + step * 5) % 17) as f32 - 8.0) / 16.0
    })
}

fn parameters(n: usize) -> Array1<f32> {
    Array1::from_shape_fn(n, |i| ((i * 37 % 101) as f32 - 50.0) / 10.0)
}

/// What one rank measured and computed.
struct RankRun {
    step_times: Vec<Duration>,
    /// The last step's local gradient, and the summed one.
    local: Vec<f32>,
    total: Vec<f32>,
}

fn rank_loop(comm: &Communicator, n: usize, steps: usize) -> ascendcl::Result<RankRun> {
    let stream: Stream = comm.device().stream()?;
    let rank = comm.rank() as usize;
    // The parameters start on rank 0 and reach every rank by broadcast.
    let mut w = if rank == 0 {
        DeviceTensor::from_array(&stream, &parameters(n))?
    } else {
        DeviceTensor::<f32>::zeros(&stream, [n])?
    };
    comm.broadcast(&mut w, 0, &stream)?;
    let mut local = DeviceTensor::<f32>::zeros(&stream, [n])?;
    let mut total = DeviceTensor::<f32>::zeros(&stream, [n])?;
    let mut step_times = Vec::with_capacity(steps);
    for step in 0..steps {
        let started = Instant::now();
        let g = DeviceTensor::from_array(&stream, &upstream(n, rank, step))?;
        mish_backward(&g, &w, &mut local, &stream)?;
        comm.all_reduce(&local, &mut total, ReduceOp::Sum, &stream)?;
        stream.synchronize()?;
        step_times.push(started.elapsed());
    }
    Ok(RankRun {
        step_times,
        local: local.to_array::<Ix1>(&stream)?.into_iter().collect(),
        total: total.to_array::<Ix1>(&stream)?.into_iter().collect(),
    })
}

/// MERE and MARE of `got` against `want` (CANN's precision standard).
fn mere_mare(got: &[f32], want: &[f32]) -> (f64, f64) {
    let (mut sum, mut max) = (0.0f64, 0.0f64);
    for (&a, &g) in got.iter().zip(want) {
        let rel = (f64::from(a) - f64::from(g)).abs() / (f64::from(g).abs() + 1e-7);
        sum += rel;
        max = max.max(rel);
    }
    (sum / got.len().max(1) as f64, max)
}

/// FNV-1a over the bits of `values`: equal digests, equal gradients.
fn digest(values: &[f32]) -> u64 {
    values.iter().fold(0xcbf2_9ce4_8422_2325, |h, v| {
        v.to_bits()
            .to_le_bytes()
            .iter()
            .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
    })
}

fn fail(why: String) -> ascendcl::Error {
    ascendcl::Error::InvalidArgument(why)
}

/// The local gradient of the last step against the CPU reference.
fn precise(rank: usize, run: &RankRun, n: usize, steps: usize) -> ascendcl::Result<bool> {
    let w = parameters(n).into_dyn();
    let t = 2f64.powi(-13);
    let g = upstream(n, rank, steps.saturating_sub(1)).into_dyn();
    let want: ArrayD<f32> = reference::mish_backward(g.view(), w.view())?;
    let (mere, mare) = mere_mare(&run.local, want.as_slice().unwrap_or_default());
    println!(
        "rank {rank}: local gradient vs CPU reference: MERE {mere:.2e}, MARE {mare:.2e} (f32 limits {t:.2e}, {:.2e})",
        10.0 * t
    );
    Ok(mere < t && mare < 10.0 * t)
}

/// The local gradients added in rank order.
fn rank_order_sum(locals: &[&[f32]]) -> Vec<f32> {
    let mut sum = locals[0].to_vec();
    for local in &locals[1..] {
        for (acc, v) in sum.iter_mut().zip(local.iter()) {
            *acc += v;
        }
    }
    sum
}

fn print_times(rank: usize, run: &RankRun, steps: usize) {
    let total: Duration = run.step_times.iter().sum();
    let fastest = run.step_times.iter().min().copied().unwrap_or_default();
    println!(
        "rank {rank}: {:.3} ms per step (mean of {steps}), fastest {:.3} ms",
        total.as_secs_f64() * 1e3 / steps.max(1) as f64,
        fastest.as_secs_f64() * 1e3
    );
}

/// One thread per device (the first `ranks` devices) of this process. Returns the digest
/// of the summed gradient.
fn threads(
    rt: &Runtime,
    ranks: usize,
    n: usize,
    steps: usize,
    quiet: bool,
) -> ascendcl::Result<u64> {
    let devices = (0..ranks as i32)
        .map(|id| rt.device(id))
        .collect::<ascendcl::Result<Vec<Device>>>()?;
    if !quiet {
        println!(
            "backend: {}; {} rank(s) on {} (threads); {n} f32 elements per rank, {steps} steps",
            rt.backend(),
            devices.len(),
            devices.first().map_or("no device", |d| d.soc_name())
        );
    }
    let comms = Communicator::init_all(&devices)?;
    // One thread per rank: HCCL's calls meet the other ranks' calls.
    let runs = std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .iter()
            .map(|comm| s.spawn(move || rank_loop(comm, n, steps)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread panicked"))
            .collect::<ascendcl::Result<Vec<RankRun>>>()
    })?;
    let mut ok = true;
    let sum = rank_order_sum(&runs.iter().map(|r| r.local.as_slice()).collect::<Vec<_>>());
    for (rank, run) in runs.iter().enumerate() {
        if !quiet {
            ok &= precise(rank, run, n, steps)?;
            print_times(rank, run, steps);
        }
        ok &= digest(&run.total) == digest(&sum);
    }
    if !ok {
        return Err(fail(
            "the gradients do not match the CPU reference and their sum".into(),
        ));
    }
    Ok(digest(&sum))
}

/// This process is one rank of a job (`RANK` etc. set): joins with `from_env` on device
/// `LOCAL_RANK` (else `RANK`), trains, checks, and prints the digest of the summed gradient.
fn job_rank(rt: &Runtime, n: usize, steps: usize) -> ascendcl::Result<()> {
    let local = std::env::var("LOCAL_RANK")
        .or_else(|_| std::env::var("RANK"))
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let device = rt.device(local)?;
    let comm = Communicator::from_env(&device)?;
    let rank = comm.rank() as usize;
    let run = rank_loop(&comm, n, steps)?;
    // Every rank's local gradient, to check the sum bit for bit in rank order.
    let stream = device.stream()?;
    let local_t = DeviceTensor::from_array(&stream, &Array1::from_vec(run.local.clone()))?;
    let mut all = DeviceTensor::<f32>::zeros(&stream, [n * comm.size() as usize])?;
    comm.all_gather(&local_t, &mut all, &stream)?;
    let all: Vec<f32> = all.to_array::<Ix1>(&stream)?.into_iter().collect();
    let sum = rank_order_sum(&all.chunks(n.max(1)).collect::<Vec<_>>());
    let exact = digest(&run.total) == digest(&sum);
    let ok = precise(rank, &run, n, steps)?;
    print_times(rank, &run, steps);
    println!("digest {:016x} exact {exact}", digest(&run.total));
    if !(ok && exact) {
        return Err(fail(format!("rank {rank}: the gradients do not match")));
    }
    Ok(())
}

/// Starts `processes` copies of this program as a job on this machine and checks that
/// every rank's summed gradient equals the threaded run's.
fn launch(rt: &Runtime, processes: usize, n: usize, steps: usize) -> ascendcl::Result<()> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| fail(format!("no free port: {e}")))?
        .port();
    let exe = std::env::current_exe().map_err(|e| fail(e.to_string()))?;
    println!(
        "backend: {}; {processes} processes, one rank each; {n} f32 elements per rank, {steps} steps",
        rt.backend()
    );
    let children = (0..processes)
        .map(|r| {
            Command::new(&exe)
                .args([n.to_string(), steps.to_string()])
                .env("RANK", r.to_string())
                .env("LOCAL_RANK", r.to_string())
                .env("WORLD_SIZE", processes.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port.to_string())
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| fail(format!("cannot start rank {r}: {e}")))
        })
        .collect::<ascendcl::Result<Vec<_>>>()?;
    let mut digests = Vec::new();
    for (r, child) in children.into_iter().enumerate() {
        let out = child
            .wait_with_output()
            .map_err(|e| fail(format!("rank {r}: {e}")))?;
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines().for_each(|l| println!("[{r}] {l}"));
        if !out.status.success() {
            return Err(fail(format!("rank {r} failed: {}", out.status)));
        }
        digests.extend(
            text.lines()
                .filter_map(|l| l.strip_prefix("digest "))
                .filter_map(|l| u64::from_str_radix(l.split(' ').next()?, 16).ok()),
        );
    }
    // The same job with threads, devices 0..processes of this process.
    let threaded = threads(rt, processes, n, steps, true)?;
    let agree = digests.len() == processes && digests.iter().all(|&d| d == threaded);
    println!(
        "summed gradients of all {processes} processes equal the threaded run's bit for bit: {agree}"
    );
    if !agree {
        return Err(fail(
            "the processes' gradients differ from the threaded run".into(),
        ));
    }
    println!("ok");
    Ok(())
}

fn main() -> ascendcl::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let processes = match args.iter().position(|a| a == "--processes") {
        Some(i) => {
            let value = args.get(i + 1).cloned().unwrap_or_default();
            args.drain(i..(i + 2).min(args.len()));
            Some(value)
        }
        None => None,
    };
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1 << 18);
    let steps: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let job = std::env::var_os("RANK").is_some() && std::env::var_os("WORLD_SIZE").is_some();
    // Atlas A2 devices, one per rank, when the simulator runs (no CANN found) and the
    // environment does not describe another machine.
    #[cfg(feature = "sim")]
    if std::env::var_os("ASCEND_SIM_DEVICES").is_none() {
        let count = processes
            .as_deref()
            .and_then(|p| p.parse::<usize>().ok())
            .or_else(|| std::env::var("WORLD_SIZE").ok()?.parse().ok())
            .unwrap_or(4)
            .max(1);
        Runtime::configure_simulator(
            &ascendcl::SimConfig::new().devices(vec!["Ascend910B4"; count]),
        )?;
    }
    let rt = Runtime::auto()?;
    if job {
        return job_rank(&rt, n, steps);
    }
    match processes {
        Some(p) => {
            let count = if p == "all" {
                rt.device_count()? as usize
            } else {
                p.parse()
                    .map_err(|_| fail(format!("--processes {p}: a number or `all`")))?
            };
            launch(&rt, count, n, steps)
        }
        None => {
            threads(&rt, rt.device_count()? as usize, n, steps, false)?;
            println!("ok");
            Ok(())
        }
    }
}
