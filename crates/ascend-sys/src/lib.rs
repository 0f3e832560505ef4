//! Placeholder; bindgen output lands here (cargo xtask bindings).
