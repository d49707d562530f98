# cmake -D SETTINGS=<target>_cases_settings.cmake -P doctest_cases_list.cmake
#
# Run after each link of a doctest program (doctest_cases.cmake, ltt_doctest_cases): lists its
# test cases with doctest's XML reporter, which gives each case's name and suite, and writes
# the ctest include file with one entry per case that is not skipped.
cmake_policy(VERSION 3.20)
include(${SETTINGS})

execute_process(COMMAND ${program} --list-test-cases --reporters=xml
                OUTPUT_VARIABLE listing RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${program} --list-test-cases failed (${status}): ${errors}")
endif()

# XmlWriter escapes attributes: &lt; &amp; &quot;, and &gt; after "]]" only.
function(xml_unescape out text)
  string(REPLACE "&lt;" "<" text "${text}")
  string(REPLACE "&gt;" ">" text "${text}")
  string(REPLACE "&quot;" "\"" text "${text}")
  string(REPLACE "&apos;" "'" text "${text}")
  string(REPLACE "&amp;" "&" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

set(script "")
set(count 0)
# A ; in a name would split CMake's lists; it travels as &semicolon (a & in XML only ever starts
# &lt; &gt; &amp; &quot;) and is put back in the name.
string(REPLACE ";" "&semicolon" listing "${listing}")
# Attribute values may hold > but never " (written &quot;).
string(REGEX MATCHALL "<TestCase( +[a-z_]+=\"[^\"]*\")* */>" cases "${listing}")
foreach(element IN LISTS cases)
  if(NOT element MATCHES "name=\"([^\"]*)\"")
    message(FATAL_ERROR "${program}: no name in ${element}")
  endif()
  string(REPLACE "&semicolon" ";" name "${CMAKE_MATCH_1}")
  xml_unescape(name "${name}")
  set(suite "")
  if(element MATCHES "testsuite=\"([^\"]*)\"")
    string(REPLACE "&semicolon" ";" suite "${CMAKE_MATCH_1}")
    xml_unescape(suite "${suite}")
  endif()
  if(element MATCHES "skipped=\"true\"")
    continue()
  endif()
  # A name must pass through doctest's filter unchanged (* and ? are wildcards there) and fit in
  # the include file's [==[ ]==] quotes.
  if(name MATCHES "[*?]|]==]")
    message(FATAL_ERROR "${program}: test case \"${name}\" has * or ? in its name; "
                        "doctest_cases.cmake cannot run it alone, so please rename it")
  endif()
  # doctest's filters are comma-separated lists; \, is a comma and \\ a backslash.
  string(REPLACE "\\" "\\\\" filter "${name}")
  string(REPLACE "," "\\," filter "${filter}")
  set(case_labels ${labels})
  if(unit_suites STREQUAL "*")
    list(APPEND case_labels unit)
  elseif(unit_suites)
    set(excluded ${unit_suites})
    list(REMOVE_AT excluded 0)
    if(NOT suite IN_LIST excluded)
      list(APPEND case_labels unit)
    endif()
  endif()
  list(REMOVE_DUPLICATES case_labels)
  set(test "${target}: ${name}")
  string(APPEND script
    "add_test([==[${test}]==] [==[${program}]==] [==[--test-case=${filter}]==] --case-sensitive)\n"
    "set_tests_properties([==[${test}]==] PROPERTIES\n"
    "  LABELS [==[${case_labels}]==] COST ${cost}\n"
    "  WORKING_DIRECTORY [==[${working_directory}]==]\n"
    "  FAIL_REGULAR_EXPRESSION [==[test cases: *([02-9]|[1-9][0-9]+) \\|]==]")
  # PROPERTIES name value name value ...; each value passed whole (it may be a list).
  list(LENGTH properties n)
  set(i 0)
  while(i LESS n)
    list(GET properties ${i} property)
    math(EXPR i "${i} + 1")
    list(GET properties ${i} value)
    math(EXPR i "${i} + 1")
    string(APPEND script "\n  ${property} [==[${value}]==]")
  endwhile()
  string(APPEND script ")\n")
  math(EXPR count "${count} + 1")
endforeach()
# Every case doctest would run is registered: its own count of unskipped cases.
execute_process(COMMAND ${program} --count --reporters=xml
                OUTPUT_VARIABLE counted RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0 OR NOT counted MATCHES "unskipped=\"([0-9]+)\"")
  message(FATAL_ERROR "${program} --count failed (${status}): ${errors}")
endif()
if(count EQUAL 0 OR NOT count EQUAL CMAKE_MATCH_1)
  message(FATAL_ERROR "${program}: ${count} test cases registered, doctest counts "
                      "${CMAKE_MATCH_1}:\n${listing}")
endif()
file(WRITE ${list_file} "${script}")
