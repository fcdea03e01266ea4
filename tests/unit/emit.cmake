# The emit layer: JSON writer, profile tables, emitter and output file.
bpfprof_unit_test(test_json_writer unit/test_json_writer.c)
bpfprof_unit_test(test_profile_tables unit/test_profile_tables.c)
bpfprof_unit_test(test_emitter unit/test_emitter.c)
bpfprof_unit_test(test_pprof_writer unit/test_pprof_writer.c)
bpfprof_unit_test(test_wait_breaks unit/test_wait_breaks.c)
