//! The library side of `cargo xtask`: tasks that tests call directly.
pub mod bindings_inputs;
pub mod cann;
