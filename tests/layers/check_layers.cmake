# Runs the cases of tests/layers (cmake -P): each compiles probe.cpp with one layer's include root
# (what that layer's sources see, cmake/GdapLayers.cmake) and one include, and names the rule it
# checks. Variables: COMPILER, LAYERS (the build's layers/ folder), INCLUDE (the public headers),
# PROBE (probe.cpp).
set(cases
  # layer      include                   expected  rule
  "core|cuda/device.hpp|refused|the base layer sees nothing above it"
  "cuda|protocol/dim.hpp|refused|CUDA plumbing depends on core only"
  "maps|array/array.hpp|refused|maps sit below arrays"
  "comm|exchange/engine.hpp|refused|communicators know no engine"
  "exchange|plan/planner.hpp|refused|the engines run programs and know no planner"
  "exchange|halo/halo.hpp|refused|the engines know no halo"
  "plan|gemm/gemm.hpp|refused|redistribution is below GEMM"
  "halo|plan/redistribute.hpp|refused|halo and redistribution are siblings"
  "reduce|io/zarr_store.hpp|refused|reductions are below I/O"
  "exchange|exchange/program.hpp|compiles|a layer sees its own headers"
  "plan|exchange/program.hpp|compiles|a layer sees the layers below it"
  "gemm|cuda/copy_kernel.hpp|compiles|a layer sees the layers below it, however far")
set(failed 0)
foreach(c IN LISTS cases)
  string(REPLACE "|" ";" f "${c}")
  list(GET f 0 layer)
  list(GET f 1 header)
  list(GET f 2 expected)
  list(GET f 3 rule)
  execute_process(COMMAND ${COMPILER} -std=c++20 -fsyntax-only -I${LAYERS}/${layer} -I${INCLUDE}
                          "-DPROBE=\"${header}\"" ${PROBE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(expected STREQUAL "refused")
    string(FIND "${out}" "${header}: No such file or directory" at)
    if(rc EQUAL 0 OR at EQUAL -1)
      message(SEND_ERROR "${rule}: layer ${layer} including ${header} was not refused as missing:\n${out}")
      math(EXPR failed "${failed} + 1")
    endif()
  elseif(NOT rc EQUAL 0)
    message(SEND_ERROR "${rule}: layer ${layer} including ${header} does not compile:\n${out}")
    math(EXPR failed "${failed} + 1")
  endif()
endforeach()
list(LENGTH cases n)
message(STATUS "${n} cases, ${failed} failed")
if(failed GREATER 0)
  message(FATAL_ERROR "${failed} of ${n} layer cases failed")
endif()
