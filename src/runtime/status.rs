//! ACL status codes and loading failures as [`Error`]s.
use std::ffi::{c_char, CStr};
use std::path::Path;

use ascend_sys as sys;

use crate::error::{Error, Result};

/// `Ok` for status 0, else [`Error::Runtime`] naming `call`, with the
/// runtime's error text (`message`, asked for only on failure).
/// How the simulator's diagnostics of the host-side race rule begin.
pub(crate) const HOST_RACE: &str = "host-side race:";

pub(super) fn status(
    call: &'static str,
    code: sys::aclError,
    message: impl FnOnce() -> String,
) -> Result<()> {
    if code == 0 {
        return Ok(());
    }
    let message = message();
    if message.starts_with(HOST_RACE) {
        return Err(Error::HostRace {
            call,
            diagnostic: message,
        });
    }
    Err(Error::Runtime {
        call,
        code,
        message,
    })
}

/// A kernel library or runtime that cannot be used, and why.
pub(super) fn load_error(path: &Path, reason: String) -> Error {
    Error::KernelLibrary {
        path: path.to_path_buf(),
        reason,
    }
}

/// Copies a C string returned by the runtime.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid for the call.
pub(super) unsafe fn c_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: by the caller's contract.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}
