//! HCCL across processes on the simulator, one process per rank as jobs run: this binary
//! starts copies of itself as the ranks (`ASCENDCL_TEST_RANK_CASE` names what a copy
//! does), with `RANK`, `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT` set as a launcher sets
//! them; process `r` opens device `r`. The parent checks each rank's exit status and
//! output, that every rank failed within the timeout where a failure was provoked, and that
//! no process or socket of the simulator is left afterwards.
//!
//! It has its own `main` (`harness = false`): a filter argument runs the cases whose name
//! contains it.

mod hccl_common;

use ascendcl::hccl::{Communicator, ReduceOp, RendezvousError, RootInfo};
use ascendcl::{DeviceTensor, Element, Error, Runtime, Stream};
use half::{bf16, f16};
use hccl_common::{assert_bits, combine, download, upload};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CASE: &str = "ASCENDCL_TEST_RANK_CASE";
/// The simulator's HCCL timeout and the rendezvous' connect timeout (seconds) in the
/// ranks: generous, so that slow machines (sanitizers) do not fail by timing...
const TIMEOUT_MS: &str = "20000";
const CONNECT_S: &str = "60";
/// ... and short in the cases that provoke a timeout.
const SHORT: Duration = Duration::from_millis(1500);
const SHORT_TIMEOUTS: [(&str, &str); 2] = [
    ("ASCEND_SIM_HCCL_TIMEOUT_MS", "1500"),
    ("HCCL_CONNECT_TIMEOUT", "2"),
];
const DEVICES: &str = "Ascend910B4,Ascend910B4,Ascend910B4,Ascend910B4";

// ---------------------------------------------------------------------------------------
// The ranks.

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

fn rank() -> u32 {
    var("RANK").parse().unwrap_or(0)
}

/// Rank `r`'s element `i`: small integers, exact in every dtype when summed.
fn value<T: Element>(r: usize, i: usize) -> T {
    T::from_f32(((i * 7 + r * 3) % 17) as f32 - 8.0)
}

fn input<T: Element>(r: usize, n: usize) -> Vec<T> {
    (0..n).map(|i| value(r, i)).collect()
}

/// What the in-process collectives compute: rank 0 combined with rank 1, then rank 2, ...
fn reduced<T: Element>(ranks: usize, n: usize, offset: usize, op: ReduceOp) -> Vec<T> {
    (0..n)
        .map(|i| {
            (1..ranks).fold(value::<T>(0, offset + i), |acc, r| {
                combine(acc, value(r, offset + i), op)
            })
        })
        .collect()
}

/// Every collective of one dtype and length on `comm`, checked against the in-process
/// results.
fn collectives<T: Element>(comm: &Communicator, stream: &Stream, n: usize) {
    let (r, size) = (comm.rank() as usize, comm.size() as usize);
    let what = |c: &str| format!("{c} {:?} n={n} rank {r}", T::DTYPE);
    let send = upload(stream, &input::<T>(r, n));
    let mut recv = DeviceTensor::<T>::zeros(stream, [n]).unwrap();
    for op in [ReduceOp::Sum, ReduceOp::Max] {
        comm.all_reduce(&send, &mut recv, op, stream).unwrap();
        assert_bits(
            &download(stream, &recv),
            &reduced(size, n, 0, op),
            &what("all_reduce"),
        );
    }
    let mut buf = upload(stream, &input::<T>(r, n));
    comm.all_reduce_inplace(&mut buf, ReduceOp::Sum, stream)
        .unwrap();
    let sum = reduced::<T>(size, n, 0, ReduceOp::Sum);
    assert_bits(&download(stream, &buf), &sum, &what("all_reduce_inplace"));
    let mut buf = upload(stream, &input::<T>(r, n));
    comm.broadcast(&mut buf, 1, stream).unwrap();
    assert_bits(
        &download(stream, &buf),
        &input::<T>(1, n),
        &what("broadcast"),
    );
    let mut all = DeviceTensor::<T>::zeros(stream, [n * size]).unwrap();
    comm.all_gather(&send, &mut all, stream).unwrap();
    let want: Vec<T> = (0..size).flat_map(|q| input::<T>(q, n)).collect();
    assert_bits(&download(stream, &all), &want, &what("all_gather"));
    let big = upload(
        stream,
        &(0..n * size).map(|i| value::<T>(r, i)).collect::<Vec<_>>(),
    );
    comm.reduce_scatter(&big, &mut recv, ReduceOp::Sum, stream)
        .unwrap();
    let want = reduced::<T>(size, n, r * n, ReduceOp::Sum);
    assert_bits(&download(stream, &recv), &want, &what("reduce_scatter"));
    // A ring: send to the next rank on this stream, receive from the previous on another.
    let other = comm.device().stream().unwrap();
    let mut got = DeviceTensor::<T>::zeros(&other, [n]).unwrap();
    comm.send(&send, ((r + 1) % size) as u32, stream).unwrap();
    comm.recv(&mut got, ((r + size - 1) % size) as u32, &other)
        .unwrap();
    stream.synchronize().unwrap();
    let from = (r + size - 1) % size;
    assert_bits(
        &download(&other, &got),
        &input::<T>(from, n),
        &what("send/recv ring"),
    );
}

