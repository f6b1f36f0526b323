//! The checked layer: every C status becomes a [`Result`], with the symbolic code name and
//! the text of `aclGetRecentErrMsg`. Nothing here allocates unless an error is built.

use crate::error::{Error, Result};
use ascend_sys::FnTable;
use std::ffi::CStr;

/// `Ok(())` when `code` is `ACL_SUCCESS`, else [`Error::Acl`] for `api`.
#[inline]
pub(crate) fn acl(table: &FnTable, api: &'static str, code: i32) -> Result<()> {
    if code == ascend_sys::ACL_SUCCESS {
        Ok(())
    } else {
        Err(acl_error(table, api, code))
    }
}

/// `Ok(())` when `status` is `ACLNN_SUCCESS`, else [`Error::Aclnn`] for `api`.
#[inline]
pub(crate) fn aclnn(table: &FnTable, api: &'static str, status: i32) -> Result<()> {
    if status == ascend_sys::ACLNN_SUCCESS {
        Ok(())
    } else {
        Err(aclnn_error(table, api, status))
    }
}

/// Builds [`Error::Acl`] for a failed runtime call.
#[cold]
#[inline(never)]
pub(crate) fn acl_error(table: &FnTable, api: &'static str, code: i32) -> Error {
    Error::Acl {
        api,
        code,
        name: ascend_sys::status_name(code),
        message: recent_message(table),
    }
}

/// Builds [`Error::Aclnn`] for a failed aclnn call.
#[cold]
#[inline(never)]
pub(crate) fn aclnn_error(table: &FnTable, api: &'static str, status: i32) -> Error {
    Error::Aclnn {
        api,
        status,
        name: ascend_sys::status_name(status),
        message: recent_message(table),
    }
}

/// `aclGetRecentErrMsg()` of this thread, or an empty string.
#[cold]
pub(crate) fn recent_message(table: &FnTable) -> String {
    // SAFETY: aclGetRecentErrMsg has no preconditions; it returns null or a NUL-terminated
    // string owned by the library that stays valid until the next call on this thread,
    // and it is copied before anything else is called.
    unsafe {
        let p = (table.aclGetRecentErrMsg)();
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

/// Copies a C string returned by the library (null → empty).
///
/// # Safety
/// `p` is null or points to a NUL-terminated string valid for the duration of the call.
pub(crate) unsafe fn c_string(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}
