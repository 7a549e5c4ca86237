// The NCCL engine, for device sections on the communicator's GPU. Where every rank can write into
// its peers' memory over NVLink it does so (nccl_writes.hpp): per call into the receiving sections,
// for the programs whose style allows it, and at every start of a bound exchange into its peers'
// staging. Otherwise everything is queued on the communicator's stream and nothing waits on the
// host after the agreement (nccl_staging.hpp):
//   1. one copy kernel packs every wire message that is not one contiguous run into a staging
//      buffer, and does the local copies straight from section to section;
//   2. one NCCL group of ncclSend/ncclRecv, contiguous messages going to and from the sections
//      themselves;
//   3. one copy kernel unpacks the staged receives.
// The copy descriptors (absolute addresses) are uploaded once and reused while the program and the
// sections stay the same. Reductions are NCCL's own: ncclAllReduce and ncclReduceScatter; min and
// max of floats go through order keys (cuda/order_keys.hpp) so that a NaN on any rank is the
// result, as on the other engines (NCCL's float min and max drop a NaN), unless the ranks agreed
// that none holds a NaN (may_hold_nan, Reduce::nan_free): then NCCL's float min and max are exact
// and cost no passes of their own. A
// broadcast's owner copies its part into its buffer with the copy engines and one NCCL group per
// step sends the buffers to their receivers, all on the session's stream.
#include "exchange/engines.hpp"

#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "cuda/device.hpp"
#include "cuda/order_keys.hpp"
#include "cuda/stream.hpp"
#include "exchange/nccl_staging.hpp"
#include "exchange/nccl_writes.hpp"
#include "exchange/reduce_names.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