/// A rank's `Result` as one line on stdout, for the parent.
fn report<T>(r: &Result<T, Error>) {
    match r {
        Ok(_) => println!("result ok"),
        Err(e) => println!("result err {e}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// The simulator's layout of a root info's bytes, which a hostile process on the machine
/// can read as well as a test: the process id at 16, the socket name's token at 32, the
/// secret at 40 (32 bytes).
fn root_fields(root: &[u8]) -> (u32, u64, Vec<u8>) {
    let pid = u32::from_le_bytes(root[16..20].try_into().unwrap());
    let token = u64::from_le_bytes(root[32..40].try_into().unwrap());
    (pid, token, root[40..72].to_vec())
}

fn socket_name(pid: u32, token: u64) -> String {
    format!("ascend-sim-hccl.{pid}.{token:016x}")
}

/// A hostile process (not a rank): `INTRUDER` says what it does at the abstract socket
/// `INTRUDER_NAME`. It prints how the other end answered: `closed` (refused without a
/// word) or `answered`.
fn intruder(what: &str) {
    use std::io::{Read, Write};
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
    let name = var("INTRUDER_NAME");
    if what == "squat" {
        // Takes the names given and holds them until stdin closes.
        let held: Vec<UnixListener> = name
            .split(',')
            .map(|n| UnixListener::bind_addr(&SocketAddr::from_abstract_name(n).unwrap()).unwrap())
            .collect();
        println!("bound");
        let _ = std::io::stdin().read_line(&mut String::new());
        drop(held);
        return;
    }
    let mut conn =
        UnixStream::connect_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
    let secret = unhex(&var("INTRUDER_SECRET"));
    let mut frame = Vec::new();
    if what == "oversized" {
        frame.extend_from_slice(&u32::MAX.to_le_bytes());
    } else {
        // A join as rank 1 of 2 on device 1: tag, secret, nRanks, rank, device, pid.
        let mut body = vec![1u8];
        body.extend_from_slice(&secret);
        for v in [2u32, 1, 1, std::process::id()] {
            body.extend_from_slice(&v.to_le_bytes());
        }
        frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
        frame.extend_from_slice(&body);
    }
    let _ = conn.write_all(&frame);
    conn.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut answer = [0u8; 1];
    match conn.read(&mut answer) {
        Ok(0) => println!("intruder closed"),
        Ok(_) => println!("intruder answered"),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => println!("intruder closed"),
        Err(e) => println!("intruder error {e}"),
    }
}

fn child(case: &str) {
    if let Ok(what) = std::env::var("INTRUDER") {
        return intruder(&what);
    }
    let rt = Runtime::simulator().unwrap();
    let r = rank();
    let device = rt.device(r as i32).unwrap();
    match case {
        "collectives" => {
            let comm = Communicator::from_env(&device).unwrap();
            let stream = device.stream().unwrap();
            for n in [0, 1, 1000] {
                collectives::<f32>(&comm, &stream, n);
                collectives::<f16>(&comm, &stream, n);
                collectives::<bf16>(&comm, &stream, n);
            }
            // 4 MiB of f32.
            collectives::<f32>(&comm, &stream, 1 << 20);
            drop(comm);
            println!("result ok");
        }
        "chunked" => {
            // Messages of up to 1.6 MB in frames of 4 KiB, as a collective of gigabytes
            // crosses in frames of 64 MiB.
            ascend_sim::testing::set_hccl_frame_limit(4096);
            let comm = Communicator::from_env(&device).unwrap();
            let stream = device.stream().unwrap();
            collectives::<f32>(&comm, &stream, 100_000);
            drop(comm);
            println!("result ok");
        }
        "disagree" => {
            let comm = Communicator::from_env(&device).unwrap();
            let stream = device.stream().unwrap();
            let n = 4 + r as usize;
            let send = DeviceTensor::<f32>::zeros(&stream, [n]).unwrap();
            let mut recv = DeviceTensor::<f32>::zeros(&stream, [n]).unwrap();
            report(&comm.all_reduce(&send, &mut recv, ReduceOp::Sum, &stream));
        }
        "abort_after_join" => {
            let comm = Communicator::from_env(&device).unwrap();
            if r + 1 == comm.size() {
                // Dies without destroying anything, as a killed rank would.
                std::process::abort();
            }
            let stream = device.stream().unwrap();
            let send = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
            let mut recv = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
            report(&comm.all_reduce(&send, &mut recv, ReduceOp::Sum, &stream));
        }
        "hub_leaves_first" => {
            let comm = Communicator::from_env(&device).unwrap();
            if r == 0 {
                // The hub's rank destroys its communicator while the others still have
                // work between them, and its process exits after.
                drop(comm);
                println!("result ok");
            } else {
                std::thread::sleep(Duration::from_millis(300));
                let stream = device.stream().unwrap();
                let peer = 3 - r;
                let send = upload(&stream, &input::<f32>(r as usize, 64));
                let mut got = DeviceTensor::<f32>::zeros(&stream, [64]).unwrap();
                let sent = if r == 1 {
                    comm.send(&send, peer, &stream)
                        .and_then(|()| comm.recv(&mut got, peer, &stream))
                } else {
                    comm.recv(&mut got, peer, &stream)
                        .and_then(|()| comm.send(&send, peer, &stream))
                };
                let done = sent.and_then(|()| stream.synchronize());
                if done.is_ok() {
                    assert_bits(
                        &download(&stream, &got),
                        &input::<f32>(peer as usize, 64),
                        "send/recv after the hub left",
                    );
                }
                report(&done);
            }
        }
        "hub_aborts" => {
            // Rank 0 may die before another rank's join has completed: that join then
            // fails the same way as a later collective would.
            let comm = match Communicator::from_env(&device) {
                Ok(comm) => comm,
                Err(e) => return report::<()>(&Err(e)),
            };
            if r == 0 {
                std::process::abort();
            }
            let stream = device.stream().unwrap();
            let send = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
            let mut recv = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
            report(&comm.all_reduce(&send, &mut recv, ReduceOp::Sum, &stream));
        }
        "stalled_stream" => {
            let comm = Communicator::from_env(&device).unwrap();
            let stream = device.stream().unwrap();
            // The hub's own stream stalls: the peer's part times out there, and the hub's
            // part, when it runs, finds the meeting failed.
            let hold = (r == 0).then(|| ascend_sim::testing::hold_stream(stream.as_raw()).unwrap());
            let send = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
            let mut recv = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
            comm.all_reduce(&send, &mut recv, ReduceOp::Sum, &stream)
                .unwrap();
            if let Some(hold) = hold {
                std::thread::sleep(2 * SHORT);
                hold.release();
            }
            let synced = stream.synchronize();
            let next = comm.barrier(&stream);
            println!("next {next:?}");
            report(&synced);
        }
        "rendezvous" => report(&Communicator::from_env(&device)),
        "hub_never_joins_alone" => {
            // Rank 0 alone: the HCCL meeting itself times out, naming rank 1.
            let root = RootInfo::new(&device).unwrap();
            report(&Communicator::from_root_info(&device, &root, 2, 0));
        }
        "mixed" => {
            // Two processes of two ranks each; the root info goes through the parent.
            let p = r as usize;
            let devices = [
                rt.device(2 * p as i32).unwrap(),
                rt.device(2 * p as i32 + 1).unwrap(),
            ];
            let root = if p == 0 {
                let root = RootInfo::new(&devices[0]).unwrap();
                let hex: String = root.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
                println!("root {hex}");
                root
            } else {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).unwrap();
                let hex = line.trim();
                let bytes: Vec<u8> = (0..hex.len() / 2)
                    .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                    .collect();
                RootInfo::from_bytes(&bytes).unwrap()
            };
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..2)
                    .map(|k| {
                        let (device, root) = (&devices[k], &root);
                        s.spawn(move || {
                            let comm =
                                Communicator::from_root_info(device, root, 4, (2 * p + k) as u32)
                                    .unwrap();
                            let stream = device.stream().unwrap();
                            collectives::<f32>(&comm, &stream, 300);
                        })
                    })
                    .collect();
                handles.into_iter().for_each(|h| h.join().unwrap());
            });
            println!("result ok");
        }
        "guarded" => {
            // Rank 0 prints its root info and joins; rank 1 reads it from stdin. Both
            // check an all-reduce, whatever else connected to rank 0's socket.
            let root = if r == 0 {
                let root = RootInfo::new(&device).unwrap();
                println!("root {}", hex(root.as_bytes()));
                root
            } else {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).unwrap();
                RootInfo::from_bytes(&unhex(line.trim())).unwrap()
            };
            let comm = match Communicator::from_root_info(&device, &root, 2, r) {
                Ok(comm) => comm,
                Err(e) => return report::<()>(&Err(e)),
            };
            let stream = device.stream().unwrap();
            let send = upload(&stream, &input::<f32>(r as usize, 64));
            let mut recv = DeviceTensor::<f32>::zeros(&stream, [64]).unwrap();
            comm.all_reduce(&send, &mut recv, ReduceOp::Sum, &stream)
                .unwrap();
            assert_bits(
                &download(&stream, &recv),
                &reduced::<f32>(2, 64, 0, ReduceOp::Sum),
                "all_reduce with intruders refused",
            );
            drop(comm);
            println!("result ok");
        }
        other => panic!("unknown case {other}"),
    }
    // Nothing of the simulator's HCCL keeps running in this process.
    let deadline = Instant::now() + Duration::from_secs(20);
    while ascend_sim::hccl::serving_threads() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(ascend_sim::hccl::serving_threads(), 0, "hub threads left");
    assert_eq!(ascend_sim::hccl::counters().communicators, 0);
}

