//! The library's error type.

/// Everything that can go wrong in an ascend-scan call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An argument is invalid; `name` is the argument.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument {
        /// The argument's name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The operation does not support this dtype or option.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The simulator stopped a kernel that broke a rule of the hardware
    /// (diagnostic names kernel, core, call and rule).
    #[error("simulator stopped kernel {kernel}: {diagnostic}")]
    SimulatorRule {
        /// Kernel name.
        kernel: String,
        /// The simulator's diagnostic.
        diagnostic: String,
    },
    /// The simulator found two accesses to one device allocation that
    /// nothing orders: work on two streams without an event between them, or
    /// the host touching (reading, writing, freeing) memory that queued work
    /// on a stream not yet synchronised uses. On an NPU the same program
    /// would read or write stale data.
    #[error("{call}: {diagnostic}")]
    HostRace {
        /// The ACL call that found it.
        call: &'static str,
        /// The simulator's diagnostic (both accesses, and what orders them).
        diagnostic: String,
    },
    /// An ACL runtime call failed.
    #[error("{call} failed with ACL error {code}: {message}")]
    Runtime {
        /// The ACL call.
        call: &'static str,
        /// The ACL error code.
        code: i32,
        /// `aclGetRecentErrMsg()` at the time of the failure.
        message: String,
    },
    /// The NPU's SoC is not the one the kernel library was built for.
    #[error(
        "the kernel library was built for {built} but the device is {device}: \
         rebuild with cargo xtask build-kernels --soc {device}"
    )]
    SocMismatch {
        /// SOC_VERSION of the build (the manifest).
        built: String,
        /// `aclrtGetSocName()` of the device.
        device: String,
    },
    /// The kernel library was built from other kernel sources than this crate.
    #[error(
        "the kernel library is stale: {source_file} {reason}; \
         rebuild with cargo xtask build-kernels"
    )]
    StaleKernels {
        /// The kernels/ file that differs.
        source_file: String,
        /// How it differs.
        reason: String,
    },
    /// A CANN or kernel library, or its manifest, could not be loaded.
    #[error("kernel library {path}: {reason}")]
    KernelLibrary {
        /// The manifest (or library) concerned.
        path: std::path::PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl From<algos::AlgoError> for Error {
    fn from(e: algos::AlgoError) -> Self {
        match e {
            algos::AlgoError::InvalidArgument { name, reason } => {
                Error::InvalidArgument { name, reason }
            }
            e @ algos::AlgoError::UnsupportedDtype { .. } => Error::Unsupported(e.to_string()),
        }
    }
}

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
