# One CMake target per layer of src/ (an OBJECT library per folder), each seeing only its own
# folder and the folders of the layers below it: gdap_layer(NAME [DEPENDS layer...] SOURCES ...)
# gives the layer an include root of its own, ${PROJECT_BINARY_DIR}/layers/NAME, holding a link to
# src/NAME and to every layer it depends on (directly or not), and nothing else. Sources include
# "folder/file.hpp" as everywhere in gdap, so an include of a layer above fails to compile
# ("No such file or directory"), which tests/layers checks. Layers are declared bottom up: a
# dependency must exist before its user. The shared and the static library are made of every
# layer's objects (gdap_layer_objects()).
#
# gdap_layer_options: what every layer compiles with (warnings, the public headers, DLPack,
# fmt and JSON, and the optional communication libraries' definitions and headers; the Zarr codecs'
# only in src/io).
add_library(gdap_layer_options INTERFACE)
target_include_directories(gdap_layer_options INTERFACE ${PROJECT_SOURCE_DIR}/include ${GDAP_DLPACK_INCLUDE_DIR})
target_compile_definitions(gdap_layer_options INTERFACE GDAP_BUILDING_LIBRARY)
target_compile_options(gdap_layer_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
target_link_libraries(gdap_layer_options INTERFACE ${GDAP_FMT} nlohmann_json::nlohmann_json)
if(GDAP_HAVE_CUDA)
  target_compile_definitions(gdap_layer_options INTERFACE GDAP_HAVE_CUDA=1)
  target_link_libraries(gdap_layer_options INTERFACE CUDA::cudart_static)
endif()
if(GDAP_HAVE_MPI)
  target_compile_definitions(gdap_layer_options INTERFACE GDAP_HAVE_MPI=1 OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  target_link_libraries(gdap_layer_options INTERFACE MPI::MPI_C)
endif()
if(GDAP_HAVE_NCCL)
  target_compile_definitions(gdap_layer_options INTERFACE GDAP_HAVE_NCCL=1)
  target_include_directories(gdap_layer_options INTERFACE ${GDAP_NCCL_INCLUDE_DIR})
endif()

function(gdap_layer name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;SOURCES" ${ARGN})
  set(target gdap_${name})
  add_library(${target} OBJECT ${ARG_SOURCES})
  target_link_libraries(${target} PUBLIC gdap_layer_options)
  set(visible ${name})
  foreach(dep IN LISTS ARG_DEPENDS)
    get_property(below GLOBAL PROPERTY gdap_layer_sees_${dep})
    if(NOT below)
      message(FATAL_ERROR "layer ${name} depends on ${dep}, which is not declared before it")
    endif()
    list(APPEND visible ${below})
    target_link_libraries(${target} PUBLIC gdap_${dep})
  endforeach()
  list(REMOVE_DUPLICATES visible)
  set_property(GLOBAL PROPERTY gdap_layer_sees_${name} ${visible})
  set(root ${PROJECT_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root})
  foreach(folder IN LISTS visible)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${folder} ${root}/${folder} SYMBOLIC)
  endforeach()
  target_include_directories(${target} PRIVATE ${root})
  set_property(GLOBAL APPEND PROPERTY gdap_layers ${target})
endfunction()

# The objects of every layer, for the libraries: $<TARGET_OBJECTS:...> of each; with TOP, those of
# layer TOP and of every layer below it (what a program running only that far links: gdap-demo).
function(gdap_layer_objects out)
  if(ARGC GREATER 1)
    get_property(folders GLOBAL PROPERTY gdap_layer_sees_${ARGV1})
    if(NOT folders)
      message(FATAL_ERROR "gdap_layer_objects: no layer ${ARGV1}")
    endif()
    list(TRANSFORM folders PREPEND gdap_ OUTPUT_VARIABLE layers)
  else()
    get_property(layers GLOBAL PROPERTY gdap_layers)
  endif()
  set(objects "")
  foreach(target IN LISTS layers)
    list(APPEND objects $<TARGET_OBJECTS:${target}>)
  endforeach()
  set(${out} ${objects} PARENT_SCOPE)
endfunction()
