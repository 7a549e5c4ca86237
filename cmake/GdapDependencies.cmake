# Finds gdap's dependencies. Required: fmt, nlohmann-json and a DLPack >= 1.0 header.
# Optional (AUTO/ON/OFF): CUDA with cuBLAS, NCCL, MPI, and the Zarr codecs' zstd, blosc and zlib.

set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
# fmt is used header-only: nothing of it is linked into or exported from libgdap. OFF links the
# shared libfmt instead, and every source compiles about a second faster: tools/demo.sh's build of
# gdap-demo takes that (a program, not a library anyone links).
option(GDAP_FMT_HEADER_ONLY "Use fmt header-only (OFF: link libfmt.so, for a faster build of programs)" ON)
set(GDAP_FMT fmt::fmt-header-only)
if(NOT GDAP_FMT_HEADER_ONLY)
  set(GDAP_FMT fmt::fmt)
endif()
find_package(nlohmann_json 3.10 REQUIRED)

# DLPack >= 1.0 (DLManagedTensorVersioned). Debian's libdlpack-dev is 0.6, too old, so by default
# we take the dlpack.h that the apache-tvm-ffi Python package ships (pip install apache-tvm-ffi);
# GDAP_DLPACK_INCLUDE_DIR overrides. See docs/dependencies.md.
set(GDAP_DLPACK_INCLUDE_DIR "" CACHE PATH "Directory holding dlpack/dlpack.h (DLPack >= 1.0)")
if(NOT GDAP_DLPACK_INCLUDE_DIR)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c
        "import importlib.util,os; s=importlib.util.find_spec('tvm_ffi'); print(os.path.join(os.path.dirname(s.origin),'include') if s else '')"
      OUTPUT_VARIABLE _gdap_tvm_include OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_gdap_tvm_include AND EXISTS "${_gdap_tvm_include}/dlpack/dlpack.h")
      set(GDAP_DLPACK_INCLUDE_DIR "${_gdap_tvm_include}" CACHE PATH "" FORCE)
    endif()
  endif()
endif()
# tools/deps.sh unpacks the same wheel into .deps/ where pip cannot install (PEP 668 systems).
if(NOT GDAP_DLPACK_INCLUDE_DIR AND EXISTS "${PROJECT_SOURCE_DIR}/.deps/tvm_ffi/include/dlpack/dlpack.h")
  set(GDAP_DLPACK_INCLUDE_DIR "${PROJECT_SOURCE_DIR}/.deps/tvm_ffi/include" CACHE PATH "" FORCE)
endif()
if(NOT GDAP_DLPACK_INCLUDE_DIR OR NOT EXISTS "${GDAP_DLPACK_INCLUDE_DIR}/dlpack/dlpack.h")
  message(FATAL_ERROR
    "gdap needs a DLPack >= 1.0 dlpack.h: run tools/deps.sh (or 'python3 -m pip install apache-tvm-ffi') "
    "or pass -DGDAP_DLPACK_INCLUDE_DIR=<dir holding dlpack/dlpack.h>")
endif()
file(STRINGS "${GDAP_DLPACK_INCLUDE_DIR}/dlpack/dlpack.h" _gdap_dlpack_major REGEX "#define DLPACK_MAJOR_VERSION")
string(REGEX MATCH "[0-9]+" _gdap_dlpack_major "${_gdap_dlpack_major}")
if(NOT _gdap_dlpack_major OR _gdap_dlpack_major LESS 1)
  message(FATAL_ERROR "${GDAP_DLPACK_INCLUDE_DIR}/dlpack/dlpack.h is DLPack major '${_gdap_dlpack_major}'; gdap needs >= 1")
endif()