// ---------------------------------------------------------------------------------------
// The parent.

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Starts rank processes running `case`: `(RANK, WORLD_SIZE)` each.
fn spawn(case: &str, ranks: &[(u32, u32)], port: u16, extra: &[(&str, &str)]) -> Vec<Child> {
    ranks
        .iter()
        .map(|&(rank, world)| {
            let mut cmd = Command::new(std::env::current_exe().unwrap());
            cmd.env(CASE, case)
                .env("ASCEND_SIM_DEVICES", DEVICES)
                .env("ASCEND_SIM_HCCL_TIMEOUT_MS", TIMEOUT_MS)
                .env("HCCL_CONNECT_TIMEOUT", CONNECT_S)
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", world.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port.to_string())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            for (k, v) in extra {
                cmd.env(k, v);
            }
            cmd.spawn().unwrap()
        })
        .collect()
}

/// What a rank process did: whether it exited successfully, its `result` line, stderr.
struct Outcome {
    success: bool,
    result: String,
    stderr: String,
}

/// Waits for every child (killing those still running after `limit`).
fn finish(children: Vec<Child>, limit: Duration) -> Vec<Outcome> {
    let deadline = Instant::now() + limit;
    children
        .into_iter()
        .map(|mut c| {
            let status = loop {
                if let Some(s) = c.try_wait().unwrap() {
                    break Some(s);
                }
                if Instant::now() >= deadline {
                    let _ = c.kill();
                    let _ = c.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            let out = c.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            Outcome {
                success: status.is_some_and(|s| s.success()),
                result: stdout
                    .lines()
                    .find_map(|l| l.strip_prefix("result "))
                    .unwrap_or("none")
                    .to_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            }
        })
        .collect()
}

/// The simulator's sockets still bound on this machine (abstract names in /proc/net/unix).
fn sockets_left() -> usize {
    std::fs::read_to_string("/proc/net/unix")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("@ascend-sim-hccl"))
        .count()
}

#[track_caller]
fn all_ok(outcomes: &[Outcome]) {
    for (r, o) in outcomes.iter().enumerate() {
        assert!(
            o.success && o.result == "ok",
            "rank {r}: {} {}",
            o.result,
            o.stderr
        );
    }
}

fn collectives_in_two_and_four_processes() {
    for world in [2, 4] {
        let ranks: Vec<_> = (0..world).map(|r| (r, world)).collect();
        let out = finish(
            spawn("collectives", &ranks, free_port(), &[]),
            Duration::from_secs(120),
        );
        all_ok(&out);
    }
}

fn collectives_larger_than_a_frame_cross_in_pieces() {
    let out = finish(
        spawn("chunked", &[(0, 2), (1, 2)], free_port(), &[]),
        Duration::from_secs(120),
    );
    all_ok(&out);
}

fn two_processes_of_two_ranks_each_through_the_manual_path() {
    let mut children = spawn("mixed", &[(0, 2), (1, 2)], free_port(), &[]);
    let mut rank0 = BufReader::new(children[0].stdout.take().unwrap());
    let mut line = String::new();
    rank0.read_line(&mut line).unwrap();
    let hex = line.strip_prefix("root ").unwrap().to_owned();
    {
        use std::io::Write;
        let stdin = children[1].stdin.as_mut().unwrap();
        writeln!(stdin, "{}", hex.trim()).unwrap();
    }
    let out = finish(children, Duration::from_secs(90));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut rank0, &mut rest).unwrap();
    assert!(
        out[0].success && rest.contains("result ok"),
        "{rest} {}",
        out[0].stderr
    );
    assert!(
        out[1].success && out[1].result == "ok",
        "{} {}",
        out[1].result,
        out[1].stderr
    );
}

