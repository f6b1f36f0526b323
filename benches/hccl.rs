//! `all_reduce` bandwidth in the style of nccl-tests, **on the simulator**: f32 sums of
//! 1 KiB to 64 MiB per rank on 2 and 4 simulated Atlas A2 devices, with the ranks as
//! threads of one process and as processes (this benchmark starts copies of itself as
//! ranks 1.., itself being rank 0, joined through a root info), beside a host `memcpy` of
//! the same bytes measured in the same run.
//!
//! As nccl-tests reports them: `algbw = bytes / time` and, for all-reduce,
//! `busbw = algbw * 2 (n - 1) / n` (the traffic a ring all-reduce puts on each link), with
//! `time` the time per operation of `iters` operations enqueued back to back and one
//! synchronisation. The simulator moves the data with the host's CPU (the last rank's
//! stream to arrive reads every send buffer, reduces and writes every receive buffer), so
//! these figures describe the simulator on this machine, not Ascend hardware; the memcpy
//! column is the host's own bandwidth for comparison. Across processes each rank's part
//! travels to the process that made the root info and back over a Unix socket, which the
//! process rows show against the thread rows.
//!
//! ```sh
//! cargo bench --bench hccl
//! ```

use ascendcl::hccl::{Communicator, ReduceOp, RootInfo};
use ascendcl::{Device, DeviceTensor, Runtime};
use criterion::{BenchmarkId, Criterion, SamplingMode};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KIB: usize = 1024;
/// 1 KiB, 4 KiB, ... 64 MiB per rank.
const SIZES: [usize; 9] = [
    KIB,
    4 * KIB,
    16 * KIB,
    64 * KIB,
    256 * KIB,
    1024 * KIB,
    4096 * KIB,
    16384 * KIB,
    65536 * KIB,
];

/// Criterion's calls of each (series, bytes), in order: (iterations, time).
type Times = Arc<Mutex<BTreeMap<(String, usize), Vec<(u64, Duration)>>>>;

/// Samples per benchmark (flat sampling: the last calls, after the warm-up's).
const SAMPLES: usize = 10;

/// Set in the processes this benchmark starts as ranks 1..: the root info, in hex.
const WORKER: &str = "HCCL_BENCH_ROOT";

/// `iters` all-reduces of `count` f32 on `comm`, from the first `count` elements of
/// `send` into `recv`, then a synchronisation.
fn all_reduces(
    comm: &Communicator,
    stream: &ascendcl::Stream,
    send: &DeviceTensor<f32>,
    recv: &mut DeviceTensor<f32>,
    count: usize,
    iters: u64,
) {
    let s = send.view().slice(0, 0, count, 1).expect("send view");
    let mut r = recv.view_mut().slice(0, 0, count, 1).expect("recv view");
    for _ in 0..iters {
        comm.all_reduce(&s, &mut r, ReduceOp::Sum, stream)
            .expect("all_reduce");
    }
    stream.synchronize().expect("synchronize");
}

fn buffers(stream: &ascendcl::Stream) -> (DeviceTensor<f32>, DeviceTensor<f32>) {
    let max = SIZES[SIZES.len() - 1] / 4;
    (
        DeviceTensor::<f32>::zeros(stream, [max]).expect("send"),
        DeviceTensor::<f32>::zeros(stream, [max]).expect("recv"),
    )
}

/// A rank process: joins, then runs `count iters` commands read from stdin, answering
/// `done` on stdout after each.
fn worker(rt: &Runtime, hex: &str) {
    let rank: u32 = std::env::var("RANK")
        .ok()
        .and_then(|r| r.parse().ok())
        .expect("RANK");
    let size: u32 = std::env::var("WORLD_SIZE")
        .ok()
        .and_then(|r| r.parse().ok())
        .expect("WORLD_SIZE");
    let bytes: Vec<u8> = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
        .collect();
    let root = RootInfo::from_bytes(&bytes).expect("root info");
    let device = rt.device(rank as i32).expect("device");
    let comm = Communicator::from_root_info(&device, &root, size, rank).expect("join");
    let stream = device.stream().expect("stream");
    let (send, mut recv) = buffers(&stream);
    let mut out = std::io::stdout();
    for line in std::io::stdin().lines() {
        let line = line.expect("command");
        let mut words = line.split(' ').filter_map(|w| w.parse::<u64>().ok());
        let (Some(count), Some(iters)) = (words.next(), words.next()) else {
            break;
        };
        all_reduces(&comm, &stream, &send, &mut recv, count as usize, iters);
        writeln!(out, "done").expect("answer");
        out.flush().expect("answer");
    }
}

