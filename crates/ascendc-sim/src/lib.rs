//! AscendC CPU simulator: SoC profiles and launch reports.
