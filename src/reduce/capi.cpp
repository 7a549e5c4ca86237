// C entry points of the reductions (the C++ API is reduction.hpp).
#include "core/error.hpp"
#include "reduce/reduction.hpp"

extern "C" {

GDAP_API gdap_status gdap_allreduce(gdap_comm* comm, gdap_array* section, gdap_reduce_op op) {
  return gdap::guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_allreduce");
    gdap::reduce::allreduce(c, section, gdap::reduce::op_arg(op));
  });
}

GDAP_API gdap_status gdap_reduce_scatter(gdap_comm* comm, const gdap_array* source, gdap_array* result,
                                         gdap_reduce_op op) {
  return gdap::guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_reduce_scatter");
    gdap::reduce::reduce_scatter(c, source, result, gdap::reduce::op_arg(op));
  });
}

GDAP_API gdap_status gdap_reduce_axes(gdap_comm* comm, const gdap_array* source, gdap_array* result, gdap_reduce_op op,
                                      const int64_t* axes, int64_t naxes) {
  return gdap::guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_reduce_axes");
    gdap::reduce::reduce_axes(c, source, result, gdap::reduce::op_arg(op), axes, naxes);
  });
}

}  // extern "C"