fn disagreeing_counts_fail_every_rank_with_para() {
    let out = finish(
        spawn("disagree", &[(0, 2), (1, 2)], free_port(), &[]),
        Duration::from_secs(90),
    );
    for (r, o) in out.iter().enumerate() {
        assert!(
            o.result.contains("HCCL_E_PARA") && o.result.contains("count 5 where rank 0 has 4"),
            "rank {r}: {} {}",
            o.result,
            o.stderr
        );
    }
}

fn a_rank_that_aborts_after_joining_fails_the_others_at_once() {
    let ranks = [(0, 3), (1, 3), (2, 3)];
    let out = finish(
        spawn("abort_after_join", &ranks, free_port(), &[]),
        Duration::from_secs(90),
    );
    assert!(!out[2].success, "rank 2 aborted");
    // The survivors learn it from the closed connections (HCCL_E_REMOTE naming rank 2 and
    // its process), not from a timeout.
    for (r, o) in out[..2].iter().enumerate() {
        assert!(o.success, "rank {r}: {}", o.stderr);
        assert!(
            o.result.contains("HCCL_E_REMOTE")
                && o.result.contains("rank 2 will not come")
                && o.result.contains("exited or was killed"),
            "rank {r}: {}",
            o.result
        );
    }
}

fn the_others_work_on_after_the_hub_rank_destroys_its_communicator() {
    let ranks = [(0, 3), (1, 3), (2, 3)];
    let out = finish(
        spawn("hub_leaves_first", &ranks, free_port(), &[]),
        Duration::from_secs(90),
    );
    for (r, o) in out.iter().enumerate() {
        assert!(
            o.success && o.result == "ok",
            "rank {r}: {} {}",
            o.result,
            o.stderr
        );
    }
}