/// Rank 0 in this process, ranks 1.. as processes started from this executable.
struct Processes {
    comm: Communicator,
    stream: ascendcl::Stream,
    send: DeviceTensor<f32>,
    recv: DeviceTensor<f32>,
    workers: Vec<(Child, ChildStdin, BufReader<ChildStdout>)>,
}

impl Processes {
    fn start(device: &Device, n: usize) -> Processes {
        let root = RootInfo::new(device).expect("root info");
        let hex: String = root.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
        let exe = std::env::current_exe().expect("benchmark executable");
        let workers = (1..n)
            .map(|r| {
                let mut child = Command::new(&exe)
                    .env(WORKER, &hex)
                    .env("RANK", r.to_string())
                    .env("WORLD_SIZE", n.to_string())
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("rank process");
                let stdin = child.stdin.take().expect("stdin");
                let stdout = BufReader::new(child.stdout.take().expect("stdout"));
                (child, stdin, stdout)
            })
            .collect();
        let comm = Communicator::from_root_info(device, &root, n as u32, 0).expect("join");
        let stream = device.stream().expect("stream");
        let (send, recv) = buffers(&stream);
        Processes {
            comm,
            stream,
            send,
            recv,
            workers,
        }
    }

    /// Wall time of `iters` all-reduces of `bytes` on every rank.
    fn run(&mut self, bytes: usize, iters: u64) -> Duration {
        let started = Instant::now();
        for (_, stdin, _) in &mut self.workers {
            writeln!(stdin, "{} {iters}", bytes / 4).expect("command");
            stdin.flush().expect("command");
        }
        all_reduces(
            &self.comm,
            &self.stream,
            &self.send,
            &mut self.recv,
            bytes / 4,
            iters,
        );
        for (_, _, stdout) in &mut self.workers {
            let mut line = String::new();
            stdout.read_line(&mut line).expect("rank process answer");
            assert_eq!(line.trim(), "done", "rank process failed");
        }
        started.elapsed()
    }

    fn stop(self) {
        let Processes { comm, workers, .. } = self;
        for (mut child, stdin, _) in workers {
            drop(stdin);
            child.wait().expect("rank process");
        }
        drop(comm);
    }
}

/// One thread per rank, each with its stream and 64 MiB send and receive tensors, running
/// `iters` all-reduces of `count` elements on command.
struct Ranks {
    commands: Vec<Sender<(usize, u64)>>,
    done: Receiver<()>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Ranks {
    fn start(comms: Vec<Communicator>) -> Ranks {
        let (done_tx, done) = channel();
        let mut commands = Vec::new();
        let threads = comms
            .into_iter()
            .map(|comm| {
                let (tx, rx) = channel::<(usize, u64)>();
                commands.push(tx);
                let done_tx = done_tx.clone();
                std::thread::spawn(move || {
                    let stream = comm.device().stream().expect("stream");
                    let (send, mut recv) = buffers(&stream);
                    while let Ok((count, iters)) = rx.recv() {
                        all_reduces(&comm, &stream, &send, &mut recv, count, iters);
                        done_tx.send(()).expect("report");
                    }
                })
            })
            .collect();
        Ranks {
            commands,
            done,
            threads,
        }
    }

    /// Wall time of `iters` all-reduces of `bytes` on every rank.
    fn run(&self, bytes: usize, iters: u64) -> Duration {
        let started = Instant::now();
        for c in &self.commands {
            c.send((bytes / 4, iters)).expect("command");
        }
        for _ in &self.commands {
            self.done.recv().expect("rank finished");
        }
        started.elapsed()
    }

    fn stop(self) {
        drop(self.commands);
        for t in self.threads {
            t.join().expect("rank thread");
        }
    }
}

fn record(times: &Times, series: &str, bytes: usize, total: Duration, iters: u64) {
    times
        .lock()
        .unwrap()
        .entry((series.to_owned(), bytes))
        .or_default()
        .push((iters, total));
}

fn bench(c: &mut Criterion, rt: Runtime, times: &Times) {
    let mut group = c.benchmark_group("hccl_all_reduce_f32_simulator");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(SAMPLES)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1500));
    for &bytes in &SIZES {
        let src = vec![1u8; bytes];
        let mut dst = vec![0u8; bytes];
        group.bench_with_input(BenchmarkId::new("host_memcpy", bytes), &bytes, |b, _| {
            b.iter_custom(|iters| {
                let started = Instant::now();
                for _ in 0..iters {
                    dst.copy_from_slice(black_box(&src));
                    black_box(&mut dst);
                }
                let t = started.elapsed();
                record(times, "memcpy", bytes, t, iters);
                t
            })
        });
    }
    for n in [2usize, 4] {
        let devices: Vec<_> = (0..n as i32)
            .map(|i| rt.device(i).expect("device"))
            .collect();
        let ranks = Ranks::start(Communicator::init_all(&devices).expect("communicators"));
        let series = format!("{n}_ranks");
        for &bytes in &SIZES {
            group.bench_with_input(BenchmarkId::new(&series, bytes), &bytes, |b, &bytes| {
                b.iter_custom(|iters| {
                    let t = ranks.run(bytes, iters);
                    record(times, &series, bytes, t, iters);
                    t
                })
            });
        }
        ranks.stop();
        let mut procs = Processes::start(&devices[0], n);
        let series = format!("{n}_processes");
        for &bytes in &SIZES {
            group.bench_with_input(BenchmarkId::new(&series, bytes), &bytes, |b, &bytes| {
                b.iter_custom(|iters| {
                    let t = procs.run(bytes, iters);
                    record(times, &series, bytes, t, iters);
                    t
                })
            });
        }
        procs.stop();
    }
    group.finish();
}

