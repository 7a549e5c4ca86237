// The MPI engine's single-copy exchange between ranks of one node (GDAP_MPI_EXCHANGE=cma; on Linux
// the default for redistributions, Style::cma_default, where every rank is on one node): every receiver reads what it needs from its senders with Linux's cross-memory
// attach (process_vm_readv), with no MPI transfer. The kernel pins the sender's pages once per
// remote run (about 2.2 us each on the CI machine), so where a message's runs on the sender's side
// average under 4 KiB (GDAP_CMA_PACK_BELOW=<bytes> overrides it, 0 never packs) its sender packs it,
// reading its section row after row, into a buffer it keeps: a shared-memory segment that each
// receiver maps read-only once and unpacks from with plain loads (two passes over the bytes, no
// system call). Where no segment can be made, or GDAP_CMA_PACK_TO=heap, the buffer is on the heap
// and the receiver reads it as one remote run: in cache-sized chunks through a staging buffer where
// the receiver's runs are short too (the kernel's copy into many short segments costs more than a
// memcpy per run from cache), else scattered straight into its destination runs. Longer runs are
// read straight from the sender's section: one copy per byte.
// A sender whose source section lies in a shared-memory segment gdap made (gdap_array_create_shm)
// publishes the segment instead and never packs: each receiver maps it read-only once (kept per
// communicator while the shares name it, checked to be the published file: inode, device, size)
// and copies its runs with plain loads, one pass over the bytes and no system call per run.
// The agreement carries what the readers need (each rank's pid, its source section's address and
// strides, its pack buffer and how it sends each message, and a probe word); on first use a
// communicator probes a read from every peer and the ranks vote, and if any rank cannot read
// (ptrace policy, containers, ranks on several nodes) every rank falls back to point-to-point from
// then on. Elsewhere than Linux the mode reports GDAP_ERR_UNSUPPORTED.
#pragma once

#include "exchange/engine.hpp"

#include <string>
#include <vector>

namespace gdap {
class MpiComm;
}

namespace gdap::exchange {

// This rank's share of the agreement: what its peers need to read its messages of `program`,
// deciding which it packs (the pack buffer is kept with the communicator, reused across calls).
// Throws GDAP_ERR_INVALID_ARGUMENT for a bad GDAP_CMA_PACK_BELOW, and GDAP_ERR_UNSUPPORTED where
// the build has no cross-memory attach.
std::string cma_share(MpiComm& comm, const Program& program, const Sections& sections);

// Collective, after an agreement that carried every rank's cma_share (`shares`, in rank order):
// whether the ranks may read one another's memory, the same answer on every rank. The first call
// on a communicator probes and votes (one MPI_Iallreduce, bounded by the timeout); later calls
// return the verdict it kept.
bool cma_usable(MpiComm& comm, const std::vector<std::string>& shares);

// Collective, once cma_usable said yes: packs what this rank's share said it packs; if any rank
// packs, the ranks meet (no one reads a buffer before its sender filled it, and a failure there
// stops every rank before any read); then reads every received message from its sender's section
// or pack buffer (staged or not), runs the local copies, and returns once every rank finished reading (so no
// section or pack buffer changes while a peer reads it). A failure is every rank's error (its own
// on the failing rank, e.g. GDAP_ERR_COMM naming the peer and errno for a read; GDAP_ERR_REMOTE
// naming it on the others).
void cma_exchange(MpiComm& comm, const Program& program, const Sections& sections,
                  const std::vector<std::string>& shares);

}  // namespace gdap::exchange