fn the_death_of_the_hub_process_fails_the_other_ranks() {
    let ranks = [(0, 3), (1, 3), (2, 3)];
    let out = finish(
        spawn("hub_aborts", &ranks, free_port(), &[]),
        Duration::from_secs(90),
    );
    assert!(!out[0].success, "rank 0 aborted");
    for (r, o) in out.iter().enumerate().skip(1) {
        assert!(o.success, "rank {r}: {}", o.stderr);
        assert!(
            o.result.contains("HCCL_E_REMOTE") && o.result.contains("broke"),
            "rank {r}: {}",
            o.result
        );
    }
}

fn a_stalled_stream_fails_the_peers_work() {
    let out = finish(
        spawn(
            "stalled_stream",
            &[(0, 2), (1, 2)],
            free_port(),
            &SHORT_TIMEOUTS,
        ),
        Duration::from_secs(90),
    );
    for (r, o) in out.iter().enumerate() {
        assert!(o.success, "rank {r}: {}", o.stderr);
        assert!(
            o.result.contains("HCCL_E_TIMEOUT") && o.result.contains("did not reach it"),
            "rank {r}: {}",
            o.result
        );
    }
}

fn a_rank_that_never_starts_times_out_naming_it() {
    let out = finish(
        spawn(
            "hub_never_joins_alone",
            &[(0, 2)],
            free_port(),
            &SHORT_TIMEOUTS,
        ),
        Duration::from_secs(90),
    );
    assert!(
        out[0].result.contains("HCCL_E_TIMEOUT")
            && out[0].result.contains("rank(s) [1] did not join"),
        "{} {}",
        out[0].result,
        out[0].stderr
    );
    // At the rendezvous: rank 0 waits for rank 1 in vain, rank 1 alone finds no rank 0.
    let out = finish(
        spawn("rendezvous", &[(0, 2)], free_port(), &SHORT_TIMEOUTS),
        Duration::from_secs(90),
    );
    assert!(
        out[0].result.contains("1 of 2 ranks did not come"),
        "{}",
        out[0].result
    );
    let out = finish(
        spawn("rendezvous", &[(1, 2)], free_port(), &SHORT_TIMEOUTS),
        Duration::from_secs(90),
    );
    assert!(
        out[0].result.contains("no rank 0 listened at 127.0.0.1"),
        "{}",
        out[0].result
    );
}

