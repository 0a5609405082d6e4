# What each backend offers, read from baselines/backends.json (the file the catalog is
# compiled from, so `copbench list` and these tests cannot disagree), and the one way a
# test runs `copbench run`: through check_run.py, which checks the written points.

file(READ ${COPBENCH_BACKENDS_JSON} _copbench_backends_json)

# The strings of the JSON array at the given path (e.g. backends 0 offered) in `out`.
function(_copbench_json_strings out)
  set(items)
  string(JSON n ERROR_VARIABLE missing LENGTH "${_copbench_backends_json}" ${ARGN})
  if(NOT missing AND n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON item GET "${_copbench_backends_json}" ${ARGN} ${i})
      list(APPEND items "${item}")
    endforeach()
  endif()
  set(${out} "${items}" PARENT_SCOPE)
endfunction()

# For BACKEND: the suite benchmarks it offers (every operation they need is offered),
# those it does not, and the sized benchmarks (they take --sizes), in the file's order.
function(copbench_benchmarks_of backend offered_var not_offered_var sized_var)
  string(JSON nb LENGTH "${_copbench_backends_json}" backends)
  math(EXPR last "${nb} - 1")
  set(ops)
  foreach(i RANGE ${last})
    string(JSON name GET "${_copbench_backends_json}" backends ${i} name)
    if(name STREQUAL backend)
      _copbench_json_strings(ops backends ${i} offered)
    endif()
  endforeach()
  if(NOT ops)
    message(FATAL_ERROR "baselines/backends.json: no backend '${backend}'")
  endif()
  set(offered)
  set(not_offered)
  set(sized)
  string(JSON nbench LENGTH "${_copbench_backends_json}" benchmarks)
  math(EXPR last "${nbench} - 1")
  foreach(i RANGE ${last})
    string(JSON bench GET "${_copbench_backends_json}" benchmarks ${i} name)
    string(JSON takes_sizes GET "${_copbench_backends_json}" benchmarks ${i} sizes)
    _copbench_json_strings(needs benchmarks ${i} needs)
    if(takes_sizes)
      list(APPEND sized ${bench})
    endif()
    set(ok TRUE)
    foreach(op ${needs})
      if(NOT op IN_LIST ops)
        set(ok FALSE)
      endif()
    endforeach()
    if(ok)
      list(APPEND offered ${bench})
    else()
      list(APPEND not_offered ${bench})
    endif()
  endforeach()
  set(${offered_var} "${offered}" PARENT_SCOPE)
  set(${not_offered_var} "${not_offered}" PARENT_SCOPE)
  set(${sized_var} "${sized}" PARENT_SCOPE)
endfunction()

# add_test NAME name COMMAND copbench ARGS..., where a `copbench run` goes through
# check_run.py: the points it writes are checked, not only its exit code. A failed check
# prints "CHECK FAILED" and exits 1.
set(COPBENCH_CHECK_RUN ${CMAKE_CURRENT_LIST_DIR}/check_run.py)
function(copbench_cli_add_test name)
  if(ARGV1 STREQUAL "run")
    add_test(NAME ${name} COMMAND ${COPBENCH_CHECK_RUN} ${COPBENCH} ${ARGN})
    set_tests_properties(${name} PROPERTIES FAIL_REGULAR_EXPRESSION "CHECK FAILED")
  else()
    add_test(NAME ${name} COMMAND ${COPBENCH} ${ARGN})
  endif()
endfunction()

# For BACKEND: one tiny point of every benchmark it offers on NODES nodes, registered by
# the function named TEST_FUNCTION (name backend args...), sizes 8 where the benchmark
# takes sizes; and, for every other benchmark, a check that the run says it is not offered
# (labelled LABELS).
function(copbench_run_every_benchmark backend nodes test_function labels)
  copbench_benchmarks_of(${backend} offered not_offered sized)
  foreach(bench ${offered})
    set(sizes)
    if(bench IN_LIST sized)
      set(sizes --sizes 8)
    endif()
    cmake_language(CALL ${test_function} suite_run_${bench}_${backend} ${backend}
                   run ${bench} --backend ${backend} --nodes ${nodes} ${sizes} ${ARGN})
  endforeach()
  foreach(bench ${not_offered})
    add_test(NAME suite_run_${bench}_${backend}_not_offered
             COMMAND ${EXPECT_ERROR} "is not offered by ${backend}" ${COPBENCH} run ${bench} --backend ${backend} --nodes 2)
    set_tests_properties(suite_run_${bench}_${backend}_not_offered PROPERTIES LABELS "${labels}")
  endforeach()
endfunction()