/// Seconds per operation over the measured samples (the last [`SAMPLES`] calls).
fn per_op(calls: &[(u64, Duration)]) -> f64 {
    let measured = &calls[calls.len().saturating_sub(SAMPLES)..];
    let iters: u64 = measured.iter().map(|c| c.0).sum();
    let time: Duration = measured.iter().map(|c| c.1).sum();
    time.as_secs_f64() / iters.max(1) as f64
}

fn print_table(times: &Times) {
    let times = times.lock().unwrap();
    let get =
        |series: &str, bytes: usize| times.get(&(series.to_owned(), bytes)).map(|v| per_op(v));
    println!();
    println!(
        "# all_reduce, f32 sum, out of place — ON THE SIMULATOR (ascend-sim), not Ascend hardware"
    );
    println!("# time: per operation over criterion's measured samples; GB/s = 1e9 bytes/s");
    println!("# 2t/4t: ranks as threads of one process; 2p/4p: ranks as processes");
    println!(
        "# {:>10} | {:>10} {:>8} {:>8} | {:>10} {:>8} {:>8} | {:>10} {:>8} {:>8} | {:>10} {:>8} {:>8} | {:>12}",
        "bytes",
        "2t time",
        "algbw",
        "busbw",
        "4t time",
        "algbw",
        "busbw",
        "2p time",
        "algbw",
        "busbw",
        "4p time",
        "algbw",
        "busbw",
        "memcpy GB/s"
    );
    for &bytes in &SIZES {
        let mut row = format!("  {bytes:>10} |");
        for (n, kind) in [
            (2usize, "ranks"),
            (4, "ranks"),
            (2, "processes"),
            (4, "processes"),
        ] {
            match get(&format!("{n}_{kind}"), bytes) {
                Some(t) => {
                    let algbw = bytes as f64 / t / 1e9;
                    let busbw = algbw * 2.0 * (n as f64 - 1.0) / n as f64;
                    row += &format!(" {:>8.1}us {algbw:>8.3} {busbw:>8.3} |", t * 1e6);
                }
                None => row += &format!(" {:>10} {:>8} {:>8} |", "-", "-", "-"),
            }
        }
        match get("memcpy", bytes) {
            Some(t) => row += &format!(" {:>12.2}", bytes as f64 / t / 1e9),
            None => row += &format!(" {:>12}", "-"),
        }
        println!("{row}");
    }
}

fn main() {
    if std::env::var_os("ASCEND_SIM_DEVICES").is_none() {
        // SAFETY: no other thread exists yet; the simulator reads it at its aclInit.
        unsafe {
            std::env::set_var(
                "ASCEND_SIM_DEVICES",
                "Ascend910B4,Ascend910B4,Ascend910B4,Ascend910B4",
            )
        };
    }
    let rt = Runtime::simulator().expect("simulator");
    if let Ok(hex) = std::env::var(WORKER) {
        worker(&rt, &hex);
        return;
    }
    let times = Times::default();
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, rt, &times);
    c.final_summary();
    print_table(&times);
}