fn rendezvous_refuses_a_rank_claimed_twice_and_a_wrong_world_size() {
    let out = finish(
        spawn("rendezvous", &[(0, 3), (1, 3), (1, 3)], free_port(), &[]),
        Duration::from_secs(90),
    );
    for (r, o) in out.iter().enumerate() {
        assert!(
            o.result.contains("two processes claim RANK=1"),
            "process {r}: {}",
            o.result
        );
    }
    let out = finish(
        spawn("rendezvous", &[(0, 2), (1, 3)], free_port(), &[]),
        Duration::from_secs(90),
    );
    for (r, o) in out.iter().enumerate() {
        assert!(
            o.result.contains("rank 1 has WORLD_SIZE 3, rank 0 has 2"),
            "process {r}: {}",
            o.result
        );
    }
    // Typed, and checked before any connection.
    // SAFETY: this process's own environment, changed before anything reads it here.
    unsafe { std::env::set_var("MASTER_ADDR", "10.1.2.3") };
    unsafe { std::env::set_var("RANK", "0") };
    unsafe { std::env::set_var("WORLD_SIZE", "2") };
    unsafe { std::env::set_var("MASTER_PORT", "1") };
    let device = Runtime::simulator().unwrap().device(0).unwrap();
    let e = Communicator::from_env(&device).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Rendezvous(RendezvousError::Invalid {
                name: "MASTER_ADDR",
                ..
            })
        ),
        "{e}"
    );
    // SAFETY: as above.
    unsafe { std::env::remove_var("MASTER_PORT") };
    assert_eq!(
        Communicator::from_env(&device).unwrap_err(),
        Error::Rendezvous(RendezvousError::Missing("MASTER_PORT"))
    );
}

/// Whether this test may start processes of another user (it runs as root).
fn can_drop_privileges() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        == Some("0")
}

const NOBODY: u32 = 65534;

/// Starts an intruder doing `what` at socket `name`, as user `nobody` if `foreign`.
fn spawn_intruder(what: &str, name: &str, secret: &[u8], foreign: bool) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env(CASE, "intruder")
        .env("INTRUDER", what)
        .env("INTRUDER_NAME", name)
        .env("INTRUDER_SECRET", hex(secret))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if foreign {
        cmd.uid(NOBODY).gid(NOBODY);
    }
    cmd.spawn().unwrap()
}

/// The intruders' last lines: how rank 0's process answered each.
fn intruder_lines(children: Vec<Child>) -> Vec<String> {
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            format!("{} {}", text.trim(), String::from_utf8_lossy(&out.stderr))
        })
        .collect()
}

