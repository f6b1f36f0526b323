//! The messages between a rank in another process and the process that made the root
//! info (the hub), over a Unix socket in Linux's abstract namespace: the kernel removes
//! the name when the last descriptor closes, so nothing is left on disk even when a
//! process is killed, and a dead process's connections read as closed at once.
//!
//! A message is a tag byte and its fields, little-endian. It travels in frames of at most
//! the frame limit (64 MiB, see [`set_frame_limit`]): each a little-endian `u32` whose low
//! 31 bits are its length and whose top bit says that more frames of the message follow,
//! then that many bytes. So a collective's buffers of any size cross (in as many frames as
//! they need), while the reader checks each frame's length against its limit, and the
//! message's against the reader's, before it allocates anything for the frame:
//! [`FIRST_FRAME`] for a connection's first message, which comes before its peer has proved
//! anything (see [`super::auth`]), [`MAX_MESSAGE`] afterwards.

use super::movement::{Desc, Kind};
use ascend_sys::hccl::HcclResult;
use std::io::{self, Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest message accepted once the peer proved who it is (a rank's part is bounded
/// by a device's memory on top of this).
pub(crate) const MAX_MESSAGE: usize = 1 << 40;

/// The largest first message of a connection (a join: a few numbers and the secret).
pub(crate) const FIRST_FRAME: usize = 256;

/// The top bit of a frame's length word: more frames of the same message follow.
const MORE: u32 = 1 << 31;

/// The frame limit by default (64 MiB).
pub(crate) const DEFAULT_FRAME: usize = 64 << 20;

static FRAME: AtomicUsize = AtomicUsize::new(DEFAULT_FRAME);

/// Sets the frame limit of this process (clamped to 1 byte .. 2 GiB - 1), which both ends
/// of a connection must share; lowered by tests, so that small messages take the path a
/// collective of gigabytes takes.
pub fn set_frame_limit(bytes: usize) {
    FRAME.store(bytes.clamp(1, (MORE - 1) as usize), Ordering::Relaxed);
}

fn frame_limit() -> usize {
    FRAME.load(Ordering::Relaxed)
}

/// The abstract socket name of a root info made by process `pid`, whose random `token`
/// makes it impossible to guess.
pub(crate) fn name(pid: u32, token: u64) -> String {
    format!("ascend-sim-hccl.{pid}.{token:016x}")
}

fn address(pid: u32, token: u64) -> io::Result<SocketAddr> {
    SocketAddr::from_abstract_name(name(pid, token).as_bytes())
}

/// Binds the socket; a name already bound (by anyone) is an error naming it.
pub(crate) fn listen(pid: u32, token: u64) -> io::Result<UnixListener> {
    UnixListener::bind_addr(&address(pid, token)?).map_err(|e| {
        let why = if e.kind() == io::ErrorKind::AddrInUse {
            "another process holds that name".to_owned()
        } else {
            e.to_string()
        };
        io::Error::new(
            e.kind(),
            format!("cannot bind socket @{}: {why}", name(pid, token)),
        )
    })
}

pub(crate) fn connect(pid: u32, token: u64) -> io::Result<UnixStream> {
    UnixStream::connect_addr(&address(pid, token)?)
}

/// A message being built.
#[derive(Default)]
pub(crate) struct Out(Vec<u8>);

impl Out {
    pub(crate) fn new(tag: u8) -> Out {
        Out(vec![0, 0, 0, 0, tag])
    }
    pub(crate) fn u32(mut self, v: u32) -> Out {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn u64(mut self, v: u64) -> Out {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn bytes(self, b: &[u8]) -> Out {
        let mut out = self.u64(b.len() as u64);
        out.0.extend_from_slice(b);
        out
    }
    pub(crate) fn text(self, t: &str) -> Out {
        self.bytes(t.as_bytes())
    }
    /// Bytes of a length both ends know (no length before them).
    pub(crate) fn raw(mut self, b: &[u8]) -> Out {
        self.0.extend_from_slice(b);
        self
    }
    pub(crate) fn desc(self, d: &Desc) -> Out {
        let opt = |v: Option<u32>| v.map_or(u64::MAX, u64::from);
        self.u32(d.kind as u32)
            .u64(d.count)
            .u32(d.dtype)
            .u64(opt(d.op))
            .u64(opt(d.root))
    }
    /// Sends the message in frames of at most the frame limit.
    pub(crate) fn send(self, to: &mut UnixStream) -> io::Result<()> {
        self.send_in(to, frame_limit())
    }

    /// Sends the message in frames of at most `frame` bytes (below 2 GiB).
    fn send_in(mut self, to: &mut UnixStream, frame: usize) -> io::Result<()> {
        let frame = frame.clamp(1, (MORE - 1) as usize);
        let len = self.0.len() - 4;
        if len <= frame {
            // One frame, written at once with its length.
            self.0[..4].copy_from_slice(&(len as u32).to_le_bytes());
            return to.write_all(&self.0);
        }
        let mut chunks = self.0[4..].chunks(frame).peekable();
        while let Some(chunk) = chunks.next() {
            let more = if chunks.peek().is_some() { MORE } else { 0 };
            to.write_all(&(chunk.len() as u32 | more).to_le_bytes())?;
            to.write_all(chunk)?;
        }
        Ok(())
    }
}

/// A message received: its tag, then its fields in order.
pub(crate) struct In {
    pub tag: u8,
    data: Vec<u8>,
    at: usize,
}

fn bad(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed message: {what}"),
    )
}

impl In {
    /// Reads one message of at most `limit` bytes (an error at end of stream: the peer
    /// closed its end).
    pub(crate) fn recv(from: &mut UnixStream, limit: usize) -> io::Result<In> {
        In::recv_in(from, limit, frame_limit())
    }

    /// Reads one message of at most `limit` bytes in frames of at most `frame` bytes; each
    /// length is checked before the frame's bytes are allocated.
    fn recv_in(from: &mut UnixStream, limit: usize, frame: usize) -> io::Result<In> {
        let frame = frame.min(limit);
        let mut data: Vec<u8> = Vec::new();
        loop {
            let mut word = [0u8; 4];
            from.read_exact(&mut word)?;
            let word = u32::from_le_bytes(word);
            let len = (word & !MORE) as usize;
            if len == 0 {
                return Err(bad("frame length 0"));
            }
            let too_big = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
            if len > frame {
                return Err(too_big(format!(
                    "a frame of {len} bytes exceeds the limit of {frame} bytes"
                )));
            }
            if data.len() + len > limit {
                return Err(too_big(format!(
                    "a message of more than {} bytes exceeds the limit of {limit} bytes",
                    data.len() + len - 1
                )));
            }
            let at = data.len();
            data.try_reserve(len).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!("cannot hold a message of {} bytes: {e}", at + len),
                )
            })?;
            data.resize(at + len, 0);
            from.read_exact(&mut data[at..])?;
            if word & MORE == 0 {
                break;
            }
        }
        Ok(In {
            tag: data[0],
            data,
            at: 1,
        })
    }
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        let end = self.at.checked_add(n).ok_or_else(|| bad("length"))?;
        let s = self
            .data
            .get(self.at..end)
            .ok_or_else(|| bad("truncated"))?;
        self.at = end;
        Ok(s)
    }
    pub(crate) fn u32(&mut self) -> io::Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap_or_default()))
    }
    pub(crate) fn u64(&mut self) -> io::Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or_default()))
    }
    pub(crate) fn bytes(&mut self) -> io::Result<Vec<u8>> {
        let n = usize::try_from(self.u64()?).map_err(|_| bad("length"))?;
        Ok(self.take(n)?.to_vec())
    }
    /// `N` bytes of a length both ends know.
    pub(crate) fn raw<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let b = self.take(N)?;
        b.try_into().map_err(|_| bad("truncated"))
    }
    pub(crate) fn text(&mut self) -> io::Result<String> {
        Ok(String::from_utf8_lossy(&self.bytes()?).into_owned())
    }
    pub(crate) fn desc(&mut self) -> io::Result<Desc> {
        let kind = match self.u32()? {
            0 => Kind::AllReduce,
            1 => Kind::Broadcast,
            2 => Kind::AllGather,
            3 => Kind::ReduceScatter,
            4 => Kind::Barrier,
            _ => return Err(bad("collective kind")),
        };
        let opt = |v: u64| u32::try_from(v).ok();
        Ok(Desc {
            kind,
            count: self.u64()?,
            dtype: self.u32()?,
            op: opt(self.u64()?),
            root: opt(self.u64()?),
        })
    }
    /// A failure reply's status and text.
    pub(crate) fn failure(&mut self) -> io::Result<(HcclResult, String)> {
        Ok((self.u32()?, self.text()?))
    }
}

