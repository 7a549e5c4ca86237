/* The C side of tests/fortran/mpi_fortran.f90: given a gdap_array the Fortran program made over its
 * own array, writes each local element's global position (1000 * row + column) through gdap's view
 * of the memory: pointer, strides and local_to_global, all from the C API. Returns the number of
 * elements written, or -1 (with gdap_last_error) when a call fails. */
#include <gdap/gdap.h>

#include <stdint.h>

int64_t c_write_globals(const gdap_array* array) {
  int64_t shape[2], strides[2], local[2], global[2];
  void* data = NULL;
  if (gdap_array_shape(shape, array) != GDAP_SUCCESS || gdap_array_strides(strides, array) != GDAP_SUCCESS ||
      gdap_array_data(&data, array) != GDAP_SUCCESS) {
    return -1;
  }
  double* at = (double*)data;
  for (local[0] = 0; local[0] < shape[0]; ++local[0]) {
    for (local[1] = 0; local[1] < shape[1]; ++local[1]) {
      if (gdap_array_local_to_global(global, array, local) != GDAP_SUCCESS) return -1;
      at[local[0] * strides[0] + local[1] * strides[1]] = (double)(1000 * global[0] + global[1]);
    }
  }
  return shape[0] * shape[1];
}
