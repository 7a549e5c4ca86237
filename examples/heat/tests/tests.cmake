# The example's checks (ctest), one line per case, each naming what it checks. A case passes only
# when every solver it runs exits 0 having printed "heat: checks passed": the field matches the
# exact discrete solution (float64 to 1e-10) and the all-reduced residual its prediction. Restart
# and same-field cases also compare fingerprints (bit-for-bit equality of the whole field).
# Label host: runs anywhere; gpu: needs CUDA devices (@GPUS@ is their number, at most 4).
set(_t ${CMAKE_CURRENT_SOURCE_DIR}/tests)
set(_mpiexec "")
if(gdap_MPI_FOUND)
  set(_mpiexec ${MPIEXEC_EXECUTABLE})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _v ERROR_QUIET)
  if(_v MATCHES "Open MPI|OpenRTE")  # more ranks than cores here, and root in containers
    list(APPEND _mpiexec --oversubscribe)
    execute_process(COMMAND id -u OUTPUT_VARIABLE _uid OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(_uid STREQUAL "0")
      list(APPEND _mpiexec --allow-run-as-root)
    endif()
  endif()
endif()
find_package(Python3 COMPONENTS Interpreter)

# heat_case(NAME LABEL COMMAND...): the host overlap's second thread per rank must not spin on
# machines with fewer cores than threads (OMP_WAIT_POLICY=passive).
function(heat_case name label)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "heat;${label}" TIMEOUT 300
                       ENVIRONMENT "OMP_WAIT_POLICY=passive;PYTHONPATH=${gdap_PYTHON_DIR}")
endfunction()

set(C $<TARGET_FILE:heat>)
set(check ${_t}/check.sh)

# C driver, in-process group (ranks are OpenMP threads), host memory.
heat_case(c.group.2d_blocks_fixed_ends host ${check} ${C} --dims 48x40 --grid 2x2 --steps 200 --residual-every 20)
heat_case(c.group.2d_rows_periodic host ${check} ${C} --dims 48x40 --grid 4x1 --periodic 0 --steps 200)
heat_case(c.group.2d_columns_both_periodic host ${check} ${C} --dims 40x48 --grid 1x3 --periodic 0,1 --mode 2x1 --steps 150)
heat_case(c.group.2d_one_rank_no_halo host ${check} ${C} --dims 33x31 --grid 1x1 --steps 100)
heat_case(c.group.2d_float32 host ${check} ${C} --dims 48x40 --grid 2x2 --dtype float32 --steps 60)
heat_case(c.group.2d_halo_after_step host ${check} ${C} --dims 48x40 --grid 2x2 --periodic 1 --no-overlap)
heat_case(c.group.3d_slabs_one_periodic host ${check} ${C} --dims 20x18x16 --grid 2x1x2 --periodic 2 --steps 120)
heat_case(c.group.3d_grid_2x2x2_all_periodic host ${check} ${C} --dims 16x16x16 --grid 2x2x2 --periodic 0,1,2 --steps 60)
heat_case(c.group.3d_float32 host ${check} ${C} --dims 20x18x16 --grid 1x2x2 --dtype float32 --steps 40)
# Restarts from a Zarr checkpoint onto another process grid (and engine) end where the straight run does.
heat_case(c.restart.2d_2x2_to_1x3 host ${_t}/restart.sh ${CMAKE_CURRENT_BINARY_DIR}/restart_c2d --
          ${C} --dims 48x40 --grid 2x2 --periodic 1 --steps 200 --
          ${C} --dims 48x40 --grid 2x2 --periodic 1 --steps 60 --checkpoint-every 60 --checkpoint-dir @DIR@ --
          ${C} --restart @STORE@ --grid 1x3 --steps 200)
if(gdap_MPI_FOUND)
  heat_case(c.mpi.2d_np4 host ${check} ${_mpiexec} -np 4 ${C} --comm mpi --dims 48x40 --grid 2x2 --periodic 1 --steps 200)
  heat_case(c.mpi.3d_np4 host ${check} ${_mpiexec} -np 4 ${C} --comm mpi --dims 20x18x16 --grid 1x2x2 --periodic 1 --steps 120)
  heat_case(c.restart.3d_mpi_to_group host ${_t}/restart.sh ${CMAKE_CURRENT_BINARY_DIR}/restart_c3d --
            ${C} --dims 20x18x16 --grid 1x1x1 --periodic 0 --steps 120 --
            ${_mpiexec} -np 4 ${C} --comm mpi --dims 20x18x16 --grid 2x2x1 --periodic 0 --steps 70 --checkpoint-every 35
              --checkpoint-dir @DIR@ --
            ${C} --restart @STORE@ --grid 1x1x3 --steps 120)
endif()

