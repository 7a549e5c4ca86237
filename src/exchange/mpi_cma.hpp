// The MPI engine's single-copy exchange between ranks of one node (GDAP_MPI_EXCHANGE=cma): every
// receiver reads the runs it needs straight from its senders' sections into its own with Linux's
// cross-memory attach (process_vm_readv), one copy per byte, with no packing and no MPI transfer.
// The agreement carries what the readers need (each rank's pid, its source section's address and
// strides, and a probe word); on first use a communicator probes a read from every peer and the
// ranks vote, and if any rank cannot read (ptrace policy, containers, ranks on several nodes)
// every rank falls back to point-to-point from then on. Elsewhere than Linux the mode reports
// GDAP_ERR_UNSUPPORTED.
#pragma once

#include "exchange/engine.hpp"

#include <string>
#include <vector>

namespace gdap {
class MpiComm;
}

namespace gdap::exchange {

// This rank's share of the agreement: what its peers need to read its source section. Throws
// GDAP_ERR_UNSUPPORTED where the build has no cross-memory attach.
std::string cma_share(MpiComm& comm, const Sections& sections);

// Collective, after an agreement that carried every rank's cma_share (`shares`, in rank order):
// whether the ranks may read one another's memory, the same answer on every rank. The first call
// on a communicator probes and votes (one MPI_Iallreduce, bounded by the timeout); later calls
// return the verdict it kept.
bool cma_usable(MpiComm& comm, const std::vector<std::string>& shares);

// Collective, once cma_usable said yes: reads every received run from its sender's section, runs
// the local copies, and returns once every rank finished reading (so no section changes while a
// peer reads it). A failed read is every rank's error (GDAP_ERR_COMM on the reader, naming the
// peer and errno; GDAP_ERR_REMOTE on the others) after the closing synchronization.
void cma_exchange(MpiComm& comm, const Program& program, const Sections& sections,
                  const std::vector<std::string>& shares);

}  // namespace gdap::exchange
