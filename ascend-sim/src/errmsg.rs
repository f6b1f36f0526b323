//! The text behind `aclGetRecentErrMsg`, per thread, as CANN keeps it: every failing call
//! leaves exactly one text naming its API and status, texts that nobody fetched pile up
//! (newest first), and `aclGetRecentErrMsg` hands them out and clears them. A successful
//! call adds nothing, so no text outlives the fetch that follows its failure.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ffi::{CString, c_char};

/// Unfetched texts kept per thread (older ones are dropped, as CANN loses them).
const MAX_PENDING: usize = 32;

thread_local! {
    /// Unfetched texts, oldest first, each with the number of the call that left it.
    static PENDING: RefCell<VecDeque<(u64, String)>> = const { RefCell::new(VecDeque::new()) };
    /// The texts handed out by the latest `aclGetRecentErrMsg` (keeps its pointer valid).
    static HANDED: RefCell<Option<CString>> = const { RefCell::new(None) };
    /// Number of the API call running on this thread (0: none).
    static CALL: Cell<u64> = const { Cell::new(0) };
    static CALLS: Cell<u64> = const { Cell::new(0) };
}

/// Starts an API call on this thread; returns what [`end_call`] restores.
pub(crate) fn begin_call() -> u64 {
    let n = CALLS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    });
    CALL.with(|c| c.replace(n))
}

pub(crate) fn end_call(previous: u64) {
    CALL.with(|c| c.set(previous));
}

/// Whether the running call has left a text.
pub(crate) fn call_has_text() -> bool {
    let call = CALL.with(Cell::get);
    call != 0 && PENDING.with(|p| p.borrow().back().is_some_and(|(n, _)| *n == call))
}

/// Leaves `text` for the running call. A second text of the same call (an outer check
/// wrapping an inner one) replaces the first and quotes it.
pub(crate) fn record(text: String) {
    let call = CALL.with(Cell::get);
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        match p.back_mut() {
            Some((n, old)) if call != 0 && *n == call => {
                *old = format!("{text} (from: {old})");
            }
            _ => {
                if p.len() == MAX_PENDING {
                    p.pop_front();
                }
                p.push_back((call, text));
            }
        }
    });
}

/// `aclGetRecentErrMsg`: the unfetched texts, newest first, one per line, then cleared;
/// NULL when there are none. The pointer stays valid until the thread's next fetch.
pub(crate) fn fetch() -> *const c_char {
    let texts: Vec<String> =
        PENDING.with(|p| p.borrow_mut().drain(..).rev().map(|t| t.1).collect());
    HANDED.with(|h| {
        let mut h = h.borrow_mut();
        if texts.is_empty() {
            *h = None;
            return std::ptr::null();
        }
        let joined = CString::new(texts.join("\n").replace('\0', "\\0")).unwrap_or_default();
        h.insert(joined).as_ptr()
    })
}
