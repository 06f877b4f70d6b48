# check_layers.cmake — the dependency rule of docs/architecture.md, checked.
#
#   cmake -DLAYERS=<build>/layers.cmake -DROOT=<source dir> [-DSTAMP=file] -P check_layers.cmake
#
# LAYERS (written by the top-level CMakeLists.txt from every faultline_library
# and its DEPS) gives, for each folder of src/, the folders its code may
# include ("FAULTLINE_ALLOWED_<dir>"), and the folder owning each public
# header of include/faultline/ ("FAULTLINE_OWNER_<header>"). Every
# `#include "dir/..."` of src/<dir>/ and include/faultline/ must name an
# allowed folder; unit tests (*_test.cc) may also use tests/harness/.
# Angle-bracket includes (the system, libraries) are not checked.
cmake_minimum_required(VERSION 3.25)
include(${LAYERS})

set(errors "")

# check_file(file layer): every quoted include of file against layer's list.
function(check_file file layer)
  set(allowed ${FAULTLINE_ALLOWED_${layer}})
  if(file MATCHES "_test\\.cc$")
    list(APPEND allowed harness)
  endif()
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  set(n 0)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
    if(inc MATCHES "^faultline/(.+)$")
      set(owner ${FAULTLINE_OWNER_${CMAKE_MATCH_1}})
      if(NOT owner)
        string(APPEND errors "${file}: includes ${inc}, which no layer owns\n")
        continue()
      endif()
    elseif(inc MATCHES "^([^/]+)/")
      set(owner ${CMAKE_MATCH_1})
    else()
      string(APPEND errors "${file}: #include \"${inc}\" names no folder (write \"${layer}/${inc}\")\n")
      continue()
    endif()
    list(FIND allowed ${owner} found)
    if(found EQUAL -1)
      string(REPLACE ";" ", " list "${allowed}")
      string(APPEND errors
             "${file}: includes ${inc} (${owner}/), but ${layer}/ may include only ${list}\n")
    endif()
  endforeach()
  set(errors "${errors}" PARENT_SCOPE)
endfunction()

foreach(layer IN LISTS FAULTLINE_LAYER_DIRS)
  file(GLOB files ${ROOT}/src/${layer}/*.cc ${ROOT}/src/${layer}/*.h)
  foreach(f IN LISTS files)
    check_file(${f} ${layer})
  endforeach()
endforeach()
file(GLOB public ${ROOT}/include/faultline/*.h)
foreach(f IN LISTS public)
  get_filename_component(h ${f} NAME)
  if(NOT FAULTLINE_OWNER_${h})
    string(APPEND errors "${f}: a public header no layer owns (faultline_library PUBLIC_HEADERS)\n")
  else()
    check_file(${f} ${FAULTLINE_OWNER_${h}})
  endif()
endforeach()
# A folder of src/ that is no layer has code nobody checks.
file(GLOB dirs LIST_DIRECTORIES true ${ROOT}/src/*)
foreach(d IN LISTS dirs)
  get_filename_component(name ${d} NAME)
  if(IS_DIRECTORY ${d} AND NOT name IN_LIST FAULTLINE_LAYER_DIRS)
    string(APPEND errors "${d}: a folder of src/ with no faultline_library\n")
  endif()
endforeach()

if(errors)
  message(FATAL_ERROR "layering: wrong #include (the DEPS of src/*/CMakeLists.txt are the rule)\n${errors}")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
