/* A tiny C99 program against the shared library: the loaded library matches the header it was
 * compiled with, status names and the last-error text work from C, and a failing call leaves the
 * caller's output untouched. */
#include <gdap/gdap.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
#define EXPECT(cond) do { if (!(cond)) { printf("FAIL line %d: %s\n", __LINE__, #cond); ++failures; } } while (0)

int main(void) {
  gdap_dim dim = GDAP_DIM_INIT;
  int64_t count = -7;
  EXPECT(gdap_version() == GDAP_VERSION_NUMBER);
  EXPECT(strcmp(gdap_status_string(GDAP_ERR_PROTOCOL), "GDAP_ERR_PROTOCOL") == 0);
  EXPECT(gdap_protocol_version_check(GDAP_PROTOCOL_VERSION) == GDAP_SUCCESS);
  EXPECT(gdap_protocol_version_check("1.0.0") == GDAP_ERR_VERSION);
  EXPECT(strlen(gdap_last_error()) > 0);
  EXPECT(dim.struct_size == sizeof(gdap_dim));
  EXPECT(gdap_dim_set_block(&dim, 10, 1, 0, 0, 12) == GDAP_SUCCESS); /* setters check nothing */
  EXPECT(gdap_dim_validate(&dim, 0, -1) == GDAP_ERR_PROTOCOL);
  EXPECT(strstr(gdap_last_error(), "stop (12) > size (10)") != NULL);
  EXPECT(gdap_dim_owned_count(NULL, &dim) == GDAP_ERR_INVALID_ARGUMENT);
  EXPECT(gdap_dim_set_block(&dim, 10, 1, 0, 0, 10) == GDAP_SUCCESS);
  EXPECT(gdap_dim_owned_count(&count, &dim) == GDAP_SUCCESS && count == 10);
  printf("c smoke: gdap %s (header %d, library %d): %s\n", gdap_version_string(), GDAP_VERSION_NUMBER,
         gdap_version(), failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
