# Builds one of the consumer projects in tests/consumer/ against the ltt source tree, the way a
# user would, and runs it.  Invoked by ctest (see tests/CMakeLists.txt) as
#
#   cmake -DMODE=find_package|add_subdirectory|installed_libraries -DLTT_SOURCE_DIR=...
#         -DLTT_VERSION=... -DWORK_DIR=... -DGENERATOR=... [-DMAKE_PROGRAM=...]
#         -DCXX_COMPILER=... [-DLTT_BUILD_DIR=... -DCPU_FLAG=...] -P run_consumer.cmake
#
# find_package:        configure ltt alone (no tests, benchmarks, examples, program or Python
#                      module), install it into WORK_DIR/prefix, then build
#                      tests/consumer/find_package against that prefix.
# add_subdirectory:    build tests/consumer/add_subdirectory, which vendors LTT_SOURCE_DIR.
# installed_libraries: install LTT_BUILD_DIR (the build under test, program and libraries
#                      built) into WORK_DIR/prefix, run the installed bin/ltt, then build
#                      tests/consumer/installed_libraries (ltt::data, ltt::learning,
#                      ltt::tasks) against it.
#
# Either way the consumer's own compile line must carry none of ltt's project flags: -Werror,
# -march=native and the sanitizers are for ltt's programs, never for its users. The one
# exception is CPU_FLAG, the CPU target ltt::learning passes on (reference_pipeline/learning/),
# which the installed_libraries consumer must carry.
cmake_minimum_required(VERSION 3.20)

foreach(var MODE LTT_SOURCE_DIR LTT_VERSION WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT MODE MATCHES "^(find_package|add_subdirectory|installed_libraries)$")
  message(FATAL_ERROR "run_consumer.cmake: MODE must be find_package, add_subdirectory or "
                      "installed_libraries, got '${MODE}'")
endif()
if(MODE STREQUAL "installed_libraries" AND (NOT DEFINED LTT_BUILD_DIR OR NOT DEFINED CPU_FLAG))
  message(FATAL_ERROR "run_consumer.cmake: installed_libraries needs -DLTT_BUILD_DIR=... and "
                      "-DCPU_FLAG=... (may be empty)")
endif()

