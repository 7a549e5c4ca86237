/* Two ranks share a 1-d array of 10 doubles in blocks: describe rank 1's section, check it,
 * let gdap allocate it, and ask the global map who owns element 7.
 * Build: cc hello_gdap.c $(pkg-config --cflags --libs gdap) */
#include <gdap/gdap.h>
#include <stdio.h>

#define CHECK(call) do { gdap_status s_ = (call); if (s_ != GDAP_SUCCESS) { \
  fprintf(stderr, "%s: %s\n", gdap_status_string(s_), gdap_last_error()); return 1; } } while (0)

int main(void) {
  gdap_dim dims[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};  /* rank 0's and rank 1's dictionaries */
  CHECK(gdap_dim_set_block(&dims[0], 10, 2, 0, 0, 5));  /* size, grid size, grid rank, start, stop */
  CHECK(gdap_dim_set_block(&dims[1], 10, 2, 1, 5, 10));
  CHECK(gdap_dim_validate(&dims[1], 0, 5));               /* per process, against a buffer of 5 */

  gdap_array* section = NULL;                             /* rank 1's local section */
  gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
  gdap_device cpu = {GDAP_DEVICE_CPU, 0};
  CHECK(gdap_array_create(&section, f64, cpu, &dims[1], 1));

  gdap_map* map = NULL;                                   /* every rank's view, checked together */
  int64_t global = 7, owner = -1, local = -1;
  CHECK(gdap_map_create(&map, 2, 1, dims));
  CHECK(gdap_map_owner(&owner, &local, map, &global));
  printf("element %lld lives on rank %lld at local index %lld\n", (long long)global, (long long)owner, (long long)local);

  gdap_map_destroy(map);
  gdap_array_destroy(section);
  return 0;
}
