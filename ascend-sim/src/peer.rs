//! Peer access between devices: `aclrtDeviceCanAccessPeer`, `aclrtDeviceEnablePeerAccess`,
//! `aclrtDeviceDisablePeerAccess`. A device-to-device copy between two devices needs the
//! current device to have enabled access to the other one; [`check_copy`] is that rule.

use crate::runtime::check_device;
use crate::state::{State, active_state, fail, finding, out_param, status_of};
use ascend_sys::*;

pub(crate) unsafe fn can_access_peer(
    can_access_peer: *mut i32,
    device_id: i32,
    peer_device_id: i32,
) -> aclError {
    status_of(|| {
        let st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(can_access_peer, "canAccessPeer") }?;
        let d = check_device(&st, device_id)?;
        let p = check_device(&st, peer_device_id)?;
        // Every pair of simulated devices shares one interconnect; a device is not its
        // own peer.
        out.write(i32::from(d != p));
        Ok(())
    })
}

pub(crate) unsafe fn enable_peer_access(peer_device_id: i32, flags: u32) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        let (_, current) = st.current_ctx()?;
        let peer = check_device(&st, peer_device_id)?;
        if flags != 0 {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!("flags {flags} must be 0 (reserved)"),
            ));
        }
        if peer == current {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!("peerDeviceId {peer} is the current device"),
            ));
        }
        let peers = &mut st.devices[current].peers;
        if !peers.contains(&peer) {
            peers.push(peer);
        }
        Ok(())
    })
}

pub(crate) unsafe fn disable_peer_access(peer_device_id: i32) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        let (_, current) = st.current_ctx()?;
        let peer = check_device(&st, peer_device_id)?;
        st.devices[current].peers.retain(|&p| p != peer);
        Ok(())
    })
}

/// Whether the current device (`current`) may run a copy between the memory of devices
/// `dst` and `src`: each of them that is not `current` must be its enabled peer.
pub(crate) fn check_copy(st: &State, current: usize, dst: usize, src: usize) -> Result<(), i32> {
    for (what, other) in [("src", src), ("dst", dst)] {
        if other != current && !st.devices[current].peers.contains(&other) {
            return Err(finding(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "{what} is memory of device {other}, but the copy runs on device {current}, \
                     which has not enabled peer access to it \
                     (aclrtDeviceEnablePeerAccess({other}, 0) on device {current} first)"
                ),
            ));
        }
    }
    Ok(())
}