if(TARGET heat_f)
  set(F $<TARGET_FILE:heat_f>)
  # Fortran driver, in-process group of OpenMP threads, host memory.
  heat_case(f.group.2d_blocks_periodic host ${check} ${F} --dims 48x40 --grid 2x2 --periodic 1 --steps 200)
  heat_case(f.group.2d_float32 host ${check} ${F} --dims 48x40 --grid 3x1 --dtype float32 --steps 60)
  heat_case(f.group.3d_slabs_one_periodic host ${check} ${F} --dims 20x18x16 --grid 2x1x2 --periodic 2 --steps 120)
  heat_case(f.restart.2d_2x2_to_4x1 host ${_t}/restart.sh ${CMAKE_CURRENT_BINARY_DIR}/restart_f2d --
            ${F} --dims 48x40 --grid 2x2 --steps 150 --
            ${F} --dims 48x40 --grid 2x2 --steps 50 --checkpoint-every 25 --checkpoint-dir @DIR@ --
            ${F} --restart @STORE@ --grid 4x1 --steps 150)
  # The two drivers solve the same problem alike: one field, bit for bit; and restart from each other.
  heat_case(same.c_and_fortran_2d host ${_t}/same.sh --
            ${C} --dims 48x40 --grid 2x2 --periodic 0 --steps 120 -- ${F} --dims 48x40 --grid 1x4 --periodic 0 --steps 120)
  heat_case(c.restart.from_fortran_checkpoint host ${_t}/restart.sh ${CMAKE_CURRENT_BINARY_DIR}/restart_fc --
            ${C} --dims 30x24 --grid 2x1 --periodic 1 --steps 100 --
            ${F} --dims 30x24 --grid 2x2 --periodic 1 --steps 40 --checkpoint-every 40 --checkpoint-dir @DIR@ --
            ${C} --restart @STORE@ --grid 1x2 --steps 100)
  if(gdap_MPI_FOUND)
    heat_case(f.mpi.2d_np4 host ${check} ${_mpiexec} -np 4 ${F} --comm mpi --dims 48x40 --grid 4x1 --steps 200)
    heat_case(f.mpi.3d_np4 host ${check} ${_mpiexec} -np 4 ${F} --comm mpi --dims 20x18x16 --grid 2x2x1 --periodic 0,2 --steps 120)
    heat_case(f.restart.3d_mpi_to_group host ${_t}/restart.sh ${CMAKE_CURRENT_BINARY_DIR}/restart_f3d --
              ${F} --dims 20x18x16 --grid 1x2x1 --periodic 2 --steps 100 --
              ${_mpiexec} -np 4 ${F} --comm mpi --dims 20x18x16 --grid 1x2x2 --periodic 2 --steps 50 --checkpoint-every 50
                --checkpoint-dir @DIR@ --
              ${F} --restart @STORE@ --grid 3x1x1 --steps 100)
    heat_case(same.c_mpi_and_fortran_mpi_3d host ${_t}/same.sh --
              ${_mpiexec} -np 4 ${C} --comm mpi --dims 20x18x16 --grid 4x1x1 --periodic 1 --steps 80 --
              ${_mpiexec} -np 4 ${F} --comm mpi --dims 20x18x16 --grid 1x2x2 --periodic 1 --steps 80)
  endif()
endif()

# The Python companion attaches to the running solver's sections (IPC) and draws them; then the checkpoint.
if(gdap_Python_FOUND AND Python3_Interpreter_FOUND)
  heat_case(python.companion_attach_and_checkpoint host ${_t}/companion.sh ${Python3_EXECUTABLE}
            ${CMAKE_CURRENT_SOURCE_DIR}/python/heat_view.py ${CMAKE_CURRENT_BINARY_DIR}/companion
            ${C} --dims 64x48 --grid 2x2 --periodic 1 --steps 200 --residual-every 10 --checkpoint-every 200)
endif()

# The same checks on GPUs: one GPU per rank (ranks share a GPU on a machine with fewer).
if(gdap_CUDA_FOUND)
  heat_case(gpu.c.group.2d_periodic gpu ${check} ${C} --device cuda --ranks @GPUS@ --dims 96x80 --periodic 0 --steps 200)
  heat_case(gpu.c.group.3d_float32 gpu ${check} ${C} --device cuda --ranks 4 --dims 24x20x18 --periodic 2 --dtype float32 --steps 40)
  if(gdap_NCCL_FOUND)
    heat_case(gpu.c.nccl.2d_rows gpu ${check} ${C} --device cuda --comm nccl --ranks @GPUS@ --dims 96x80 --periodic 1 --steps 200)
    heat_case(gpu.c.nccl.3d_all_periodic gpu ${check} ${C} --device cuda --comm nccl --ranks @GPUS@ --dims 40x36x32
              --periodic 0,1,2 --steps 120)
    heat_case(gpu.c.nccl.2d_halo_after_step gpu ${check} ${C} --device cuda --comm nccl --ranks @GPUS@ --dims 96x80 --periodic 1
              --no-overlap --steps 100)
    heat_case(gpu.c.restart.nccl_to_group gpu ${_t}/restart.sh ${CMAKE_CURRENT_BINARY_DIR}/restart_gpu --
              ${C} --device cuda --comm nccl --ranks @GPUS@ --dims 64x48x40 --periodic 1 --steps 100 --
              ${C} --device cuda --comm nccl --ranks @GPUS@ --dims 64x48x40 --periodic 1 --steps 50 --checkpoint-every 50
                --checkpoint-dir @DIR@ --
              ${C} --device cuda --ranks 3 --restart @STORE@ --steps 100)
    if(gdap_MPI_FOUND)
      heat_case(gpu.c.mpi_nccl.2d gpu ${check} ${_mpiexec} -np @GPUS@ ${C} --comm mpi --device cuda --dims 96x80 --periodic 0,1
                --steps 200)
    endif()
  endif()
  if(gdap_Python_FOUND AND Python3_Interpreter_FOUND)
    heat_case(gpu.python.companion_attach_cuda_ipc gpu ${_t}/companion.sh ${Python3_EXECUTABLE}
              ${CMAKE_CURRENT_SOURCE_DIR}/python/heat_view.py ${CMAKE_CURRENT_BINARY_DIR}/companion_gpu
              ${C} --device cuda --ranks @GPUS@ --dims 128x96 --periodic 1 --steps 200 --checkpoint-every 200)
  endif()
endif()
