//! The simulator's ACL host subset.
sim_tests::sim_test!(
    acl_soc_name_and_core_counts,
    acl_malloc_beyond_hbm_fails,
    acl_malloc_alignment_and_rounding,
    acl_failed_launch_reports_at_synchronize,
    acl_invalid_block_dim,
    acl_set_unknown_device,
);
