//! The hazard suite (kernels/hazard_*.cpp): every rule-breaking kernel is
//! stopped with its rule and a message naming the missing edge, and its
//! legal twin runs and computes the right values.
sim_tests::sim_test!(
    hz_tbuf_mte2_to_v_missing,
    hz_tbuf_mte2_to_v_legal,
    hz_tbuf_v_to_mte3_missing,
    hz_tbuf_v_to_mte3_legal,
    #[ignore = "simulator: a refill of a buffer that V read after an MTE2 write names PipeBarrier<PIPE_MTE2> \
                (the earlier write) instead of the missing V->MTE2 edge that orders both"]
    hz_loop_v_to_mte2_missing,
    hz_loop_v_to_mte2_missing_after_mte2_barrier,
    hz_loop_v_to_mte2_legal,
    #[ignore = "simulator: a refill of a buffer that MTE3 read after an MTE2 write names PipeBarrier<PIPE_MTE2> \
                (the earlier write) instead of the missing MTE3->MTE2 edge that orders both"]
    hz_loop_mte3_to_mte2_missing,
    hz_loop_mte3_to_mte2_missing_after_mte2_barrier,
    hz_loop_mte3_to_mte2_legal,
    hz_tque_without_enque_deque,
    hz_tque_enque_deque_legal,
    hz_scalar_get_after_v_missing,
    hz_scalar_get_after_v_legal,
    hz_scalar_set_before_v_missing,
    hz_scalar_set_before_v_legal,
    hz_scalar_get_after_deque_missing,
    hz_scalar_get_after_deque_legal,
    hz_v_read_after_write_missing,
    hz_v_read_after_write_legal,
    hz_mte2_write_after_write_missing,
    hz_mte2_write_after_write_legal,
    hz_gm_mte3_to_mte2_missing,
    hz_gm_mte3_to_mte2_legal,
    #[ignore = "simulator: an in-core race on GM names the earlier access's pipe but not its call \
                ('which this core's MTE3 (instruction 1)' rather than 'MTE3 DataCopy')"]
    hz_gm_mte3_to_mte2_names_both_calls,
    hz_gm_scalar_read_after_mte3_missing,
    hz_gm_scalar_read_after_mte3_legal,
    hz_flag_set_before_the_write,
    hz_pipe_all_orders_every_vector_pair,
    #[ignore = "simulator: GM accesses stamp only writers, so a write after an unordered read (WAR) is not \
                a race: MTE3 overwriting GM that MTE2 of the same core still reads runs"]
    hz_gm_write_after_read_in_core_missing,
    hz_gm_write_after_read_in_core_legal,
    #[ignore = "simulator: GM write after an unordered read by another core is not checked (only writers \
                are stamped)"]
    hz_gm_write_after_read_across_cores,
    #[ignore = "simulator: a missing CrossCore flag goes unnoticed when the consumer core runs first: \
                its read precedes the write in the simulation and reads are not stamped"]
    hz_gm_missing_flag_consumer_runs_first,
    hz_diagnostic_names_everything,
    hz_cube_mte2_to_mte1_missing,
    hz_cube_mte1_to_m_missing,
    hz_cube_m_to_fix_missing,
    hz_cube_fences_legal,
    #[ignore = "simulator: an L0A reload after the Mmad read names PipeBarrier<PIPE_MTE1> (the earlier \
                LoadData) instead of the missing M->MTE1 edge that orders both"]
    hz_cube_l0a_reload_m_to_mte1_missing,
    hz_cube_l0a_reload_m_to_mte1_missing_after_mte1_barrier,
    hz_cube_l0a_reload_legal,
    #[ignore = "simulator: an L0C rewrite after the Fixpipe read names PipeBarrier<PIPE_M> (the earlier Mmad) \
                instead of the missing FIX->M edge that orders both"]
    hz_cube_l0c_rewrite_fix_to_m_missing,
    hz_cube_l0c_rewrite_fix_to_m_missing_after_m_barrier,
    hz_cube_l0c_rewrite_legal,
    hz_cube_queues_legal,
    hz_cube_pipe_all_legal,
    hz_mmad_accumulate_small_missing,
    hz_mmad_accumulate_small_legal,
    hz_mmad_accumulate_large_legal,
    hz_cross_core_set_on_wrong_pipe,
    #[ignore = "simulator: a GM data race across cores names the writer's core and pipe, not the missing edge \
                (a CrossCoreSetFlag on PIPE_MTE3 after the write, waited before the read)"]
    hz_cross_core_set_on_wrong_pipe_names_edge,
    hz_cross_core_wait_orders_every_pipe,
    hz_set_flag_never_waited,
    #[ignore = "simulator: the end-of-kernel check 'SetFlag never waited' reports 'call ?' (it runs outside \
                any API scope) instead of naming the SetFlag"]
    hz_set_flag_never_waited_names_call,
    hz_set_flag_waited_legal,
    hz_user_id_not_from_pipe,
    hz_fetch_event_id_legal,
    hz_alloc_release_event_id_legal,
    hz_id_collides_with_tque_event,
    hz_id_fetched_after_free_legal,
    hz_aic_reserved_m_mte1_id,
    hz_aic_alloc_m_mte1_id_legal,
    hz_release_never_reserved,
    hz_literal_ids_without_tpipe_legal,
    hz_event_ids_exhausted,
    hz_event_ids_eight_legal,
    hz_unpaired_flags,
    hz_event_v_s_on_aic,
    hz_event_m_fix_on_aiv,
    hz_event_for_core_legal,
    hz_cross_flag_16_invalid,
    hz_cross_flag_11_to_14_reserved,
    hz_cross_flag_never_waited,
    hz_cross_flag_ids_legal,
    hz_mask_half_200,
    hz_mask_half_128_legal,
    hz_mask_float_65,
    hz_mask_float_64_legal,
    hz_mask_bits_high_word_float,
    hz_mask_bits_legal,
    hz_overlap_across_repeats,
    hz_overlap_inside_repeat,
    hz_overlap_in_place_legal,
    hz_overlap_accumulate_src1_legal,
    hz_overlap_accumulate_outside_exception,
    hz_poison_unwritten_ub_is_nan,
    hz_pad_without_is_pad_is_poison,
    hz_pad_with_is_pad_is_value,
    hz_pad_none_repeats_first_element,
);
