# The cop backend (baselines/cop), included from tests/suite/CMakeLists.txt. Every run's
# launcher (cop_master, suite/launch/worker_launchers.cpp) starts a private pvmd and COP stack (copd + one
# copdrv per node on loopback) and stops them by PID, so these tests share nothing.
# Labels: suite and cop.
set(cop_tiny --reps 2 --max-reps 3 --iters 3 --warmup 1 --timeout 150)

function(cop_cli_test name)
  copbench_cli_add_test(${name} ${ARGN})
  # PVM_TMP and the stack variables unset: nothing running is picked up by accident.
  set_tests_properties(${name} PROPERTIES TIMEOUT 180 LABELS "suite;cop"
                       ENVIRONMENT "PVM_TMP=;COP_STACK_DIR=;COP_DRIVER_1=;COP_USE_RUNNING=")
endfunction()

# Every offered operation against a local computation, in both access modes.
foreach(nodes 1 2 3 4)
  cop_cli_test(suite_verify_cop_${nodes} verify --backend cop --nodes ${nodes} --timeout 150)
endforeach()
cop_cli_test(suite_verify_cop_normal_1 verify --backend cop --nodes 1 --route normal --timeout 150)
cop_cli_test(suite_verify_cop_normal_3 verify --backend cop --nodes 3 --route normal --timeout 150)
# Two tasks per node share their node's channel (one copdrv per node, libcop's host area).
cop_cli_test(suite_verify_cop_2x2 verify --backend cop --nodes 2 --tasks-per-node 2 --timeout 150)
cop_cli_test(suite_verify_cop_normal_2x2 verify --backend cop --nodes 2 --tasks-per-node 2 --route normal --timeout 150)

# One tiny point of every benchmark cop offers; the others say "not offered".
copbench_workload_tests(NAME suite_run_{workload}_{backend} NOT_OFFERED suite_run_{workload}_{backend}_not_offered
                        KIND benchmark BACKEND cop NODES 3 CHECKED TIMEOUT 180 LABELS suite cop
                        ENVIRONMENT PVM_TMP= COP_STACK_DIR= COP_DRIVER_1= COP_USE_RUNNING= ARGS ${cop_tiny})
cop_cli_test(suite_run_barrier_cop_normal run barrier --backend cop --nodes 4 --route normal ${cop_tiny})

# A stack that is already running (COP_STACK_DIR) is used, not started again.
set(COP_RUNNING_STACK ${CMAKE_CURRENT_BINARY_DIR}/cop-stack)
add_test(NAME suite_cop_stack_start COMMAND ${CMAKE_BINARY_DIR}/bin/copbench-cop-stack start --nodes 3 --dir ${COP_RUNNING_STACK})
add_test(NAME suite_cop_stack_stop COMMAND ${CMAKE_BINARY_DIR}/bin/copbench-cop-stack stop --dir ${COP_RUNNING_STACK})
set_tests_properties(suite_cop_stack_start PROPERTIES FIXTURES_SETUP suite_cop_stack LABELS "suite;cop")
set_tests_properties(suite_cop_stack_stop PROPERTIES FIXTURES_CLEANUP suite_cop_stack LABELS "suite;cop")
copbench_cli_add_test(suite_run_reduce_cop_running_stack run reduce --backend cop --nodes 3 --sizes 8,1K ${cop_tiny})
set_tests_properties(suite_run_reduce_cop_running_stack PROPERTIES TIMEOUT 180 LABELS "suite;cop"
                     FIXTURES_REQUIRED suite_cop_stack
                     ENVIRONMENT "PVM_TMP=;COP_STACK_DIR=${COP_RUNNING_STACK};COP_DRIVER_1=")

# No channel driver where it is said to be: one line saying how to start the stack.
add_test(NAME suite_error_cop_no_driver
         COMMAND ${EXPECT_OUTPUT} error "cop_mytid failed.*start the COP stack" ${COPBENCH} run barrier --backend cop --nodes 2)
set_tests_properties(suite_error_cop_no_driver PROPERTIES TIMEOUT 120 LABELS "suite;cop"
                     ENVIRONMENT "PVM_TMP=;COP_STACK_DIR=${CMAKE_CURRENT_BINARY_DIR}/no-cop-stack-here")

# On a cluster (--hostfile) the cop backend uses the cluster's virtual machine and copdrv
# daemons, never a private loopback stack: without a running pvmd it says so and stops.
set(COP_TWO_HOSTS ${CMAKE_CURRENT_BINARY_DIR}/cop-two-hosts)
file(WRITE ${COP_TWO_HOSTS} "198.18.7.1\n198.18.7.2\n")
add_test(NAME suite_error_cop_cluster_no_pvmd
         COMMAND ${EXPECT_OUTPUT} error "cop: no pvmd is running .*a cop run on the cluster of .* uses the cluster's virtual machine"
                 ${COPBENCH} run barrier --backend cop --nodes 2 --hostfile ${COP_TWO_HOSTS})
set_tests_properties(suite_error_cop_cluster_no_pvmd PROPERTIES TIMEOUT 60 LABELS "suite;cop"
                     ENVIRONMENT "PVM_TMP=${CMAKE_CURRENT_BINARY_DIR}/no-pvm-here")

# How libcop finds a group's members (COPBENCH_COP_GROUPS, cop_backend.cpp): a value that
# is none of static, default, ask is one line and a non-zero exit, before any task runs.
add_test(NAME suite_error_cop_groups
         COMMAND ${EXPECT_OUTPUT} error "COPBENCH_COP_GROUPS='sometimes' \\(static, default, ask" ${COPBENCH} run barrier --backend cop --nodes 2)
set_tests_properties(suite_error_cop_groups PROPERTIES TIMEOUT 120 LABELS "suite;cop"
                     ENVIRONMENT "PVM_TMP=;COP_STACK_DIR=;COP_DRIVER_1=;COPBENCH_COP_GROUPS=sometimes")
