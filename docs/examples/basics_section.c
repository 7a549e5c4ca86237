/* A rank's local section from a map: gdap_map_dim gives the rank's dictionary for each dimension,
 * and gdap_array_create allocates the buffer they describe, padding included (there is no
 * "create from a map" call). Here a 6 x 8 array over a 2 x 2 grid with one cell of halo.
 * Build: cc basics_section.c $(pkg-config --cflags --libs gdap) */
#include <gdap/gdap.h>
#include <stdio.h>

#define CHECK(call) do { gdap_status s_ = (call); if (s_ != GDAP_SUCCESS) { \
  fprintf(stderr, "%s: %s\n", gdap_status_string(s_), gdap_last_error()); return 1; } } while (0)

/* Rank `rank`'s section of `map` (at most 8 dimensions), zero-filled host memory.
 * On success the caller destroys *out with gdap_array_destroy. */
static gdap_status section_of(gdap_array** out, const gdap_map* map, int64_t rank, int64_t ndim) {
  gdap_dim dims[8];
  gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
  gdap_device cpu = {GDAP_DEVICE_CPU, 0};
  for (int64_t i = 0; i < ndim; ++i) {
    gdap_status s = gdap_map_dim(&dims[i], map, rank, i);  /* the rank's own dictionary */
    if (s != GDAP_SUCCESS) return s;
  }
  return gdap_array_create(out, f64, cpu, dims, ndim);
}

int main(void) {
  gdap_axis_layout axes[2] = {GDAP_AXIS_LAYOUT_INIT, GDAP_AXIS_LAYOUT_INIT};
  axes[0].size = 6; axes[0].grid_size = 2; axes[0].halo = 1;
  axes[1].size = 8; axes[1].grid_size = 2; axes[1].halo = 1;
  gdap_map* map = NULL;
  CHECK(gdap_map_create_grid(&map, 2, axes));            /* 4 ranks; every rank makes the same map */

  for (int64_t rank = 0; rank < 4; ++rank) {             /* under MPI each rank makes only its own */
    gdap_array* section = NULL;
    int64_t buffer[2], owned[2];
    CHECK(section_of(&section, map, rank, 2));
    CHECK(gdap_array_shape(buffer, section));
    CHECK(gdap_map_owned_shape(owned, map, rank));
    printf("rank %lld: buffer %lld x %lld, owns %lld x %lld\n", (long long)rank,
           (long long)buffer[0], (long long)buffer[1], (long long)owned[0], (long long)owned[1]);
    gdap_array_destroy(section);
  }
  gdap_map_destroy(map);
  return 0;
}
