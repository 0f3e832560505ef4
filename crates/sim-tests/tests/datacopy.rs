//! DataCopy / DataCopyPad / Nd2Nz semantics and strictness (kernels/datacopy_*.cpp).
sim_tests::sim_test!(
    dc_count_roundtrip,
    dc_params_gaps,
    dc_ub_to_ub_gaps,
    dc_pad_gm_to_ub,
    dc_pad_ub_to_gm,
    dc_atomic_add,
    dc_nd2nz_half,
    dc_nd2nz_int8,
    dc_strict_misaligned_ub,
    dc_strict_length_not_32b,
    dc_strict_length_not_32b_out,
    dc_strict_block_count,
    dc_strict_pad_to_l1,
    dc_strict_beyond_tensor,
    dc_trace_events,
);
