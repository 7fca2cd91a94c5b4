#!/usr/bin/env bash
# Mutation testing of tough-ner's core modules with mutmut (not part of CI: it takes long).
#
#   python3 -m pip install -e ".[mutation]"
#   tools/mutation.sh                 # every core module, one after the other
#   tools/mutation.sh hardeval tmr    # only these
#   TIME_BOX=900 tools/mutation.sh    # seconds per module (default 1200)
#   RECHECK=1 tools/mutation.sh nrb   # after adding tests: re-run only the mutants not yet killed
#                                     # (and those not reached), keeping the earlier results
#
# Each module is mutated in a scratch copy of the repository (MUTATION_DIR, default
# /tmp/tough-ner-mutation/MODULE) and its mutants run only against the fast test files that
# exercise it, with `pytest -x`, one worker (MUTATION_JOBS), under `nice`.  The score per
# module is printed at the end and kept in MUTATION_DIR/MODULE/score.txt; survivors are listed
# by `cd MUTATION_DIR/MODULE && mutmut results` and shown by `mutmut show NAME`.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BASE="${MUTATION_DIR:-/tmp/tough-ner-mutation}"
TIME_BOX="${TIME_BOX:-1200}"
JOBS="${MUTATION_JOBS:-1}"

tests_for() {  # the fast test files that exercise a module
  case "$1" in
    schemes) echo "tests/test_schemes.py tests/test_corpus.py" ;;
    corpus)  # the reader's fast tests: not the real-data, evaluate-loading and subprocess tests of
             # test_reader.py / test_bad_inputs.py (seconds each, for every mutant they cover)
             echo "tests/test_corpus.py
                   tests/test_reader.py::test_reader_equals_the_line_by_line_reference
                   tests/test_reader.py::test_stats_from_file_in_pieces_equal_the_reference
                   tests/test_reader.py::test_numpy_span_decoding_equals_schemes_decode
                   tests/test_reader.py::test_read_batch_equals_the_batch_of_read_predictions
                   tests/test_reader.py::test_errors_in_later_pieces_name_the_file_line
                   tests/test_reader.py::test_read_pieces_keep_sentences_whole_and_a_later_bom
                   tests/test_reader.py::test_first_bad_line_in_file_order_is_the_error
                   tests/test_reader.py::test_small_cases_of_the_reader
                   tests/test_reader.py::test_pieces_are_about_the_size_asked_and_stdin_is_read_in_pieces
                   tests/test_bad_inputs.py::test_catalogue
                   tests/test_bad_inputs.py::test_other_whitespace_list_is_what_str_split_uses
                   tests/test_bad_inputs.py::test_read_standard_input_in_python
                   tests/test_bad_inputs.py::test_cli_empty_test_file_and_empty_training
                   tests/test_bad_inputs.py::test_parse_conll_keeps_python_nan_for_empty_text" ;;
    batch)   echo "tests/test_batch.py tests/test_schemes.py tests/test_corpus.py tests/test_hardeval.py" ;;
    stats)   # the fast tests of the files that build or read statistics: not the ones on the whole
             # CoNLL-2003 corpus nor the subprocess / Dask ones (10-20 s each, with every mutant of
             # __init__ and the builder), whose statistics the hypothesis tests check on small data
             echo "tests/test_stats.py tests/test_hardeval.py
                   tests/test_shareable.py::test_table_and_scan_equal_brute_force_and_shareable_answers_every_mention
                   tests/test_shareable.py::test_attribute_values_equal_from_full_and_shareable_statistics
                   tests/test_shareable.py::test_repeated_queries_and_a_hash_collision_still_count_exactly
                   tests/test_shareable.py::test_tokens_holding_spaces_are_counted_as_tokens
                   tests/test_shareable.py::test_shareable_file_holds_no_text_and_refuses_what_needs_it
                   tests/test_shareable.py::test_damaged_shareable_files_are_refused
                   tests/test_scale.py::test_from_dataset_equals_the_list_build
                   tests/test_scale.py::test_streaming_iterable_dataset
                   tests/test_scale.py::test_bad_input_names_sentence_and_position
                   tests/test_scale.py::test_bad_class_label_id_and_untyped_columns
                   tests/test_scale.py::test_class_label_names_that_are_not_tags_fail_only_when_used
                   tests/test_scale.py::test_parallel_build_keeps_empty_shards_sentences
                   tests/test_scale.py::test_merge_all_is_reduce_merge_and_the_build_of_the_concatenation
                   tests/test_reader.py::test_stats_from_file_in_pieces_equal_the_reference
                   tests/test_reader.py::test_numpy_span_decoding_equals_schemes_decode
                   tests/test_reader.py::test_errors_in_later_pieces_name_the_file_line
                   tests/test_reader.py::test_pieces_are_about_the_size_asked_and_stdin_is_read_in_pieces
                   tests/test_buckets.py::test_occurrences_equal_brute_force_counts
                   tests/test_bad_inputs.py::test_catalogue
                   tests/test_bad_inputs.py::test_zip_bomb_is_refused_unread
                   tests/test_bad_inputs.py::test_stats_header_lying_about_its_size_is_refused
                   tests/test_bad_inputs.py::test_read_standard_input_in_python" ;;
    scoring) # test_buckets.py's fast tests (as for buckets) and the tuple-set check of test_batch.py
             echo "tests/test_scoring.py tests/test_tmr.py
                   tests/test_batch.py::test_matched_by_one_key_per_span_agrees_with_the_tuple_set"
             tests_for buckets ;;
    uncertainty) echo "tests/test_uncertainty_engine.py tests/test_uncertainty.py" ;;
    formats) # test_formats.py but its evaluate, CLI and card tests (slow, and about the glue around formats)
             grep -o '^def test_[a-z0-9_]*' "$ROOT/tests/test_formats.py" | sed 's/^def /tests\/test_formats.py::/' |
               grep -v -e test_evaluate_ -e test_cli_ -e test_cards_ -e test_match_option_overall ;;
    matching) # test_matching.py and the tests of test_formats.py that score through the matching
              echo "tests/test_matching.py
                    tests/test_formats.py::test_hallucinated_mention_is_a_false_positive_everywhere
                    tests/test_formats.py::test_round_trips_on_conll_test_give_identical_scores
                    tests/test_formats.py::test_match_option_credits_by_hand
                    tests/test_formats.py::test_match_option_overall_equals_match_scores" ;;
    checks)  echo "tests/test_bad_inputs.py tests/test_uncertainty.py" ;;
    hardeval) # and the tests elsewhere that call hardeval.py's counts (the per-sentence table the
              # intervals resample) and hardeval(ci=True); all fast
              echo "tests/test_hardeval.py
                    tests/test_uncertainty.py::test_counts_give_every_number_the_methods_report
                    tests/test_uncertainty.py::test_order_and_process_split_do_not_change_intervals
                    tests/test_uncertainty.py::test_compare_checks_its_inputs" ;;
    tmr)     # test_tmr.py and the fast tests elsewhere that reach tmr.py's counts, intervals and match=
             echo "tests/test_tmr.py
                   tests/test_uncertainty.py::test_counts_give_every_number_the_methods_report
                   tests/test_uncertainty.py::test_order_and_process_split_do_not_change_intervals
                   tests/test_uncertainty.py::test_document_units_need_documents_and_widen_nothing_when_sentences_are_documents
                   tests/test_uncertainty.py::test_compare_checks_its_inputs
                   tests/test_formats.py::test_match_option_credits_by_hand
                   tests/test_formats.py::test_match_option_overall_equals_match_scores" ;;
    buckets) # test_buckets.py without its real-data, CLI, evaluate.load and slow scipy-wilcoxon tests
             # (with them a run on a shared machine stopped at 561 of 1,498 mutants); what they
             # touch in buckets.py has hand-made and property tests here
             echo "tests/test_buckets.py::test_attribute_values_by_hand
                   tests/test_buckets.py::test_lowercase_option_matches_case_insensitively
                   tests/test_buckets.py::test_occurrences_stay_inside_sentences_and_skip_unseen_tokens
                   tests/test_buckets.py::test_occurrences_equal_brute_force_counts
                   tests/test_buckets.py::test_lowercased_stats_equal_stats_of_lowercased_data
                   tests/test_buckets.py::test_equal_count_cuts_never_split_a_value
                   tests/test_buckets.py::test_special_buckets_always_exist_and_bounds_cover_the_line
                   tests/test_buckets.py::test_every_item_in_exactly_one_bucket_and_tag_f1_is_seqeval
                   tests/test_buckets.py::test_bootstrap_is_seeded_and_brackets_the_estimate
                   tests/test_buckets.py::test_bootstrap_equals_a_plain_loop_over_resamples_in_canonical_order
                   tests/test_buckets.py::test_diagnostics
                   tests/test_buckets.py::test_spearman_equals_scipy
                   tests/test_buckets.py::test_type_keys_are_named_so_a_spurious_type_renames_nothing
                   tests/test_buckets.py::test_empty_and_entity_free_input_give_nan_with_zero_counts
                   tests/test_buckets.py::test_bad_options_and_input
                   tests/test_buckets.py::test_demo_buckets_are_empty_only_between_coinciding_cuts
                   tests/test_buckets.py::test_interval_text_reads_as_written
                   tests/test_buckets.py::test_partial_match_credits_by_hand
                   tests/test_buckets.py::test_per_sentence_counts_give_the_flat_keys_and_bucket_sizes
                   tests/test_buckets.py::test_self_diagnosis_by_hand
                   tests/test_buckets.py::test_model_wise_by_hand
                   tests/test_buckets.py::test_compare_by_hand
                   tests/test_buckets.py::test_attribute_wise_by_hand
                   tests/test_buckets.py::test_friedman_by_hand_and_against_scipy
                   tests/test_buckets.py::test_wilcoxon_by_hand_and_against_scipy
                   tests/test_buckets.py::test_significance_tests_say_they_need_scipy
                   tests/test_buckets.py::test_check_options_limits_and_messages
                   tests/test_buckets.py::test_bucketing_parts_by_hand
                   tests/test_buckets.py::test_counts_take_the_options_of_bucket_f1
                   tests/test_buckets.py::test_intervals_options_equal_a_plain_loop
                   tests/test_buckets.py::test_entity_free_input_gives_nan_diagnostics_without_numpy_warnings
                   tests/test_buckets.py::test_hallucinated_mentions_are_predictions_of_the_overall_f1_only
                   tests/test_buckets.py::test_cached_attribute_values_follow_statistics_match_and_casing
                   tests/test_buckets.py::test_lowercase_silences_the_casing_warning
                   tests/test_buckets.py::test_table_rows_per_attribute_and_matching
                   tests/test_buckets.py::test_attribute_values_of_one_token_sentences_and_types_unknown_to_training
                   tests/test_buckets.py::test_a_plain_score_builds_no_per_sentence_counts
                   tests/test_buckets.py::test_token_items_are_right_by_type_or_by_position_as_the_matching_says
                   tests/test_buckets.py::test_consistency_one_from_a_single_training_occurrence
                   tests/test_buckets.py::test_spearman_of_a_constant_is_nan_without_numpy_warnings
                   tests/test_buckets.py::test_partial_match_intervals_resample_the_credits" ;;
    nrb)     # test_nrb.py but its spaCy and transformers tagger tests (about the taggers, seconds each),
             # and the two tests of test_uncertainty.py that build NRB's counts
             grep -o '^def test_[a-z0-9_]*' "$ROOT/tests/test_nrb.py" | sed 's/^def /tests\/test_nrb.py::/' |
               grep -v -e test_spacy_model_ -e test_transformers_tagger_
             echo "tests/test_uncertainty.py::test_counts_give_every_number_the_methods_report
                   tests/test_uncertainty.py::test_nrb_and_rockner_counts_give_their_numbers" ;;
    rockner) # the scoring tests only: the rest of test_rockner.py exercises attacks.py
             echo "tests/test_rockner.py::test_error_analysis_categories_by_hand
                   tests/test_rockner.py::test_error_analysis_partitions_gold_entities
                   tests/test_rockner.py::test_rockner_keys_by_hand
                   tests/test_rockner.py::test_confusion_difference_over_the_union_of_rows_and_columns
                   tests/test_rockner.py::test_counts_resample_unpaired_sets_apart_and_paired_sets_together
                   tests/test_rockner.py::test_resampling_defaults
                   tests/test_rockner.py::test_intervals_resample_the_unit_given
                   tests/test_rockner.py::test_split_versions_keeps_order_and_documents
                   tests/test_rockner.py::test_rockner_scores_match_seqeval_and_the_drop_is_their_difference
                   tests/test_rockner.py::test_rockner_metric_through_evaluate_and_its_errors
                   tests/test_rockner.py::test_attack_and_rockner_commands
                   tests/test_uncertainty.py::test_nrb_and_rockner_counts_give_their_numbers" ;;
    *) echo "unknown module $1" >&2; return 1 ;;
  esac
}

