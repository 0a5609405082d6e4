# The fault tests (label fault, `ctest -L fault`): one table, one function (issue 37).
# Included by tests/CMakeLists.txt after the test directories (the programs are built in
# tests/cop and tests/difftest; the cache settings DIFFTEST_CI_* are theirs).
#
# copbench_add_test_table(ROW...) adds one test per row of five columns separated by `|`:
#   NAME | TIMEOUT_S | LABELS | ENVIRONMENT | COMMAND
# LABELS and ENVIRONMENT are space-separated ("-" for none); a label `serial` is no label but
# RUN_SERIAL (the test brings up a COP stack of its own: copd, copdrv, a private pvmd).
# COMMAND is split as a shell would (quotes kept together); a program target's name is
# its path. A row holds no `;` (it is one element of a CMake list).
function(copbench_add_test_table)
  foreach(row IN LISTS ARGN)
    string(REPLACE "|" ";" cells "${row}")
    list(LENGTH cells n)
    if(NOT n EQUAL 5)
      message(FATAL_ERROR "copbench_add_test_table: ${n} cells, not 5, in row: ${row}")
    endif()
    list(TRANSFORM cells STRIP)
    list(GET cells 0 name)
    list(GET cells 1 timeout)
    list(GET cells 2 labels_cell)
    list(GET cells 3 environment_cell)
    list(GET cells 4 command_cell)
    separate_arguments(labels UNIX_COMMAND "${labels_cell}")
    separate_arguments(environment UNIX_COMMAND "${environment_cell}")
    separate_arguments(command UNIX_COMMAND "${command_cell}")
    set(serial FALSE)
    if("serial" IN_LIST labels)
      set(serial TRUE)
      list(REMOVE_ITEM labels serial)
    endif()
    add_test(NAME ${name} COMMAND ${command})
    set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout} RUN_SERIAL ${serial})
    if(NOT environment_cell STREQUAL "-")
      set_tests_properties(${name} PROPERTIES ENVIRONMENT "${environment}")
    endif()
  endforeach()
endfunction()

# The scripts with their first two arguments (the programs, the COP stack script).
set(bin_stack "\"${CMAKE_BINARY_DIR}/bin\" \"${PROJECT_SOURCE_DIR}/scripts/cop-stack\"")
set(fault_sh "\"${CMAKE_CURRENT_LIST_DIR}/cop/fault_test.sh\" ${bin_stack}")
set(libcop_sh "\"${CMAKE_CURRENT_LIST_DIR}/cop/libcop_test.sh\" ${bin_stack}")
set(difftest_dir "${CMAKE_CURRENT_LIST_DIR}/difftest")