namespace gdap::exchange {
namespace {

ncclDataType_t nccl_type(gdap_dtype t) {
  return name_of(t, TypeNames<ncclDataType_t>{ncclFloat32, ncclFloat64, ncclInt8, ncclUint8, ncclInt32, ncclUint32,
                                              ncclInt64, ncclUint64});
}

ncclRedOp_t nccl_op(gdap_reduce_op op) { return name_of(op, OpNames<ncclRedOp_t>{ncclSum, ncclProd, ncclMin, ncclMax}); }

// True for min and max of floats, where a NaN on one rank is lost in NCCL's float op.
bool nan_sensitive(const Reduce& r) {
  return r.dtype.code == GDAP_DTYPE_FLOAT && (r.op == GDAP_REDUCE_MIN || r.op == GDAP_REDUCE_MAX);
}

// True where NCCL reduces order keys (cuda/order_keys.hpp): a NaN-sensitive reduction unless no
// rank's data hold a NaN.
bool keyed(const Reduce& r) { return nan_sensitive(r) && !r.nan_free; }

// The unsigned integer type of a float's keys, of its width.
ncclDataType_t key_type(const Reduce& r) { return r.dtype.bits == 32 ? ncclUint32 : ncclUint64; }

// A device buffer from the stream-ordered pool, freed on the stream when it goes.
struct StreamBuffer {
  StreamBuffer(size_t bytes, cudaStream_t stream) : stream(stream) {
    const cudaError_t e = cudaMallocAsync(&data, bytes, stream);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      fail(GDAP_ERR_NO_MEMORY, "no device memory for the {} bytes of a min/max reduction's keys", bytes);
    }
    cuda::check_cuda(e, "cudaMallocAsync");
  }
  ~StreamBuffer() { cudaFreeAsync(data, stream); }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  void* data = nullptr;
  cudaStream_t stream;
};

// Routes every wire message (staged or direct) and uploads the pack and unpack kernels' copies.
void prepare(const Program& program, const Sections& sections, NcclStaging& s, std::vector<int64_t> key, void* stream,
             char* send_staging, char* recv_staging) {
  const int64_t es = program.element_size();
  const End packed{End::packed, {}};
  s.begin(send_staging, recv_staging);
  const char* src = sections.src ? static_cast<const char*>(sections.src->data()) : nullptr;
  char* dst = sections.dst ? static_cast<char*>(sections.dst->data()) : nullptr;
  std::vector<Copy2D> copies;
  if (sections.src) {
    const End sender{End::sender, sections.src->section.strides};
    for (const Message& m : program.wire(Part::send)) {
      copies.clear();
      program.copies(m, sender, packed, copies);
      s.send(static_cast<int>(m.peer), m.elements * es, copies, src, m.offset * es);
    }
  }
  if (sections.dst) {
    const End receiver{End::receiver, sections.dst->section.strides};
    for (const Message& m : program.wire(Part::recv)) {
      copies.clear();
      program.copies(m, packed, receiver, copies);
      s.recv(static_cast<int>(m.peer), m.elements * es, copies, dst, m.offset * es);
    }
  }
  if (sections.src && sections.dst) {
    s.local(program.part_copies(Part::local, End{End::sender, sections.src->section.strides},
                                End{End::receiver, sections.dst->section.strides}),
            src, dst);
  }
  s.end(std::move(key), stream);
}

// The session's events, kept on the communicator between sessions.
struct BroadcastEvents final : Scratch {
  std::unique_ptr<cuda::DeviceEvent> start, copied;
};

class NcclBroadcasts final : public Broadcasts {
 public:
  NcclBroadcasts(NcclComm& comm, std::vector<const gdap_array*> sections, void* copy, BroadcastEvents& events)
      : nccl_(comm), sections_(std::move(sections)), copy_(copy), events_(events) {
    events_.start->record(nccl_.stream);
    events_.start->wait_on(copy_);
  }
  void start(std::span<const Move> moves, int) override {
    for (const Move& m : moves) {
      const Program& p = *m.program;
      if (p.messages(Part::local).empty()) continue;
      const gdap_array& from = *sections_[m.section];
      const char* base = static_cast<const char*>(from.data());
      for (const Copy2D& c : p.part_copies(Part::local, End{End::sender, from.section.strides}, End{End::packed, {}})) {
        cuda::copy_2d_async(m.buffer + c.dst, c.dst_pitch, base + c.src, c.src_pitch, c.row_bytes, c.rows, copy_);
      }
    }
    const auto stream = static_cast<cudaStream_t>(copy_);
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (const Move& m : moves) {
      const int64_t es = m.program->element_size();
      for (const Message& sent : m.program->messages(Part::send)) {
        check_nccl(ncclSend(m.buffer, static_cast<size_t>(sent.elements * es), ncclChar, static_cast<int>(sent.peer),
                            nccl_.handle(), stream),
                   "ncclSend");
      }
      for (const Message& got : m.program->messages(Part::recv)) {
        check_nccl(ncclRecv(m.buffer, static_cast<size_t>(got.elements * es), ncclChar, static_cast<int>(got.peer),
                            nccl_.handle(), stream),
                   "ncclRecv");
      }
    }
    nccl_.settle(ncclGroupEnd(), "ncclGroupEnd");
  }
  void end() override {
    events_.copied->record(copy_);
    events_.copied->wait_on(nccl_.stream);
  }

 private:
  NcclComm& nccl_;
  std::vector<const gdap_array*> sections_;
  void* copy_;
  BroadcastEvents& events_;
};

class NcclEngine final : public Engine {
 public:
  explicit NcclEngine(NcclComm& comm) : Engine(comm), nccl_(comm) {}

  void run(const Program& program, const Sections& sections, const Agreement& agreement) override;
  std::unique_ptr<Bound> bind(const Program& program, const Sections& sections, const Agreement& agreement) override;
  void start(Bound& bound) override;
  void check_section(const gdap_array& a, std::string_view which, std::string_view operation, bool reduce) const override;
  void allreduce(void* data, int64_t count, const Reduce& r) override;
  void reduce_scatter(const void* send, void* recv, int64_t segment, const Reduce& r) override;
  int64_t reduce_scatter_in_place(void* buffer, int64_t segment, const Reduce& r) override;
  bool may_hold_nan(const void* data, int64_t count, const Reduce& r) override;
  std::unique_ptr<Broadcasts> broadcasts(const BroadcastSetup& setup) override;