MODULES=("$@")
[ ${#MODULES[@]} -eq 0 ] && MODULES=(schemes corpus batch stats scoring hardeval tmr buckets nrb rockner
                                   uncertainty formats matching checks)

for module in "${MODULES[@]}"; do
  tests="$(tests_for "$module")" || exit 2
  work="$BASE/$module"
  names=()
  tests_sum="$(cat "$ROOT"/tests/*.py | md5sum)"
  if [ -n "${RECHECK:-}" ] && [ -d "$work/mutants" ] && [ "$tests_sum" = "$(cat "$work/tests.md5" 2>/dev/null)" ]; then
    # Same tests as before: go on with the mutants not reached (mutmut skips those with a result).
    echo "== $module: continuing with the mutants not reached"
    rm -rf "$work/tests" "$work/tough_ner" "$work/metrics" "$work/shared"
  elif [ -n "${RECHECK:-}" ] && [ -d "$work/mutants" ]; then
    # New tests: every mutant not killed yet, by name, after collecting which tests cover what
    # again; the killed ones keep their results.
    mapfile -t names < <(cd "$work" && mutmut results --all true 2>/dev/null |
      awk -F': ' '$2 !~ /^(killed|timeout|segfault)$/ {gsub(/^ +/, "", $1); print $1}')
    rm -rf "$work/tests" "$work/tough_ner" "$work/metrics" "$work/shared" "$work/mutants/mutmut-stats.json"
    echo "== $module: re-checking ${#names[@]} mutants with the current tests"
    [ ${#names[@]} -eq 0 ] && continue
  else
    rm -rf "$work" && mkdir -p "$work/mutants"  # exists before Python starts, so PYTHONPATH finds it
  fi
  cp -r "$ROOT/tough_ner" "$ROOT/tests" "$ROOT/metrics" "$work/"
  # A mutant needs one failing example, not the smallest: Hypothesis does not shrink here
  # (shrinking took minutes per killed mutant of the reader on a loaded machine).
  printf '%s\n' "" "from hypothesis import Phase, settings as _settings" \
    "_settings.register_profile('mutation', phases=[Phase.explicit, Phase.reuse, Phase.generate], deadline=None)" \
    "_settings.load_profile('mutation')" >> "$work/tests/conftest.py"
  echo "$tests_sum" > "$work/tests.md5"
  grep -v '^\[tool.mutmut\]' "$ROOT/pyproject.toml" > "$work/pyproject.toml"
  {
    echo "[mutmut]"
    echo "source_paths = tough_ner/"
    echo "also_copy = metrics/"  # the evaluate modules the tests load by path
    echo "only_mutate = $(cd "$ROOT" && ls tough_ner/*/"$module".py tough_ner/"$module".py 2>/dev/null | head -n 1)"
    printf 'pytest_add_cli_args =\n    -q\n    -p\n    no:cacheprovider\n'  # mutmut adds -x itself
    echo "pytest_add_cli_args_test_selection ="
    for t in $tests; do [ -f "$work/${t%%::*}" ] && echo "    $t"; done  # files or test ids
  } > "$work/setup.cfg"
  # Tests find the shared CoNLL data beside the repository (here: beside mutants/).
  ln -s "$(dirname "$ROOT")/shared" "$work/shared"
  echo "== $module: $(date -u +%H:%M:%S), tests: $tests"
  (cd "$work" && PYTHONPATH="$work/mutants" timeout "$TIME_BOX" nice -n 10 mutmut run --max-children "$JOBS" \
      "${names[@]}" >> run.log 2>&1; echo "exit $?" >> run.log)
  (cd "$work" && python3 "$ROOT/tools/mutation_score.py" "$module" | tee score.txt)
done
