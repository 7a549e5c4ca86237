/* The 0.1 names that 0.2 renamed (gdap.h, "Deprecated names") still work for their one release, with
 * the 0.1 parameter order: each case below writes or reads through an old name and checks the result
 * through the new one (one rank of an in-process group, files in the working directory). The
 * header's GDAP_DEPRECATED makes compilers warn at every use, which this file silences; the test
 * c.deprecated_warns checks that the warning is there. */
#include <gdap/gdap.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

static int failures = 0;
#define EXPECT(rule, cond) do { if (!(cond)) { printf("FAIL line %d: %s (%s)\n", __LINE__, rule, gdap_last_error()); \
  ++failures; } } while (0)

/* The bytes of a file, up to `capacity`; -1 if it cannot be read. */
static long read_file(const char* path, char* buffer, long capacity) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return -1;
  long n = (long)fread(buffer, 1, (size_t)capacity, f);
  fclose(f);
  return n;
}

int main(void) {
  gdap_comm* comm = NULL;
  gdap_dim dim = GDAP_DIM_INIT;
  gdap_array *section = NULL, *back = NULL, *again = NULL;
  const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
  const gdap_device cpu = {GDAP_DEVICE_CPU, 0};
  double* data = NULL;
  EXPECT("setup", gdap_comm_create_group(&comm, 1) == GDAP_SUCCESS);
  EXPECT("setup", gdap_dim_set_block(&dim, 6, 1, 0, 0, 6) == GDAP_SUCCESS);
  EXPECT("setup", gdap_array_create(&section, f64, cpu, &dim, 1) == GDAP_SUCCESS);
  EXPECT("setup", gdap_array_data((void**)&data, section) == GDAP_SUCCESS);
  for (int i = 0; i < 6; ++i) data[i] = 1.5 * i;

  /* gdap_save_dnpy writes the file gdap_dnpy_save writes. */
  static char old_bytes[4096], new_bytes[4096];
  EXPECT("gdap_save_dnpy is gdap_dnpy_save", gdap_save_dnpy(comm, section, "deprecated_old") == GDAP_SUCCESS);
  EXPECT("gdap_save_dnpy is gdap_dnpy_save", gdap_dnpy_save(comm, section, "deprecated_new") == GDAP_SUCCESS);
  long n_old = read_file("deprecated_old_0.dnpy", old_bytes, sizeof old_bytes);
  long n_new = read_file("deprecated_new_0.dnpy", new_bytes, sizeof new_bytes);
  EXPECT("gdap_save_dnpy is gdap_dnpy_save", n_old > 0 && n_old == n_new && memcmp(old_bytes, new_bytes, (size_t)n_old) == 0);

  /* gdap_load_dnpy(comm, &out, ...) reads what gdap_dnpy_load(&out, comm, ...) reads. */
  double* got = NULL;
  EXPECT("gdap_load_dnpy takes out second", gdap_load_dnpy(comm, &back, "deprecated_new", cpu) == GDAP_SUCCESS);
  EXPECT("gdap_load_dnpy takes out second", back != NULL && gdap_array_data((void**)&got, back) == GDAP_SUCCESS &&
                                                memcmp(got, data, 6 * sizeof(double)) == 0);

  /* gdap_save_zarr / gdap_load_zarr are gdap_zarr_save / gdap_zarr_load. */
  gdap_map* map = NULL;
  gdap_zarr_options options = GDAP_ZARR_OPTIONS_INIT;
  options.overwrite = 1;
  EXPECT("setup", gdap_map_create(&map, 1, 1, &dim) == GDAP_SUCCESS);
  EXPECT("gdap_save_zarr is gdap_zarr_save", gdap_save_zarr(comm, map, section, "deprecated.zarr", &options) == GDAP_SUCCESS);
  EXPECT("setup", gdap_array_create(&again, f64, cpu, &dim, 1) == GDAP_SUCCESS);
  EXPECT("gdap_load_zarr is gdap_zarr_load", gdap_load_zarr(comm, map, again, "deprecated.zarr") == GDAP_SUCCESS);
  EXPECT("gdap_load_zarr is gdap_zarr_load", gdap_array_data((void**)&got, again) == GDAP_SUCCESS &&
                                                 memcmp(got, data, 6 * sizeof(double)) == 0);

  /* gdap_zarr_shape(path, &ndim, shape, capacity, &dtype) answers as gdap_zarr_shape_read, refusals too. */
  int64_t ndim = -1, shape[2] = {-1, -1}, ndim_new = -1, shape_new[2] = {-1, -1};
  gdap_dtype dtype = {0, 0, 0}, dtype_new = {0, 0, 0};
  EXPECT("gdap_zarr_shape is gdap_zarr_shape_read", gdap_zarr_shape("deprecated.zarr", &ndim, shape, 2, &dtype) == GDAP_SUCCESS);
  EXPECT("gdap_zarr_shape is gdap_zarr_shape_read",
         gdap_zarr_shape_read(shape_new, &ndim_new, &dtype_new, "deprecated.zarr", 2) == GDAP_SUCCESS);
  EXPECT("gdap_zarr_shape is gdap_zarr_shape_read", ndim == 1 && ndim_new == 1 && shape[0] == 6 && shape_new[0] == 6 &&
                                                        dtype.bits == 64 && dtype_new.bits == 64);
  ndim = -1;
  EXPECT("gdap_zarr_shape refuses as gdap_zarr_shape_read",
         gdap_zarr_shape("deprecated.zarr", &ndim, NULL, 0, NULL) == GDAP_ERR_BUFFER_TOO_SMALL && ndim == 1);

  gdap_map_destroy(map);
  gdap_array_destroy(again);
  gdap_array_destroy(back);
  gdap_array_destroy(section);
  gdap_comm_destroy(comm);
  printf("deprecated names: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
