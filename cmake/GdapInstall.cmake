# Installation: headers, shared and static library, Fortran module, the CMake package
# (find_package(gdap CONFIG [COMPONENTS MPI CUDA NCCL Fortran Python]): gdap::gdap, gdap::gdap_static
# and a target per component, see cmake/gdapConfig.cmake.in) and gdap.pc. The build tree has its own
# gdapConfig.cmake, gdapTargets.cmake and gdap.pc (headers from the source tree, libraries from the
# build tree), so `-Dgdap_DIR=build` and `PKG_CONFIG_PATH=build` work without installing; the
# install-tree variants are written to build/for-install/. gdap::gdap_static is in the installed package
# only: in the build tree its link interface names this build's own targets (MPI::MPI_C, ...).
include(CMakePackageConfigHelpers)
set(_gdap_for_install ${CMAKE_CURRENT_BINARY_DIR}/for-install)

# The license travels with every install: BSD-3-Clause (LICENSE), also named by the CMake package
# (gdap_LICENSE) and by gdap.pc (License:).
install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY include/gdap DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
set(_gdap_install_targets gdap gdap_static)
if(TARGET gdap_fortran)
  list(APPEND _gdap_install_targets gdap_fortran)
  set_target_properties(gdap_fortran PROPERTIES EXPORT_NAME fortran)
  target_include_directories(gdap_fortran PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/gdap/fortran>)
  install(DIRECTORY ${CMAKE_BINARY_DIR}/bindings/fortran/mod/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gdap/fortran)
endif()
install(TARGETS ${_gdap_install_targets} EXPORT gdapTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT gdapTargets NAMESPACE gdap:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gdap)

set(GDAP_CONFIG_HAVE_CUDA ${GDAP_HAVE_CUDA})
set(GDAP_CONFIG_HAVE_NCCL ${GDAP_HAVE_NCCL})
set(GDAP_CONFIG_HAVE_MPI ${GDAP_HAVE_MPI})
set(GDAP_CONFIG_HAVE_PYTHON ${GDAP_HAVE_PYTHON})
set(GDAP_CONFIG_PYTHON_DIR "${GDAP_PYTHON_INSTALL_DIR}")
set(GDAP_CONFIG_NCCL_LIBRARY_DIR "")
if(GDAP_NCCL_LIBRARY)
  get_filename_component(GDAP_CONFIG_NCCL_LIBRARY_DIR "${GDAP_NCCL_LIBRARY}" DIRECTORY)
endif()
configure_package_config_file(cmake/gdapConfig.cmake.in ${_gdap_for_install}/gdapConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gdap)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gdapConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${_gdap_for_install}/gdapConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/gdapConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gdap)

# The build tree's package: its prefix is the build directory, the Python package under bindings/python.
list(REMOVE_ITEM _gdap_install_targets gdap_static)
export(TARGETS ${_gdap_install_targets} NAMESPACE gdap:: FILE ${CMAKE_CURRENT_BINARY_DIR}/gdapTargets.cmake)
set(GDAP_CONFIG_PYTHON_DIR "bindings/python")
configure_package_config_file(cmake/gdapConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/gdapConfig.cmake
  INSTALL_DESTINATION ${CMAKE_CURRENT_BINARY_DIR} INSTALL_PREFIX ${CMAKE_CURRENT_BINARY_DIR})

# Relocatable: the prefix is found from the .pc file's own place, so `cmake --install --prefix` works.
file(RELATIVE_PATH GDAP_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
# pkg-config --static: libgdap.a's private dependencies (GDAP_LINK_FILES) as linker arguments.
set(GDAP_PC_LIBS_PRIVATE "")
foreach(item ${GDAP_LINK_FILES})
  if(item MATCHES "^[-/]")
    string(APPEND GDAP_PC_LIBS_PRIVATE " ${item}")
  else()
    string(APPEND GDAP_PC_LIBS_PRIVATE " -l${item}")
  endif()
endforeach()
string(STRIP "${GDAP_PC_LIBS_PRIVATE}" GDAP_PC_LIBS_PRIVATE)
set(GDAP_PC_PREFIX "\${pcfiledir}/${GDAP_PC_TO_PREFIX}")
set(GDAP_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
set(GDAP_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
configure_file(cmake/gdap.pc.in ${_gdap_for_install}/gdap.pc @ONLY)
install(FILES ${_gdap_for_install}/gdap.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# The build tree's gdap.pc: libgdap from the build directory, the headers from the source tree.
set(GDAP_PC_PREFIX "${CMAKE_CURRENT_BINARY_DIR}")
set(GDAP_PC_LIBDIR "\${prefix}")
set(GDAP_PC_INCLUDEDIR "${CMAKE_CURRENT_SOURCE_DIR}/include")
configure_file(cmake/gdap.pc.in ${CMAKE_CURRENT_BINARY_DIR}/gdap.pc @ONLY)
