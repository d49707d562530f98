# ltt_doctest_cases(TARGET [LABELS label...] [UNIT | UNIT_EXCEPT_SUITES suite...]
#                   [CHECKS_ONLY] [COST seconds] [PROPERTIES name value...])
#
# One ctest entry per doctest test case of the executable TARGET, named "TARGET: <case name>",
# so that `ctest --parallel` spreads a test program over the cores and ctest's per-test times
# name the slow case. The cases are listed from the program itself after each link
# (`--list-test-cases --reporters=xml`, doctest_cases_list.cmake); the list is a ctest include
# file, so a new TEST_CASE needs no edit here. Cases marked doctest::skip() are left out.
#
# Each entry gets LABELS, plus `unit` (the label scripts/test runs under ASan + UBSan) when
# UNIT is given or its doctest suite is not one of UNIT_EXCEPT_SUITES; COST (default 1) orders
# the start on a fresh build, when ctest has no timings of its own yet (the heavy ones first);
# PROPERTIES are set on every entry (ENVIRONMENT, RESOURCE_LOCK, FIXTURES_REQUIRED, ...). The
# working directory is the directory that calls this function.
#
# CHECKS_ONLY: the code under test is compiled elsewhere (a library, the `ltt` program) and the
# program's own code sets up cases and checks results, so in an optimized build it compiles at
# -O1: the test files are the suite's largest translation units, and -O3 costs about half as
# much again as -O1 on them (cli_tests: 37 -> 25 CPU-s a batch) for checks whose speed does not
# matter. The header-only statistics (unit_tests) instantiate the code under test in the test
# files and keep the build's level.
#
# An entry fails unless exactly one test case ran: a filter that matched nothing (a renamed
# case in a stale list) would otherwise pass. TARGET is added to `ltt_unit_test_programs` when
# any of its cases may be `unit`, so the sanitizer build builds only what it runs. TARGET is a
# unity build (batches of 8 test files): file-local names must differ across its files.
function(ltt_doctest_cases target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "UNIT;CHECKS_ONLY" "COST"
                        "LABELS;UNIT_EXCEPT_SUITES;PROPERTIES")
  if(arg_UNPARSED_ARGUMENTS OR NOT (arg_LABELS OR arg_UNIT))
    message(FATAL_ERROR "ltt_doctest_cases(${target}): LABELS or UNIT required; unknown: "
                        "${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_COST)
    set(arg_COST 1)
  endif()
  set(unit_suites "")
  if(arg_UNIT)
    set(unit_suites "*")
  elseif(arg_UNIT_EXCEPT_SUITES)
    set(unit_suites "*except*;${arg_UNIT_EXCEPT_SUITES}")
  endif()
  if(unit_suites)
    add_dependencies(ltt_unit_test_programs ${target})
  endif()
  # Unity build: the test files share the same heavy headers and template instantiations, so
  # one batch compiles them once; library and program code stay one translation unit per file.
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  if(arg_CHECKS_ONLY)
    # after the configuration's flags on the command line, so this level wins
    target_compile_options(${target} PRIVATE $<$<CONFIG:Release,RelWithDebInfo>:-O1>)
  endif()

  set(list_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_cases.cmake)
  set(settings_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_cases_settings.cmake)
  # The arguments of the listing, with generator expressions, as a script the listing reads.
  file(GENERATE OUTPUT ${settings_file} CONTENT
"set(program [==[$<TARGET_FILE:${target}>]==])
set(target [==[${target}]==])
set(labels [==[${arg_LABELS}]==])
set(unit_suites [==[${unit_suites}]==])
set(cost [==[${arg_COST}]==])
set(properties [==[${arg_PROPERTIES}]==])
set(working_directory [==[${CMAKE_CURRENT_BINARY_DIR}]==])
set(list_file [==[${list_file}]==])
")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D SETTINGS=${settings_file}
            -P ${PROJECT_SOURCE_DIR}/tests/doctest_cases_list.cmake
    VERBATIM)

  # Read by ctest; a program not built yet is one failing entry with the target's labels.
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  set(placeholder_labels ${arg_LABELS})
  if(unit_suites)
    list(APPEND placeholder_labels unit)
    list(REMOVE_DUPLICATES placeholder_labels)
  endif()
  file(WRITE ${include_file}
"if(EXISTS [==[${list_file}]==])
  include([==[${list_file}]==])
else()
  add_test([==[${target}_NOT_BUILT]==] [==[${CMAKE_COMMAND}]==] -E echo
           [==[${target} is not built: cmake --build ${PROJECT_BINARY_DIR} --target ${target}]==])
  set_tests_properties([==[${target}_NOT_BUILT]==] PROPERTIES
                       LABELS [==[${placeholder_labels}]==] WILL_FAIL TRUE)
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
