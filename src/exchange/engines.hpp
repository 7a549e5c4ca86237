// The engines behind engine.hpp's interface, one per kind of communicator; engine_of (engine.cpp)
// makes the one a communicator's kind needs. Only the exchange layer includes this.
#pragma once

#include "exchange/engine.hpp"

#include <memory>

namespace gdap {
class GroupComm;
class MpiComm;
class NcclComm;
}  // namespace gdap

namespace gdap::exchange {

std::unique_ptr<Engine> make_engine(GroupComm& comm);  // group.cpp
std::unique_ptr<Engine> make_engine(MpiComm& comm);    // mpi.cpp (MPI builds)
std::unique_ptr<Engine> make_engine(NcclComm& comm);   // nccl.cpp (NCCL builds)

}  // namespace gdap::exchange