# CUDA (+ cuBLAS).
set(GDAP_HAVE_CUDA OFF)
if(NOT GDAP_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES ${GDAP_CUDA_ARCHITECTURES})
    enable_language(CUDA)
    # CMake 3.25 has no CUDA20 flags for nvcc 13; kernels are written in C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(GDAP_HAVE_CUDA ON)
    # cuBLAS is loaded when first needed (src/cuda/lazy_cublas.cpp), by the name its major version
    # gives, else from the toolkit's directory.
    set(GDAP_CUBLAS_SONAME "libcublas.so.${CUDAToolkit_VERSION_MAJOR}")
    set(GDAP_CUBLAS_FALLBACK "${CUDAToolkit_LIBRARY_DIR}/${GDAP_CUBLAS_SONAME}")
  elseif(GDAP_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GDAP_WITH_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

# NCCL (needs CUDA): its header; libgdap does not link the library but loads it when first needed
# (src/cuda/lazy_nccl.cpp), by the name nccl.h's major version gives, else from the directory found
# here. GDAP_NCCL_LIBRARY is for the programs that call NCCL themselves (tests, benchmarks).
set(GDAP_HAVE_NCCL OFF)
if(GDAP_HAVE_CUDA AND NOT GDAP_WITH_NCCL STREQUAL "OFF")
  find_path(GDAP_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
  find_library(GDAP_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
  if(GDAP_NCCL_INCLUDE_DIR AND GDAP_NCCL_LIBRARY)
    set(GDAP_HAVE_NCCL ON)
    file(STRINGS "${GDAP_NCCL_INCLUDE_DIR}/nccl.h" _gdap_nccl_major REGEX "^#define NCCL_MAJOR ")
    string(REGEX MATCH "[0-9]+" _gdap_nccl_major "${_gdap_nccl_major}")
    set(GDAP_NCCL_SONAME "libnccl.so.${_gdap_nccl_major}")
    get_filename_component(_gdap_nccl_dir "${GDAP_NCCL_LIBRARY}" DIRECTORY)
    set(GDAP_NCCL_FALLBACK "${_gdap_nccl_dir}/${GDAP_NCCL_SONAME}")
  endif()
endif()
if(GDAP_WITH_NCCL STREQUAL "ON" AND NOT GDAP_HAVE_NCCL)
  message(FATAL_ERROR "GDAP_WITH_NCCL=ON but NCCL (with CUDA) was not found")
endif()

# The Zarr codecs' libraries, each optional: zstd (libzstd-dev), blosc (c-blosc 1, libblosc-dev) and
# zlib (zlib1g-dev, the gzip codec). Without one, stores that use its codec are refused by name
# (GDAP_ERR_UNSUPPORTED) and gdap_zarr_save cannot write it.
foreach(_codec ZSTD BLOSC ZLIB)
  set(GDAP_HAVE_${_codec} OFF)
  if(NOT GDAP_WITH_${_codec} STREQUAL "OFF")
    set(_header zstd.h)
    set(_library zstd)
    if(_codec STREQUAL "BLOSC")
      set(_header blosc.h)
      set(_library blosc)
    elseif(_codec STREQUAL "ZLIB")
      set(_header zlib.h)
      set(_library z)
    endif()
    find_path(GDAP_${_codec}_INCLUDE_DIR ${_header})
    find_library(GDAP_${_codec}_LIBRARY ${_library})
    if(GDAP_${_codec}_INCLUDE_DIR AND GDAP_${_codec}_LIBRARY)
      set(GDAP_HAVE_${_codec} ON)
    elseif(GDAP_WITH_${_codec} STREQUAL "ON")
      message(FATAL_ERROR "GDAP_WITH_${_codec}=ON but ${_header} / lib${_library} was not found")
    endif()
  endif()
endforeach()

# MPI.
set(GDAP_HAVE_MPI OFF)
if(NOT GDAP_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C CXX QUIET)
  if(MPI_FOUND)
    set(GDAP_HAVE_MPI ON)
  elseif(GDAP_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "GDAP_WITH_MPI=ON but MPI was not found")
  endif()
endif()

# Fortran (the ISO_C_BINDING module).
set(GDAP_HAVE_FORTRAN OFF)
if(NOT GDAP_WITH_FORTRAN STREQUAL "OFF")
  include(CheckLanguage)
  check_language(Fortran)
  if(CMAKE_Fortran_COMPILER)
    enable_language(Fortran)
    set(GDAP_HAVE_FORTRAN ON)
  elseif(GDAP_WITH_FORTRAN STREQUAL "ON")
    message(FATAL_ERROR "GDAP_WITH_FORTRAN=ON but no Fortran compiler was found")
  endif()
endif()
