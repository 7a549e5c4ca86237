/* gdap.h compiles as strict C99 with every warning an error, and its macros work in C. */
#include <gdap/gdap.h>

int gdap_header_c99_check(void);
int gdap_header_c99_check(void) {
  gdap_dim dim = GDAP_DIM_INIT;
  gdap_run run = {0, 0, 0};
  gdap_dtype dtype = {GDAP_DTYPE_FLOAT, 32, 1};
  gdap_device device = {GDAP_DEVICE_CPU, 0};
  (void)run;
  return (int)dim.struct_size + dtype.bits + device.type + GDAP_VERSION_NUMBER;
}
