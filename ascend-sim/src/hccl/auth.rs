//! Who may use a root info's socket. An abstract Unix socket has no file permissions:
//! every process of the machine (of the same network namespace) can connect to it, or
//! bind its name first. So both ends check the other's user with `SO_PEERCRED` (the
//! kernel's word, not the peer's), and a connecting rank proves that it holds the root
//! info by presenting its secret, a random value that travels only inside the root info's
//! bytes. The socket's name carries a random token of its own (names are visible in
//! `/proc/net/unix`, the secret is never part of one), so that nobody can take a name
//! before the process that made the root info binds it.

use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

/// Bytes of a root info's secret.
pub(crate) const SECRET_BYTES: usize = 32;

/// A root info's secret.
pub(crate) type Secret = [u8; SECRET_BYTES];

/// `N` bytes from the kernel's random number generator.
pub(crate) fn random<const N: usize>() -> io::Result<[u8; N]> {
    let mut out = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut out)?;
    Ok(out)
}

/// Whether `a` and `b` are equal, in a time that does not depend on where they differ.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// The user this process acts as (its effective uid).
pub(crate) fn own_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The peer of a connected socket as the kernel recorded it (at `connect` or `listen`):
/// its process id and effective user id.
pub(crate) fn peer(conn: &UnixStream) -> io::Result<(u32, u32)> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: the descriptor is a live socket owned by `conn`; `cred` and `len` are valid
    // for writes of a `ucred` and a `socklen_t`, and `len` holds `cred`'s size.
    let rc = unsafe {
        libc::getsockopt(
            conn.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((u32::try_from(cred.pid).unwrap_or(0), cred.uid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole_and_peers_are_named_by_the_kernel() {
        let a: Secret = random().unwrap();
        let b: Secret = random().unwrap();
        assert_ne!(a, b, "two draws of 256 random bits");
        assert!(same(&a, &a));
        assert!(!same(&a, &b));
        let mut c = a;
        c[SECRET_BYTES - 1] ^= 1;
        assert!(!same(&a, &c));
        assert!(!same(&a, &a[..SECRET_BYTES - 1]));
        let (x, _y) = UnixStream::pair().unwrap();
        assert_eq!(peer(&x).unwrap(), (std::process::id(), own_uid()));
    }
}