copbench_add_test_table(
  # name                              | timeout | labels            | environment | command
  #
  # A job's partition (task address spaces) kept when all its channels' leases run out at
  # once; and freed when they stay silent one more lease: the tasks back get epoch_lost
  # (issue 34).
  "cop_jobs.TaskAddressSpaceKeptWhenEveryLeaseRunsOut | 60 | cop fault | - |
     test_cop_jobs --gtest_filter=JobsIsolated.TaskAddressSpaceKeptWhenEveryLeaseRunsOut"
  "cop_jobs.TasksBackAfterTheirPartitionWasFreedGetEpochLost | 60 | cop fault | - |
     test_cop_jobs --gtest_filter=JobsIsolated.TasksBackAfterTheirPartitionWasFreedGetEpochLost"
  # A receiver killed -9 inside cop_bcast, then a new one on its node and tag gets the data
  # within a bounded time (host area, cop/lib/host.cpp); its part 4, a member killed before
  # it enters while its node partner waits, is issue 34's liveness check.
  "cop_libcop_killrecv          | 180 | cop fault serial | - | ${libcop_sh} killrecv"
  # The two-group loop (tests/cop/libcop_groups.cpp) under injected faults (a hang is a failure).
  "cop_fault_groups             | 60  | cop fault serial |
     COP_FAULTS=drop=0.03,dup=0.03,reorder=0.03,delay=0.03,delay_ms=5,seed=7 | ${libcop_sh} groups 4 2 20"
  # The link under injected faults (cop/link/fault.h, cop_fault_check): libcop collectives
  # and an exact fetch-and-add on a real pvmd, each fault at 1, 5 and 10 %, all at once at 5 %.
  "cop_fault_drop               | 150 | cop fault serial | - | ${fault_sh} drop"
  "cop_fault_corrupt            | 150 | cop fault serial | - | ${fault_sh} corrupt"
  "cop_fault_dup                | 150 | cop fault serial | - | ${fault_sh} dup"
  "cop_fault_reorder            | 150 | cop fault serial | - | ${fault_sh} reorder"
  "cop_fault_delay              | 150 | cop fault serial | - | ${fault_sh} delay"
  "cop_fault_all                | 150 | cop fault serial | - | ${fault_sh} all"
  # Arrays of many bursts in few frames under loss, damage and duplication (one task a
  # node: the reduction's and the broadcast's bursts packed into frames, a lone receiver
  # awaiting the whole array; two a node: through the host area; normal access: a request
  # to copdrv holds fewer commands than a frame).
  "cop_fault_burst              | 240 | cop fault serial | FAULT_TASKS=1 FAULT_BURST=1 FAULT_ROUNDS=12 |
     ${fault_sh} all 0.05"
  "cop_fault_burst_shared       | 240 | cop fault serial | FAULT_BURST=1 FAULT_ROUNDS=8 | ${fault_sh} drop 0.05"
  "cop_fault_burst_normal       | 240 | cop fault serial | FAULT_TASKS=1 FAULT_BURST=1 FAULT_ROUNDS=8 FAULT_ACCESS=normal |
     ${fault_sh} drop 0.05"
  # The same arrays through copd's element path (COPD_RUNS=0, issue 36): the run path is
  # the default above, the element path stays exactly-once too.
  "cop_fault_burst_elements     | 240 | cop fault serial | FAULT_TASKS=1 FAULT_BURST=1 FAULT_ROUNDS=8 COPD_RUNS=0 |
     ${fault_sh} all 0.05"
  # copbench's own barrier benchmark on the cop backend at 1 % loss.
  "cop_fault_copbench_barrier   | 150 | cop fault serial | - | ${fault_sh} copbench 0.01"
  # The same checks over two level-1 copd under a level-2 copd (the link between the levels
  # faulted too) at 5 % of each fault: no errors, no wrong or duplicated results.
  "cop_fault_two_level          | 300 | cop fault serial | - | env COP_PER_CONTROLLER=2 ${fault_sh} all"
  # Channel interfaces in parallel (copd --io-threads, cop/controller/server_io.cpp): 8
  # channels on 4 I/O threads under every fault at 5 %, exactly once (no errors, no wrong or
  # duplicated results); and a controller node that polls (copd --poll) on 2 I/O threads.
  "cop_fault_io_threads         | 150 | cop fault serial | COPD_IO_THREADS=4 FAULT_NODES=8 FAULT_TASKS=1 FAULT_ROUNDS=20 |
     ${fault_sh} all 0.05"
  "cop_fault_poll               | 150 | cop fault serial | COPD_IO_THREADS=2 COPD_POLL=1 FAULT_ROUNDS=10 |
     ${fault_sh} reorder 0.05"
  # Every wait bounded (issue 25): copd stopped 1.6 s (longer than its 1 s lease) while
  # 4 nodes x 2 tasks run checked collectives: right values or errors, then rounds that
  # all succeed (no host-area slot left behind), and the run ends (a hang is the TIMEOUT).
  "cop_fault_outage             | 120 | cop fault serial | - | ${fault_sh} outage 1600"
  # Issue 34: the same with copd stopped 15 s (fifteen leases, ten times the drivers'
  # silence limit): every call right or an error (a task whose partition went gets
  # CopErrEpochLost, never the cleared words), and the run ends.
  "cop_fault_outage_long        | 180 | cop fault serial | - | ${fault_sh} outage 15000"
  # The same with the tags used again every 4 rounds (OUTAGE_REUSE=1), as a PVM program
  # would: a call on words whose earlier operation failed for some of its participants
  # never gets another round's values with success (libcop has the controller void it
  # first, controller.h "Voiding"), and the rounds after the outage all succeed.
  # Two outages (each a stack): before the fix either alone gave wrong values in 4 of 5 runs.
  "cop_fault_outage_reuse       | 60  | cop fault serial | OUTAGE_REUSE=1 | ${fault_sh} outage 1600 2400"
  # The waits' bounds on real copd/copdrv processes and in the host area: a LOCK held too
  # long taken back (deadlock timer), commands kept \"in progress\" timing out, copdrv
  # killed (a zombie) ending its tasks' calls, a task's death reaching the others' waits,
  # host-area slots of failed operations swept.
  "cop_fault_waits              | 120 | cop fault | - |
     test_cop_driver --gtest_filter=*TakenBack*:*InProgressStillTimeOut*:*Zombie*:*DiesBeforeItCalls*"
  "cop_fault_host_area          | 120 | cop fault | - | test_cop_host_area"
  # cop_difftest (tests/difftest/README.md), the CI budget: a fixed list of seeds, each
  # program run on a fresh stack and against PVM's own group calls, the classes
  # DIFFTEST_CI_FEATURES (see tests/difftest/CMakeLists.txt).
  "cop_difftest_ci              | 480 | cop fault serial | - |
     \"${difftest_dir}/difftest.sh\" ${bin_stack} --seeds \"${DIFFTEST_CI_SEEDS}\" --steps 60
     --features ${DIFFTEST_CI_FEATURES}"
  # The checker can fail: with --self-check the tasks plant a wrong element in every
  # reduction result, and the run must say FAIL (exit 1) with WRONG lines.
  "cop_difftest_can_fail        | 60  | cop fault serial | - | \"${difftest_dir}/can_fail_test.sh\" ${bin_stack}"
)