/// Rank 0 of `guarded` started, and its root info.
fn guarded_rank0(extra: &[(&str, &str)]) -> (Child, Vec<u8>) {
    let mut rank0 = spawn("guarded", &[(0, 2)], free_port(), extra).remove(0);
    let mut line = String::new();
    BufReader::new(rank0.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let root = unhex(line.trim().strip_prefix("root ").unwrap());
    (rank0, root)
}

/// Intruders at rank 0's socket: one of another user holding the real secret (as one that
/// read it from the rendezvous would), one of the same user with a wrong secret, one
/// sending a frame of 4 GiB.
fn intrude(root: &[u8]) -> Vec<Child> {
    let (pid, token, secret) = root_fields(root);
    let name = socket_name(pid, token);
    let mut intruders = vec![
        spawn_intruder("join", &name, &[0x5a; 32], false),
        spawn_intruder("oversized", &name, &secret, false),
    ];
    if can_drop_privileges() {
        intruders.push(spawn_intruder("join", &name, &secret, true));
    } else {
        println!("  (not root: the intruder of another user is not started)");
    }
    intruders
}

fn intruders_are_refused_and_the_job_still_computes() {
    let (rank0, root) = guarded_rank0(&[]);
    let lines = intruder_lines(intrude(&root));
    for l in &lines {
        assert!(l.starts_with("intruder closed"), "{l}");
    }
    let mut rank1 = spawn("guarded", &[(1, 2)], free_port(), &[]).remove(0);
    {
        use std::io::Write;
        let stdin = rank1.stdin.as_mut().unwrap();
        writeln!(stdin, "{}", hex(&root)).unwrap();
    }
    let out = finish(vec![rank0, rank1], Duration::from_secs(90));
    for (r, o) in out.iter().enumerate() {
        assert!(o.success, "rank {r}: {}", o.stderr);
    }
    assert_eq!(out[1].result, "ok", "{}", out[1].stderr);
}

fn a_rank_alone_with_intruders_times_out_naming_the_refusals() {
    let (mut rank0, root) = guarded_rank0(&SHORT_TIMEOUTS);
    let lines = intruder_lines(intrude(&root));
    for l in &lines {
        assert!(l.starts_with("intruder closed"), "{l}");
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(rank0.stdout.as_mut().unwrap(), &mut rest).unwrap();
    let out = finish(vec![rank0], Duration::from_secs(90));
    assert!(out[0].success, "{}", out[0].stderr);
    let mut want = vec![
        "HCCL_E_TIMEOUT",
        "rank(s) [1] did not join",
        "connection(s) refused",
        "did not present the root info's secret",
        "exceeds the limit of 256 bytes",
    ];
    if can_drop_privileges() {
        want.push("runs as uid 65534, this job as uid 0");
    }
    for w in want {
        assert!(rest.contains(w), "{w}: {rest}");
    }
}

fn a_taken_socket_name_and_a_socket_of_another_user_are_refused() {
    let device = Runtime::simulator().unwrap().device(0).unwrap();
    let foreign = can_drop_privileges();
    if !foreign {
        println!("  (not root: the squatter runs as this user, its uid is not checked)");
    }
    let token = 0x5eed_0000_0000_0000 | u64::from(std::process::id());
    let ours = socket_name(std::process::id(), token);
    // The squatter also holds a name a crafted root info points to (of a process id
    // other than this one's, so that a rank of this process connects there).
    let elsewhere = std::process::id().wrapping_add(1_000_000);
    let theirs = socket_name(elsewhere, token);
    let mut squatter = spawn_intruder("squat", &format!("{ours},{theirs}"), &[], foreign);
    let mut line = String::new();
    BufReader::new(squatter.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "bound");
    ascend_sim::testing::next_root_info_token(token);
    let e = RootInfo::new(&device).unwrap_err().to_string();
    assert!(
        e.contains("HCCL_E_UNAVAIL")
            && e.contains(&format!(
                "cannot bind socket @{ours}: another process holds that name"
            )),
        "{e}"
    );
    if foreign {
        let mut root = vec![0u8; ascendcl::hccl::ROOT_INFO_BYTES];
        root[..16].copy_from_slice(b"ascend-sim-hccl\0");
        root[16..20].copy_from_slice(&elsewhere.to_le_bytes());
        root[24..32].copy_from_slice(&1u64.to_le_bytes());
        root[32..40].copy_from_slice(&token.to_le_bytes());
        let root = RootInfo::from_bytes(&root).unwrap();
        let e = Communicator::from_root_info(&device, &root, 2, 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("HCCL_E_UNAVAIL")
                && e.contains(&format!(
                    "socket @{theirs} is held by process {} of uid 65534",
                    squatter.id()
                )),
            "{e}"
        );
    }
    drop(squatter.stdin.take());
    let _ = squatter.wait();
}

fn silent_connections_to_the_rendezvous_port_stall_no_rank() {
    // A connect timeout long enough for the ranks, shorter than two silent connections
    // would take if each were waited for in turn.
    let timeouts = [("HCCL_CONNECT_TIMEOUT", "5")];
    let port = free_port();
    let rank0 = spawn("rendezvous", &[(0, 2)], port, &timeouts).remove(0);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let first = loop {
        match std::net::TcpStream::connect(addr) {
            Ok(c) => break c,
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let second = std::net::TcpStream::connect(addr).unwrap();
    let rank1 = spawn("rendezvous", &[(1, 2)], port, &timeouts).remove(0);
    let out = finish(vec![rank0, rank1], Duration::from_secs(90));
    drop((first, second));
    for (r, o) in out.iter().enumerate() {
        assert!(
            o.success && o.result == "ok",
            "rank {r}: {} {}",
            o.result,
            o.stderr
        );
    }
}

fn main() {
    if let Ok(case) = std::env::var(CASE) {
        child(&case);
        return;
    }
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let cases: [(&str, fn()); 15] = [
        (
            "collectives_in_two_and_four_processes",
            collectives_in_two_and_four_processes,
        ),
        (
            "two_processes_of_two_ranks_each_through_the_manual_path",
            two_processes_of_two_ranks_each_through_the_manual_path,
        ),
        (
            "disagreeing_counts_fail_every_rank_with_para",
            disagreeing_counts_fail_every_rank_with_para,
        ),
        (
            "a_rank_that_aborts_after_joining_fails_the_others_at_once",
            a_rank_that_aborts_after_joining_fails_the_others_at_once,
        ),
        (
            "a_rank_that_never_starts_times_out_naming_it",
            a_rank_that_never_starts_times_out_naming_it,
        ),
        (
            "rendezvous_refuses_a_rank_claimed_twice_and_a_wrong_world_size",
            rendezvous_refuses_a_rank_claimed_twice_and_a_wrong_world_size,
        ),
        (
            "the_others_work_on_after_the_hub_rank_destroys_its_communicator",
            the_others_work_on_after_the_hub_rank_destroys_its_communicator,
        ),
        (
            "the_death_of_the_hub_process_fails_the_other_ranks",
            the_death_of_the_hub_process_fails_the_other_ranks,
        ),
        (
            "a_stalled_stream_fails_the_peers_work",
            a_stalled_stream_fails_the_peers_work,
        ),
        (
            "intruders_are_refused_and_the_job_still_computes",
            intruders_are_refused_and_the_job_still_computes,
        ),
        (
            "a_rank_alone_with_intruders_times_out_naming_the_refusals",
            a_rank_alone_with_intruders_times_out_naming_the_refusals,
        ),
        (
            "a_taken_socket_name_and_a_socket_of_another_user_are_refused",
            a_taken_socket_name_and_a_socket_of_another_user_are_refused,
        ),
        (
            "silent_connections_to_the_rendezvous_port_stall_no_rank",
            silent_connections_to_the_rendezvous_port_stall_no_rank,
        ),
        (
            "collectives_larger_than_a_frame_cross_in_pieces",
            collectives_larger_than_a_frame_cross_in_pieces,
        ),
        ("no_socket_is_left", || {
            assert_eq!(sockets_left(), 0, "simulator sockets left")
        }),
    ];
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, f) in cases {
        if !filter.is_empty() && !filter.iter().any(|p| name.contains(p.as_str())) {
            continue;
        }
        ran += 1;
        let started = Instant::now();
        let ok = std::panic::catch_unwind(f).is_ok();
        println!(
            "test {name} ... {} ({:?})",
            if ok { "ok" } else { "FAILED" },
            started.elapsed()
        );
        if !ok {
            failed.push(name);
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        ran - failed.len(),
        failed.len()
    );
    if !failed.is_empty() {
        std::process::exit(1);
    }
}
