# Runs the gdap tool and checks its exit code and its output (stdout and stderr together).
# -DGDAP=<tool> -DARGS=<;-list> -DRC=<expected exit code> -DMATCH=<regex the output must match>
# Any sign of a crash or a sanitizer report fails the test whatever the exit code.
execute_process(COMMAND ${GDAP} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc EQUAL RC)
  message(FATAL_ERROR "exit code ${rc}, expected ${RC}; output:\n${all}")
endif()
if(NOT all MATCHES "${MATCH}")
  message(FATAL_ERROR "output does not match '${MATCH}':\n${all}")
endif()
if(all MATCHES "Sanitizer|runtime error:|terminate called|Segmentation fault")
  message(FATAL_ERROR "the tool reported a crash or undefined behaviour:\n${all}")
endif()
message(STATUS "exit ${rc} as expected; output:\n${all}")
