# The program's rooms keep their layers (DESIGN: "Layers"): the certification room
# (reference_pipeline/certification/) includes nothing from cli/ or label/, and label/ includes
# nothing from cli/; cli/ may include both. A quoted include must name a file of the including
# room itself (the program's include path holds cli/ and label/, so "arguments.hpp" written in
# label/ would silently find cli's), an angle include must not name <cli/...> or <label/...>,
# and neither room may name the cli namespace.
#   cmake -DSOURCE_DIR=<repository> -P tests/layers.cmake
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "layers.cmake: pass -DSOURCE_DIR=<repository>")
endif()
set(problems "")
foreach(room certification label)
  set(dir ${SOURCE_DIR}/reference_pipeline/${room})
  file(GLOB files ${dir}/*.hpp ${dir}/*.cpp)
  if(NOT files)
    string(APPEND problems "  reference_pipeline/${room}/ holds no source file\n")
  endif()
  foreach(file ${files})
    file(RELATIVE_PATH shown ${SOURCE_DIR} ${file})
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include|cli::")
    foreach(line IN LISTS lines)
      if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"")
        if(NOT EXISTS ${dir}/${CMAKE_MATCH_1})
          string(APPEND problems "  ${shown}: ${line} (not a file of ${room}/)\n")
        endif()
      elseif(line MATCHES "^[ \t]*#[ \t]*include[ \t]*<(cli|label)/")
        string(APPEND problems "  ${shown}: ${line}\n")
      elseif(line MATCHES "cli::")
        string(APPEND problems "  ${shown}: names the cli namespace: ${line}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "a room reaches above its layer:\n${problems}")
endif()
message(STATUS "layers: certification/ and label/ include nothing from above them")
