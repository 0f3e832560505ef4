//! The kernel description trait and the types shared by all algorithms.

/// Kernel types of Atlas A2 (`KERNEL_TASK_TYPE_DEFAULT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelType {
    /// Vector cores only, no cross-core sync hardware.
    AivOnly,
    /// Cube cores only, no cross-core sync hardware.
    AicOnly,
    /// Vector cores with the sync hardware (hardware SyncAll).
    MixAiv1_0,
    /// Cube cores with the sync hardware.
    MixAic1_0,
    /// One cube and one vector core per AI core.
    MixAic1_1,
    /// One cube and two vector cores per AI core.
    MixAic1_2,
}

impl KernelType {
    /// The C++ enumerator.
    pub fn cpp(self) -> &'static str {
        match self {
            KernelType::AivOnly => "KERNEL_TYPE_AIV_ONLY",
            KernelType::AicOnly => "KERNEL_TYPE_AIC_ONLY",
            KernelType::MixAiv1_0 => "KERNEL_TYPE_MIX_AIV_1_0",
            KernelType::MixAic1_0 => "KERNEL_TYPE_MIX_AIC_1_0",
            KernelType::MixAic1_1 => "KERNEL_TYPE_MIX_AIC_1_1",
            KernelType::MixAic1_2 => "KERNEL_TYPE_MIX_AIC_1_2",
        }
    }
}

/// Element types the kernels handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    F32,
    /// Signed 8-bit integer.
    I8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
}

impl DType {
    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::F16 | DType::Bf16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
        }
    }
    /// The AscendC C++ type.
    pub fn cpp(self) -> &'static str {
        match self {
            DType::F16 => "half",
            DType::Bf16 => "bfloat16_t",
            DType::F32 => "float",
            DType::I8 => "int8_t",
            DType::U8 => "uint8_t",
            DType::I16 => "int16_t",
            DType::U16 => "uint16_t",
            DType::I32 => "int32_t",
            DType::U32 => "uint32_t",
        }
    }
    /// Short tag used in kernel names.
    pub fn tag(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::F32 => "f32",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.tag())
    }
}

/// Why an algorithm cannot take the requested parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AlgoError {
    /// A parameter is outside what the algorithm supports.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument {
        /// The parameter.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The element type is not supported by this algorithm.
    #[error("unsupported dtype {dtype} for {algorithm}: {reason}")]
    UnsupportedDtype {
        /// The algorithm.
        algorithm: &'static str,
        /// The element type.
        dtype: DType,
        /// Which types are supported.
        reason: String,
    },
}

/// How to launch a kernel for one problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan<T> {
    /// Kernel name (the `aclrtlaunch_<name>` to call).
    pub kernel: String,
    /// numBlocks of the launch.
    pub block_dim: u32,
    /// Bytes of GM workspace the kernel needs.
    pub workspace_bytes: u64,
    /// The tiling struct to pass.
    pub tiling: T,
}

/// A tiling struct type of a kernel: its name (the same in Rust and C++)
/// and its C++ definition.
#[derive(Debug, Clone, Copy)]
pub struct TilingType {
    /// The type's name, in Rust (a type of this crate) and in C++.
    pub name: &'static str,
    /// The C++ definition with its layout assertions.
    pub definition: fn() -> String,
}

impl TilingType {
    /// The tiling type `T`.
    pub fn of<T: crate::Tiling>() -> TilingType {
        TilingType {
            name: T::CPP_NAME,
            definition: T::cpp_definition,
        }
    }
}

/// A kernel's description: what it is called, how it is launched, its
/// parameters, and its rendered AscendC source.
pub trait Kernel {
    /// Kernel name; also the `aclrtlaunch_<name>` symbol suffix.
    fn name(&self) -> String;
    /// Kernel type (`KERNEL_TASK_TYPE_DEFAULT`).
    fn kernel_type(&self) -> KernelType;
    /// Names of the GM pointer parameters, in order.
    fn gm_params(&self) -> &'static [&'static str];
    /// The tiling struct (always the last parameter).
    fn tiling_type(&self) -> TilingType;
    /// The launch family: the kernels sharing one tiling type and one list
    /// of GM parameters, hence one C signature and one typed launch
    /// function on the host (`<family>Args` in src/runtime/kernels.rs).
    /// By default the tiling type's name without `Tiling`; a kernel
    /// description whose instances differ in their GM parameters names a
    /// family per parameter list.
    fn family(&self) -> String {
        let t = self.tiling_type().name;
        t.strip_suffix("Tiling").unwrap_or(t).to_string()
    }
    /// The AscendC C++ source of the kernel.
    fn render(&self) -> Result<String, askama::Error>;
}

/// The first line of every generated file.
pub fn generated_header(template: &str) -> String {
    format!("generated by `cargo xtask render` from templates/{template}: do not edit")
}

/// `impl Kernel` of a multi-core scan of s*s tiles described by a
/// [`ScanU`](crate::ScanU) in its field `tile` (MCSCAN and RTSCAN differ
/// only in their names): kernel `<prefix>_<dtype>_s<s>` of type
/// MIX_AIC_1_2 with GM parameters (x, y, total, workspace), whose source
/// calls `<body><input, accumulator, s, 4096>` of
/// templates/device/`<prefix>_kernel.h`; `title` names the kernel and its
/// section of docs/algorithms.md.
macro_rules! multicore_scan_kernel {
    ($kernel:ty, $tiling:ty, prefix: $prefix:literal, title: $title:literal, body: $body:literal) => {
        impl $crate::kernel::Kernel for $kernel {
            fn name(&self) -> String {
                format!(
                    concat!($prefix, "_{}_s{}"),
                    self.tile.dtype().tag(),
                    self.tile.s()
                )
            }
            fn kernel_type(&self) -> $crate::kernel::KernelType {
                $crate::kernel::KernelType::MixAic1_2
            }
            fn gm_params(&self) -> &'static [&'static str] {
                &["x", "y", "total", "constants", "workspace"]
            }
            fn tiling_type(&self) -> $crate::kernel::TilingType {
                $crate::kernel::TilingType::of::<$tiling>()
            }
            fn render(&self) -> Result<String, askama::Error> {
                let (dtype, s) = (self.tile.dtype(), self.tile.s());
                let acc = $crate::scanu::scan_accumulator(dtype);
                // 4096 accumulators (16 KiB) per vector chunk: a multiple of every s.
                let chunk = 4096;
                $crate::render::render_entry(
                    self,
                    concat!($prefix, "_kernel.h"),
                    &format!(
                        concat!(
                            $title,
                            " (docs/algorithms.md, ",
                            $title,
                            "): {} -> {}, tile edge s = {}, vector chunks of {}."
                        ),
                        dtype, acc, s, chunk
                    ),
                    &format!(
                        concat!($body, "<{}, {}, {}, {}>"),
                        dtype.cpp(),
                        acc.cpp(),
                        s,
                        chunk
                    ),
                )
            }
        }
    };
}
pub(crate) use multicore_scan_kernel;