set(toolchain -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
if(DEFINED MAKE_PROGRAM AND NOT MAKE_PROGRAM STREQUAL "")
  list(APPEND toolchain "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()

# Each step echoes its command and stops the test with the step's output when it fails.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  list(JOIN ARGN " " shown)
  message(STATUS "$ ${shown}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# Fails when a file, or a consumer's compile command, carries one of ltt's project-only flags.
set(project_only_flags "-Werror|-march=|-fsanitize|ltt_project_flags")
function(require_no_project_flags what text)
  if(MODE STREQUAL "installed_libraries" AND NOT CPU_FLAG STREQUAL "")
    string(REPLACE "${CPU_FLAG}" "" text "${text}")
  endif()
  if(text MATCHES "(${project_only_flags})")
    message(FATAL_ERROR "${what} carries ltt's project-only flag '${CMAKE_MATCH_1}':\n${text}")
  endif()
endfunction()

# The package files in the prefix: present, without project-only flags, and pointing into
# neither the source nor the build tree.
macro(check_installed_package)
  foreach(f include/ltt/ltt.hpp include/curation/curation.hpp
            share/doc/ltt/LICENSE share/doc/ltt/CITATION.cff
            share/cmake/ltt/lttConfig.cmake share/cmake/ltt/lttConfigVersion.cmake
            share/cmake/ltt/lttTargets.cmake)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "the install did not produce ${f}")
    endif()
  endforeach()
  file(GLOB exported "${prefix}/share/cmake/ltt/*.cmake")
  foreach(f ${exported})
    file(READ "${f}" text)
    require_no_project_flags("installed ${f}" "${text}")
    foreach(tree "${LTT_SOURCE_DIR}" "${LTT_BUILD_DIR}")
      if(NOT tree STREQUAL "")
        string(FIND "${text}" "${tree}" at)
        if(NOT at EQUAL -1)
          message(FATAL_ERROR "installed ${f} points into ${tree}")
        endif()
      endif()
    endforeach()
  endforeach()
endmacro()

# The installed program: no run path into the build or source tree; it runs and computes.
function(check_installed_program program)
  file(READ_ELF "${program}" RPATH rpath RUNPATH runpath CAPTURE_ERROR elf_error)
  if(elf_error)
    message(FATAL_ERROR "cannot read ${program}: ${elf_error}")
  endif()
  foreach(tree "${LTT_BUILD_DIR}" "${LTT_SOURCE_DIR}")
    string(FIND "${rpath};${runpath}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${program} keeps a run path into ${tree}: '${rpath}' '${runpath}'")
    endif()
  endforeach()
  step("${program}" --version)
  if(NOT step_output MATCHES "^ltt ${LTT_VERSION}")
    message(FATAL_ERROR "${program} --version printed '${step_output}', not ltt ${LTT_VERSION}")
  endif()
  message(STATUS "${step_output}")
  step("${program}" rate --N 2000 --N1 300 --U1 50 --n 200 --alpha 0.1 --delta 0.1 --json)
  string(JSON rate ERROR_VARIABLE json_error GET "${step_output}" rate)
  if(json_error)
    message(FATAL_ERROR "${program} rate --json printed no rate: ${json_error}\n${step_output}")
  endif()
  message(STATUS "ltt rate: ${rate}")
endfunction()

# Flags from the environment would reach the consumer too and blur what this test checks.
set(ENV{CXXFLAGS} "")
set(ENV{LDFLAGS} "")

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(consumer_source "${LTT_SOURCE_DIR}/tests/consumer/${MODE}")
set(consumer_build "${WORK_DIR}/consumer")
set(consumer_args
  "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"
  "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF"
  "-DLTT_VERSION=${LTT_VERSION}")

if(MODE STREQUAL "find_package")
  set(prefix "${WORK_DIR}/prefix")
  step(${CMAKE_COMMAND} -S "${LTT_SOURCE_DIR}" -B "${WORK_DIR}/ltt" ${toolchain}
       -DLTT_BUILD_TESTS=OFF -DLTT_BUILD_BENCH=OFF -DLTT_BUILD_EXAMPLES=OFF -DLTT_BUILD_PROGRAM=OFF
       -DLTT_BUILD_PYTHON=OFF
       "-DCMAKE_INSTALL_PREFIX=${prefix}")
  step(${CMAKE_COMMAND} --build "${WORK_DIR}/ltt")
  step(${CMAKE_COMMAND} --install "${WORK_DIR}/ltt")

  check_installed_package()
  if(EXISTS "${prefix}/bin/ltt" OR EXISTS "${prefix}/include/ltt_reference_pipeline")
    message(FATAL_ERROR "an install without the program has the program or its libraries")
  endif()
  list(APPEND consumer_args "-DCMAKE_PREFIX_PATH=${prefix}" "-DLTT_EXPECTED_PREFIX=${prefix}")
elseif(MODE STREQUAL "installed_libraries")
  set(prefix "${WORK_DIR}/prefix")
  step(${CMAKE_COMMAND} --install "${LTT_BUILD_DIR}" --prefix "${prefix}")
  check_installed_package()
  foreach(f bin/ltt lib/libltt_data.a lib/libltt_learning.a lib/libltt_tasks.a
            lib/libltt_behavior.a lib/libltt_pipeline.a include/ltt_reference_pipeline/data/npy.hpp
            include/ltt_reference_pipeline/learning/learning.hpp
            include/ltt_reference_pipeline/learning/detail/data.hpp
            include/ltt_reference_pipeline/tasks/corridor.hpp
            include/ltt_reference_pipeline/behavior/checkpoint.hpp
            include/ltt_reference_pipeline/pipeline/pipeline.hpp)
    if(NOT EXISTS "${prefix}/${f}")
      message(FATAL_ERROR "the install did not produce ${f}")
    endif()
  endforeach()
  # The installed headers name no MuJoCo type: ltt::tasks links MuJoCo privately, and
  # tasks/mujoco_model.hpp, which includes it, stays in the source tree.
  file(GLOB_RECURSE installed_headers "${prefix}/include/ltt_reference_pipeline/*.hpp")
  foreach(header ${installed_headers})
    file(STRINGS "${header}" mujoco_lines REGEX "#include *<mujoco/|mjModel|mjData")
    if(mujoco_lines)
      message(FATAL_ERROR "installed ${header} names MuJoCo: ${mujoco_lines}")
    endif()
  endforeach()
  check_installed_program("${prefix}/bin/ltt")
  list(APPEND consumer_args "-DCMAKE_PREFIX_PATH=${prefix}" "-DLTT_EXPECTED_PREFIX=${prefix}")
else()
  list(APPEND consumer_args "-DLTT_SOURCE_DIR=${LTT_SOURCE_DIR}")
endif()

step(${CMAKE_COMMAND} -S "${consumer_source}" -B "${consumer_build}" ${toolchain} ${consumer_args})
step(${CMAKE_COMMAND} --build "${consumer_build}")

# The consumer's compile command: built by the consumer, without ltt's project flags.
file(READ "${consumer_build}/compile_commands.json" commands)
string(JSON n LENGTH "${commands}")
set(main_command "")
set(i 0)
while(i LESS n)
  string(JSON file GET "${commands}" ${i} file)
  if(file MATCHES "main\\.cpp$")
    string(JSON main_command GET "${commands}" ${i} command)
  endif()
  math(EXPR i "${i} + 1")
endwhile()
if(main_command STREQUAL "")
  message(FATAL_ERROR "no compile command for main.cpp in ${consumer_build}/compile_commands.json")
endif()
require_no_project_flags("the consumer's compile command" "${main_command}")
if(MODE STREQUAL "installed_libraries" AND NOT CPU_FLAG STREQUAL "")
  string(FIND "${main_command}" "${CPU_FLAG}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "ltt::learning did not pass ${CPU_FLAG} on to its user:\n${main_command}")
  endif()
endif()

step("${consumer_build}/consumer" "${WORK_DIR}")
message(STATUS "${step_output}")
message(STATUS "consumer.${MODE}: ok")
