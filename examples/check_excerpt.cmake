# cmake -D SOURCE=file.cpp -D DOC=doc.md -D MARKER=text -P check_excerpt.cmake
# Fails unless DOC holds, verbatim, the lines of SOURCE between its two lines that end with
# MARKER, taken out of main()'s two-space indent: a snippet in the docs that no longer matches
# the example the tests run is a failure, not a drift.
file(READ "${SOURCE}" source)
file(READ "${DOC}" doc)
string(FIND "${source}" "${MARKER}\n" first)
if(first EQUAL -1)
  message(FATAL_ERROR "${SOURCE}: no line ending with ${MARKER}")
endif()
string(LENGTH "${MARKER}\n" marker_length)
math(EXPR start "${first} + ${marker_length}")
string(SUBSTRING "${source}" ${start} -1 rest)
string(FIND "${rest}" "${MARKER}\n" second)
if(second EQUAL -1)
  message(FATAL_ERROR "${SOURCE}: no second line ending with ${MARKER}")
endif()
string(SUBSTRING "${rest}" 0 ${second} excerpt)
string(REGEX REPLACE "[ ]*// $" "" excerpt "${excerpt}")  # the closing marker's indent
string(REGEX REPLACE "(^|\n)  " "\\1" excerpt "${excerpt}")
string(FIND "${doc}" "${excerpt}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${DOC} does not show the excerpt of ${SOURCE} between its '${MARKER}' "
                      "lines; paste it again:\n${excerpt}")
endif()
