//! ascend-scan