 private:
  void send_receive(const Program& program, const Sections& sections, std::vector<int64_t> key);
  void check_memory(Memory memory) const;

  NcclComm& nccl_;
};

void NcclEngine::send_receive(const Program& program, const Sections& sections, std::vector<int64_t> key) {
  const std::string name = program.style().name;
  NcclStagingBuffers& buffers = comm_.cache.get<NcclStagingBuffers>(name + ".staging");
  char* send = buffers.send.reserve(std::max<int64_t>(program.bytes(Part::send), 1));
  char* recv = buffers.recv.reserve(std::max<int64_t>(program.bytes(Part::recv), 1));
  const auto same = [&](const NcclStaging& kept) { return kept.holds(key, send, recv); };
  NcclStaging& s = comm_.cache.recent<NcclStaging>(name, same, [&] {
    auto made = std::make_unique<NcclStaging>();
    prepare(program, sections, *made, std::move(key), comm_.stream, send, recv);
    return made;
  });
  s.run(nccl_);
}

void NcclEngine::run(const Program& program, const Sections& sections, const Agreement& agreement) {
  const bool direct = program.style().direct_writes;
  const std::vector<std::string> shares = agree_gather(comm_, [&] {
    check_all(program, sections, agreement);
    return Share{agreement.token, direct ? peer_share(program, sections, nccl_.device()) : std::string()};
  }, agreement.mismatch);
  cuda::set_device(nccl_.device());
  std::vector<int64_t> key = key_of(program, sections);
  if (direct && run_peer_writes(nccl_, program, sections, shares, key)) return;
  send_receive(program, sections, std::move(key));
}

// Every check on every rank, so that a bad argument is every rank's error; the ranks' offers for
// direct writes travel in the same allgather.
std::unique_ptr<Bound> NcclEngine::bind(const Program& program, const Sections& sections, const Agreement& agreement) {
  auto bound = std::make_unique<Bound>();
  bound->program = &program;
  bound->sections = sections;
  const std::vector<std::string> offers = agree_gather(comm_, [&] {
    check_all(program, sections, agreement);
    return Share{agreement.token, bound_offer(nccl_, program, bound->direct)};
  }, agreement.mismatch);
  bind_writes(nccl_, program, sections, offers, bound->direct);
  return bound;
}

// No agreement, so a repeated exchange costs the pack kernel, one NCCL group and the unpack
// kernel, queued without a wait on the host; or, where the ranks took direct writes at the
// binding, the push kernel and the unpack kernel, ordered across the GPUs by flags.
void NcclEngine::start(Bound& bound) {
  nccl_.check_usable();
  if (bound.direct) return start_writes(nccl_, *bound.direct);
  cuda::set_device(nccl_.device());
  send_receive(*bound.program, bound.sections, key_of(*bound.program, bound.sections));
}

void NcclEngine::check_section(const gdap_array& a, std::string_view which, std::string_view operation, bool) const {
  if (memory_of(&a) != Memory::device) {
    fail(GDAP_ERR_UNSUPPORTED, "{} is not in CUDA device memory: on an NCCL communicator {} takes device sections "
         "(host sections go through an in-process group or MPI)", which, operation);
  }
  if (a.section.device.id != nccl_.device()) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} is on GPU {} but the NCCL communicator on GPU {}", which, a.section.device.id,
         nccl_.device());
  }
}

void NcclEngine::check_memory(Memory memory) const {
  if (memory != Memory::device) {
    fail(GDAP_ERR_UNSUPPORTED, "an NCCL communicator reduces device memory; this reduction runs on host buffers "
         "(use an in-process group or MPI)");
  }
}

