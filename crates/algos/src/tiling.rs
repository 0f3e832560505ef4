//! The tiling-struct contract between host and kernels.

/// A `#[repr(C)]` struct passed by value to a kernel. `#[derive(Tiling)]`
/// implements it and emits the C++ definition with layout assertions.
pub trait Tiling: Copy {
    /// The C++ type name.
    const CPP_NAME: &'static str;
    /// The C++ definition with `static_assert`s on size and field offsets.
    fn cpp_definition() -> String;
}
