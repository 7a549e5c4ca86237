// Executors for engines this build lacks. No communicator of their kind can be made here (its
// constructor already said GDAP_ERR_UNSUPPORTED), so these are never reached with valid handles.
#include "core/error.hpp"
#include "move/halo.hpp"
#include "move/redistribute.hpp"

namespace gdap::move {

#ifndef GDAP_HAVE_MPI
void run_mpi(const Call&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without MPI"); }
void halo_mpi(const HaloCall&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without MPI"); }
void check_halo_mpi(const HaloCall&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without MPI"); }
#endif
#ifndef GDAP_HAVE_NCCL
void run_nccl(const Call&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL"); }
void halo_nccl(const HaloCall&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL"); }
void check_halo_nccl(const HaloCall&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL"); }
std::string halo_peer_offer(const HaloCall&, std::unique_ptr<Scratch>&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL"); }
void halo_peer_bind(const HaloCall&, const std::vector<std::string>&, std::unique_ptr<Scratch>&) {
  fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL");
}
void halo_peer_start(const HaloCall&, Scratch&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL"); }
#endif

}  // namespace gdap::move