void NcclEngine::allreduce(void* data, int64_t count, const Reduce& r) {
  check_memory(r.memory);
  if (comm_.size == 1) return;  // in place on one rank: nothing to combine
  const auto stream = static_cast<cudaStream_t>(comm_.stream);
  if (keyed(r)) {  // in place: the data become keys, are reduced as integers, and become floats again
    cuda::to_order_keys(data, data, count, r.dtype.bits, r.op == GDAP_REDUCE_MAX, stream);
    nccl_.settle(ncclAllReduce(data, data, static_cast<size_t>(count), key_type(r), nccl_op(r.op), nccl_.handle(), stream),
                 "ncclAllReduce");
    cuda::from_order_keys(data, count, r.dtype.bits, stream);
    return;
  }
  nccl_.settle(ncclAllReduce(data, data, static_cast<size_t>(count), nccl_type(r.dtype), nccl_op(r.op), nccl_.handle(),
                             stream),
               "ncclAllReduce");
}

void NcclEngine::reduce_scatter(const void* send, void* recv, int64_t segment, const Reduce& r) {
  check_memory(r.memory);
  const auto stream = static_cast<cudaStream_t>(comm_.stream);
  if (comm_.size == 1) {  // one rank's segment is its buffer
    if (send != recv) {
      cuda::check_cuda(cudaMemcpyAsync(recv, send, static_cast<size_t>(segment * (r.dtype.bits / 8)),
                                       cudaMemcpyDeviceToDevice, stream),
                       "cudaMemcpyAsync");
    }
    return;
  }
  if (keyed(r)) {  // `send` may be the caller's source: its keys go to a buffer of their own
    const int64_t count = segment * comm_.size;
    const StreamBuffer keys(static_cast<size_t>(count * (r.dtype.bits / 8)), stream);
    cuda::to_order_keys(send, keys.data, count, r.dtype.bits, r.op == GDAP_REDUCE_MAX, stream);
    nccl_.settle(ncclReduceScatter(keys.data, recv, static_cast<size_t>(segment), key_type(r), nccl_op(r.op),
                                   nccl_.handle(), stream),
                 "ncclReduceScatter");
    cuda::from_order_keys(recv, segment, r.dtype.bits, stream);
    return;
  }
  nccl_.settle(ncclReduceScatter(send, recv, static_cast<size_t>(segment), nccl_type(r.dtype), nccl_op(r.op),
                                 nccl_.handle(), stream),
               "ncclReduceScatter");
}

// In place, NCCL's receive is this rank's own segment of the buffer.
int64_t NcclEngine::reduce_scatter_in_place(void* buffer, int64_t segment, const Reduce& r) {
  const int64_t at = comm_.rank * segment;
  reduce_scatter(buffer, static_cast<char*>(buffer) + at * (r.dtype.bits / 8), segment, r);
  return at;
}

// One rank's reduction combines nothing (allreduce, reduce_scatter): there the answer is moot.
bool NcclEngine::may_hold_nan(const void* data, int64_t count, const Reduce& r) {
  check_memory(r.memory);
  if (!nan_sensitive(r) || comm_.size == 1) return true;
  return nccl_.stream_flag([&](int* flag) { cuda::has_nan(data, count, r.dtype.bits, flag, comm_.stream); },
                           "the NaN scan before a float min/max");
}

std::unique_ptr<Broadcasts> NcclEngine::broadcasts(const BroadcastSetup& setup) {
  if (setup.memory != Memory::device) {
    fail(GDAP_ERR_UNSUPPORTED, "host sections need an in-process group or MPI communicator (NCCL moves device memory)");
  }
  cuda::set_device(nccl_.device());
  BroadcastEvents& events = comm_.cache.get<BroadcastEvents>("broadcasts");
  if (!events.start) {
    events.start = std::make_unique<cuda::DeviceEvent>();
    events.copied = std::make_unique<cuda::DeviceEvent>();
  }
  return std::make_unique<NcclBroadcasts>(nccl_, setup.sections, setup.copy_stream, events);
}

}  // namespace

std::unique_ptr<Engine> make_engine(NcclComm& comm) { return std::make_unique<NcclEngine>(comm); }

}  // namespace gdap::exchange