/// Message tags.
pub(crate) mod tag {
    /// remote → hub, first on a rank's first connection: the root info's secret, nranks,
    /// rank, device, pid.
    pub const JOIN: u8 = 1;
    /// remote → hub, first on a rank's other connections: the secret, rank, pid.
    pub const ATTACH: u8 = 2;
    /// hub → remote: group id, then each rank's device.
    pub const FORMED: u8 = 3;
    /// hub → remote: a failure (status, text).
    pub const FAILED: u8 = 4;
    /// remote → hub: rank, timeout ms, desc. Reply: `CALLED` (seq) or `FAILED`.
    pub const CALL: u8 = 5;
    pub const CALLED: u8 = 6;
    /// remote → hub: rank, seq, timeout ms, desc, send bytes, recv bytes. Reply: `DONE`
    /// (the rank's receive buffer) or `FAILED`.
    pub const EXECUTE: u8 = 7;
    pub const DONE: u8 = 8;
    /// remote → hub: src, dst, seq, send (1) or receive (0), count, dtype, timeout ms,
    /// bytes (the data sent, or the receive buffer's length of zeros). Reply: `DONE`.
    pub const TRANSFER: u8 = 9;
    /// remote → hub: the rank destroyed its communicator; its connections close next.
    pub const BYE: u8 = 10;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_cross_a_socket_intact_and_bad_frames_are_refused() {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let desc = Desc {
            kind: Kind::ReduceScatter,
            count: 1 << 40,
            dtype: 11,
            op: Some(2),
            root: None,
        };
        Out::new(tag::EXECUTE)
            .u32(7)
            .desc(&desc)
            .bytes(&[1, 2, 3])
            .text("ok")
            .send(&mut a)
            .unwrap();
        let mut m = In::recv(&mut b, MAX_MESSAGE).unwrap();
        assert_eq!(m.tag, tag::EXECUTE);
        assert_eq!(m.u32().unwrap(), 7);
        assert_eq!(m.desc().unwrap(), desc);
        assert_eq!(m.bytes().unwrap(), vec![1, 2, 3]);
        assert_eq!(m.text().unwrap(), "ok");
        assert_eq!(m.u32().unwrap_err().kind(), io::ErrorKind::InvalidData);
        // A zero-length frame, and a closed peer.
        a.write_all(&0u32.to_le_bytes()).unwrap();
        assert_eq!(
            In::recv(&mut b, MAX_MESSAGE).err().unwrap().kind(),
            io::ErrorKind::InvalidData
        );
        // A length above the reader's limit is refused before anything is allocated for
        // it, naming the limit.
        a.write_all(&u32::MAX.to_le_bytes()).unwrap();
        let e = In::recv(&mut b, FIRST_FRAME).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            e.to_string(),
            "a frame of 2147483647 bytes exceeds the limit of 256 bytes"
        );
        drop(a);
        assert_eq!(
            In::recv(&mut b, MAX_MESSAGE).err().unwrap().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn messages_longer_than_a_frame_cross_in_pieces_and_every_limit_is_named() {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let payload: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        // A thread writes while this one reads: the socket buffer may not hold it all.
        let sender = std::thread::spawn(move || {
            Out::new(tag::DONE)
                .bytes(&payload)
                .u32(9)
                .send_in(&mut a, 7)
                .unwrap();
            a
        });
        let mut m = In::recv_in(&mut b, MAX_MESSAGE, 7).unwrap();
        let mut a = sender.join().unwrap();
        assert_eq!(m.tag, tag::DONE);
        let back = m.bytes().unwrap();
        assert_eq!(back.len(), 1000);
        assert!(back.iter().enumerate().all(|(i, &v)| v == (i % 251) as u8));
        assert_eq!(m.u32().unwrap(), 9);
        // 1 + 8 + 1000 + 4 bytes in frames of 7: 145 frames, each with its length word.
        Out::new(tag::DONE)
            .bytes(&[0; 1000])
            .u32(9)
            .send_in(&mut a, 1 << 20)
            .unwrap();
        // A reader with a smaller frame limit than the writer refuses the frame, naming
        // its limit; so does a reader whose message limit the pieces exceed.
        let e = In::recv_in(&mut b, MAX_MESSAGE, 64).err().unwrap();
        assert_eq!(
            e.to_string(),
            "a frame of 1013 bytes exceeds the limit of 64 bytes"
        );
        let (mut a, mut b) = UnixStream::pair().unwrap();
        Out::new(tag::DONE)
            .bytes(&[0; 100])
            .send_in(&mut a, 16)
            .unwrap();
        let e = In::recv_in(&mut b, 40, 16).err().unwrap();
        assert_eq!(
            e.to_string(),
            "a message of more than 47 bytes exceeds the limit of 40 bytes"
        );
        // A length above 2 GiB is a field like any other: only the frames are bounded.
        let mut m = {
            let (mut a, mut b) = UnixStream::pair().unwrap();
            Out::new(tag::EXECUTE)
                .u64(3 << 30)
                .send_in(&mut a, 3)
                .unwrap();
            In::recv_in(&mut b, MAX_MESSAGE, 3).unwrap()
        };
        assert_eq!(m.u64().unwrap(), 3 << 30);
    }
}
