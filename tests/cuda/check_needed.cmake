# cuda.lazy_needed: every file of FILES (libgdap.so, the Python extension, the gdap tools) has readelf
# NEEDED lines, libc among them (so readelf did read it), and none names libcudart, libcublas,
# libcublasLt or libnccl: they are linked statically (the runtime) or loaded on first use.
# Usage: cmake -DFILES=a;b -P check_needed.cmake
find_program(READELF readelf REQUIRED)
list(LENGTH FILES count)
foreach(file IN LISTS FILES)
  execute_process(COMMAND ${READELF} -d ${file} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${file} failed (${rc})")
  endif()
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dynamic}")
  if(NOT needed MATCHES "libc\\.so")
    message(FATAL_ERROR "${file}: no NEEDED libc.so in readelf's output; NEEDED: ${needed}")
  endif()
  if(needed MATCHES "lib(cudart|cublas|cublasLt|nccl)\\.so")
    message(FATAL_ERROR "${file} links ${CMAKE_MATCH_0}: a build with CUDA must load where CUDA is absent; NEEDED: ${needed}")
  endif()
  message(STATUS "${file}: ${needed}")
endforeach()
message(STATUS "lazy_needed: ${count} files link no CUDA library")
