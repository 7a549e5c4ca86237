# Decides whether the Python binding is built (GDAP_WITH_PYTHON: AUTO, ON or OFF) and sets
# GDAP_HAVE_PYTHON. It needs a Python 3 interpreter with its development headers (the
# Development.Module component: an extension module, no libpython link), NumPy importable by that
# interpreter (the package's run-time dependency; its C headers are not used) and SWIG >= 4.0
# (the distribution's swig package or the `swig` wheel from PyPI, whose launcher is on PATH).
# Included from the top-level CMakeLists.txt, after GdapDependencies.
set(GDAP_HAVE_PYTHON OFF)
if(NOT GDAP_WITH_PYTHON STREQUAL "OFF")
  set(_gdap_python_missing "")
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(NOT Python3_Interpreter_FOUND OR NOT Python3_Development.Module_FOUND)
    list(APPEND _gdap_python_missing "Python 3 interpreter and headers (python3-dev)")
  elseif(NOT SKBUILD)  # pip installs NumPy as the package's dependency, after the build
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import numpy; print(numpy.__version__)"
                    OUTPUT_VARIABLE GDAP_NUMPY_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _gdap_numpy_rc ERROR_QUIET)
    if(NOT _gdap_numpy_rc EQUAL 0)
      list(APPEND _gdap_python_missing "NumPy for ${Python3_EXECUTABLE}")
    endif()
  endif()
  # The swig wheel installs its launcher next to the interpreter; look there too.
  if(Python3_EXECUTABLE)
    get_filename_component(_gdap_python_bin "${Python3_EXECUTABLE}" DIRECTORY)
    list(APPEND CMAKE_PROGRAM_PATH "${_gdap_python_bin}")
  endif()
  find_package(SWIG 4.0 COMPONENTS python QUIET)
  if(NOT SWIG_FOUND)
    list(APPEND _gdap_python_missing "SWIG >= 4.0 (apt swig, or pip install swig)")
  endif()
  if(_gdap_python_missing)
    if(GDAP_WITH_PYTHON STREQUAL "ON")
      message(FATAL_ERROR "GDAP_WITH_PYTHON=ON but these were not found: ${_gdap_python_missing}")
    endif()
    message(STATUS "gdap: Python binding off; missing: ${_gdap_python_missing}")
  else()
    set(GDAP_HAVE_PYTHON ON)
    message(STATUS "gdap: Python binding with ${Python3_EXECUTABLE} (${Python3_VERSION}), "
                   "NumPy ${GDAP_NUMPY_VERSION}, SWIG ${SWIG_VERSION}")
  endif()
endif()
