//! derive(Tiling)
