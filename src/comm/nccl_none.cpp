// gdap_comm_from_nccl in a build without NCCL: the symbol exists and says why it cannot help.
#include "core/error.hpp"

#include <gdap/gdap_cuda.h>

extern "C" GDAP_API gdap_status gdap_comm_from_nccl(gdap_comm** out, void* nccl_comm, void* stream) {
  (void)out, (void)nccl_comm, (void)stream;
  return gdap::guard([] { gdap::fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL"); });
}
