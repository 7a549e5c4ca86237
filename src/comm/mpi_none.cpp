// gdap_comm_from_mpi in a build without MPI: the symbol exists (the ABI is one for every build)
// and says why it cannot help.
#include "core/error.hpp"

#include <gdap/gdap_mpi.h>

extern "C" GDAP_API gdap_status gdap_comm_from_mpi(gdap_comm** out, int comm) {
  (void)out, (void)comm;
  return gdap::guard([] { gdap::fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without MPI"); });
}
