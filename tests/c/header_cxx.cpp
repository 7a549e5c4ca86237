// gdap.h compiles as C++20 with every warning an error, inside and outside a namespace.
#include <gdap/gdap.h>

namespace gdap_header_check {
int use() {
  gdap_dim dim = GDAP_DIM_INIT;
  return static_cast<int>(dim.struct_size) + (gdap_version() > 0 ? 1 : 0);
}
}  // namespace gdap_header_check
