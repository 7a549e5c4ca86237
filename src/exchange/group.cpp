// The in-process group's engine. Ranks are threads sharing one address space, so nothing is packed
// or sent: every rank publishes its sections at one rendezvous and then copies its part straight
// between sections: pulling what it receives from its peers' senders (host, and device with
// GDAP_GROUP_COPY=pull), or pushing what it sends into its peers' receivers (device, the default:
// NVLink writes beat reads, measured on 2 x H200, docs/PERFORMANCE.md).
//
// The rendezvous doubles as the agreement: each rank publishes its own check's error, and no rank
// copies anything unless every rank passed. On devices, copies are one kernel per rank on the
// rank's own stream, which first waits for every peer's stream (so peers' earlier work on the
// sections is done) and which every peer's stream waits for afterwards (so their later work
// cannot overwrite what is still being read or written). A sender's section is only read and a
// receiver's only written where the program says, so ranks never race.
// Reductions read every peer's buffer at a rendezvous and combine them in rank order. Broadcasts
// publish their sections once per session and then copy straight from the owner's section: on the
// host by memcpy, on devices by the copy engines (cudaMemcpy2DAsync on the session's stream, across
// GPUs peer to peer), after every peer's stream reached the session and with every peer's stream
// waiting for this rank's copies at the end.
#include "exchange/engines.hpp"

#include "array/array.hpp"
#include "comm/group.hpp"
#include "core/error.hpp"
#include "core/setting.hpp"
#include "cuda/copy_kernel.hpp"
#include "cuda/device.hpp"
#include "cuda/stream.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gdap::exchange {
namespace {

// One message this rank copies, relative to its two sections' bases: the rank whose source
// section it reads (`from`) and the rank whose destination section it writes (`to`).
struct Transfer {
  int64_t from = 0, to = 0;
  std::vector<Copy2D> copies;
};

// The transfers of one program a rank ran (Cache::recent keeps the last 4), under what its copies
// depend on (the program, the direction, the order and every rank's section strides) but not the
// sections' addresses: a move into new sections of the same layout (GlobalArray.reshard's)
// re-bases the kept copies instead of walking the program's blocks again (one per row of a cyclic
// layout). At most kCopies copies in all (48 bytes each), the newest list kept first; a list
// longer than that is used for its call only (TooLong), not kept.
struct Transfers {
  static constexpr size_t kCopies = size_t{1} << 20;
  std::vector<int64_t> key;
  std::vector<Transfer> list;
};
struct TooLong final : Scratch {
  std::vector<Transfer> list;
};

size_t copies_in(const std::vector<Transfer>& ts) {
  size_t n = 0;
  for (const Transfer& t : ts) n += t.copies.size();
  return n;
}

// What a group rank keeps between calls on device sections (all on `device`).
struct DeviceScratch final : Scratch {
  int device = -1;
  cuda::DeviceEvent ready, done;
};

// A program's copies uploaded to `device` (Cache::recent: a few programs per kind). Evicting one
// is safe while its kernel is queued: cudaFree waits for the device.
struct UploadedCopies {
  int device = -1;
  cuda::DeviceBatch batch;
};

struct Published {
  std::string error;  // this rank's check failure ("" if none)
  gdap_status status = GDAP_SUCCESS;
  std::string token;  // every rank's must be rank 0's
  Memory memory = Memory::none;
  const gdap_array* src = nullptr;
  gdap_array* dst = nullptr;
  const cuda::DeviceEvent* ready = nullptr;  // device: recorded when the rank's earlier work is queued
  const cuda::DeviceEvent* done = nullptr;   // device: recorded after the rank's copy kernel
};

// What a rank's copies depend on: the program, the direction, the peer order and every rank's
// section strides (each list after its length, -1 for no section); with `addresses`, each
// section's address too, which an uploaded batch depends on besides.
std::vector<int64_t> copies_key(const Program& program, const std::vector<const Published*>& all, bool push,
                                bool addresses) {
  std::vector<int64_t> key{static_cast<int64_t>(program.serial()), push ? 1 : 0, static_cast<int64_t>(peer_order())};
  for (const Published* p : all) {
    for (const gdap_array* a : {p->src, static_cast<const gdap_array*>(p->dst)}) {
      key.push_back(a != nullptr ? static_cast<int64_t>(a->section.strides.size()) : -1);
      if (a == nullptr) continue;
      if (addresses) key.push_back(reinterpret_cast<int64_t>(a->data()));
      key.insert(key.end(), a->section.strides.begin(), a->section.strides.end());
    }
  }
  return key;
}

// Push (each rank writes its sends into its peers' receivers) unless GDAP_GROUP_COPY=pull; any
// other value is refused. Read in each rank's checks, before the ranks meet.
bool push_mode() { return choice_setting("GDAP_GROUP_COPY", {"push", "pull"}).value_or(0) == 0; }

// The first failing rank's error, another program, or a disagreement about memories: the same
// verdict on every rank, since each reads the same publications. Empty if the call may go ahead.
std::optional<Error> verdict(const std::vector<const Published*>& all, int64_t self, const Agreement& agreement) {
  const Published& mine = *all[static_cast<size_t>(self)];
  if (!mine.error.empty()) return Error(mine.status, mine.error);  // a failing rank reports its own error
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r]->error.empty()) continue;
    return Error(GDAP_ERR_REMOTE, fmt::format("rank {} failed ({}): {}", r, gdap_status_string(all[r]->status), all[r]->error));
  }
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r]->token != all[0]->token) {
      return Error(GDAP_ERR_INVALID_ARGUMENT, agreement.mismatch(r, all[r]->token, all[0]->token));
    }
  }
  Memory memory = Memory::none;
  for (size_t r = 0; r < all.size(); ++r) {
    const Memory m = all[r]->memory;
    if (m == Memory::none) continue;
    if (memory != Memory::none && m != memory) {
      return Error(GDAP_ERR_UNSUPPORTED, fmt::format("rank {}'s sections are in {} memory but another rank's in {}; an "
                                                     "in-process group moves host-to-host or device-to-device",
                                                     r, memory_name(m), memory_name(memory)));
    }
    memory = m;
  }
  return std::nullopt;
}

// The copies that fill a move's buffer from the sender's section (`from`): the rank's local
// message when it owns the step, else its receive.
std::vector<Copy2D> fill_copies(const Move& move, const gdap_array& from) {
  const Program& p = *move.program;
  const Part part = p.messages(Part::local).empty() ? Part::recv : Part::local;
  return p.part_copies(part, End{End::sender, from.section.strides}, End{End::packed, {}});
}

// The rank whose section fills a move's buffer: this one, or the sender of its receive.
int64_t filler(const Move& move, int64_t me) {
  const Program& p = *move.program;
  if (!p.messages(Part::local).empty() || p.messages(Part::recv).empty()) return me;
  return p.messages(Part::recv)[0].peer;
}

class HostBroadcasts final : public Broadcasts {
 public:
  HostBroadcasts(GroupComm& comm, std::vector<const gdap_array*> sections) : comm_(comm), mine_(std::move(sections)) {
    comm_.exchange(&mine_, [&](const std::vector<const void*>& all) {
      for (const void* p : all) peers_.push_back(*static_cast<const std::vector<const gdap_array*>*>(p));
    });
  }
  void start(std::span<const Move> moves, int) override {
    for (const Move& m : moves) {
      const int64_t from = filler(m, comm_.rank);
      if (m.program->messages(Part::local).empty() && m.program->messages(Part::recv).empty()) continue;
      const gdap_array& section = *peers_[static_cast<size_t>(from)][m.section];
      run_host_copies(fill_copies(m, section), static_cast<const char*>(section.data()), m.buffer);
    }
  }
  // No rank may leave (and let its caller free its sections) while another still reads them.
  void end() override { comm_.barrier(); }

 private:
  GroupComm& comm_;
  std::vector<const gdap_array*> mine_;
  std::vector<std::vector<const gdap_array*>> peers_;
};

// What a group rank keeps for device broadcasts between sessions (on `device`).
struct BroadcastEvents final : Scratch {
  int device = -1;
  cuda::DeviceEvent start, copied, done;
};

class DeviceBroadcasts final : public Broadcasts {
 public:
  struct Published {
    const std::vector<const gdap_array*>* sections;
    const cuda::DeviceEvent* start;
    const cuda::DeviceEvent* done;
  };
  DeviceBroadcasts(GroupComm& comm, std::vector<const gdap_array*> sections, void* copy, BroadcastEvents& events)
      : comm_(comm), mine_(std::move(sections)), copy_(copy), events_(events) {
    events_.start.record(comm_.stream);
    published_ = {&mine_, &events_.start, &events_.done};
    std::string error;
    comm_.exchange(&published_, [&](const std::vector<const void*>& all) {
      try {
        for (const void* q : all) {
          const auto* peer = static_cast<const Published*>(q);
          peers_.push_back(*peer->sections);
          if (!peer->sections->empty()) cuda::enable_peer_access(events_.device, peer->sections->front()->section.device.id);
          peer->start->wait_on(copy_);
        }
      } catch (const Error& e) {
        error = e.what();
      }
    });
    if (!error.empty()) fail(GDAP_ERR_DEVICE, "{}", error);
  }
  void start(std::span<const Move> moves, int) override {
    for (const Move& m : moves) {
      const int64_t from = filler(m, comm_.rank);
      if (m.program->messages(Part::local).empty() && m.program->messages(Part::recv).empty()) continue;
      const gdap_array& section = *peers_[static_cast<size_t>(from)][m.section];
      const char* base = static_cast<const char*>(section.data());
      for (const Copy2D& c : fill_copies(m, section)) {
        cuda::copy_2d_async(m.buffer + c.dst, c.dst_pitch, base + c.src, c.src_pitch, c.row_bytes, c.rows, copy_);
      }
    }
  }
  // The caller's stream waits for this rank's reads of its peers; every peer's stream waits for
  // them too, so no peer overwrites a section another rank still reads.
  void end() override {
    events_.copied.record(copy_);
    events_.copied.wait_on(comm_.stream);
    events_.done.record(comm_.stream);
    comm_.exchange(&published_, [&](const std::vector<const void*>& all) {
      for (const void* q : all) {
        const auto* peer = static_cast<const Published*>(q);
        if (peer != &published_) peer->done->wait_on(comm_.stream);
      }
    });
  }

 private:
  GroupComm& comm_;
  std::vector<const gdap_array*> mine_;
  void* copy_;
  BroadcastEvents& events_;
  Published published_{};
  std::vector<std::vector<const gdap_array*>> peers_;
};

class GroupEngine final : public Engine {
 public:
  explicit GroupEngine(GroupComm& comm) : Engine(comm), group_(comm) {}

  void run(const Program& program, const Sections& sections, const Agreement& agreement) override;
  void start(Bound& bound) override { run(*bound.program, bound.sections, Agreement{}); }
  void check_section(const gdap_array& a, std::string_view which, std::string_view operation, bool reduce) const override;
  void allreduce(void* data, int64_t count, const Reduce& r) override;
  void reduce_scatter(const void* send, void* recv, int64_t segment, const Reduce& r) override;
  int64_t reduce_scatter_in_place(void* buffer, int64_t segment, const Reduce& r) override;
  std::unique_ptr<Broadcasts> broadcasts(const BroadcastSetup& setup) override;

 private:
  DeviceScratch& device_scratch(const Program& program, int device);
  const std::vector<Transfer>& transfers(const Program& program, const std::vector<const Published*>& all, bool push);
  std::vector<Transfer> build_transfers(const Program& program, const std::vector<const Published*>& all, bool push);
  void queue_copies(DeviceScratch& scratch, const Program& program, const std::vector<const Published*>& all,
                    bool push);

  GroupComm& group_;
};

// The scratch kept for `program`'s kind on `device`: made anew when none is kept, or another
// device's (whose device memory goes first).
DeviceScratch& GroupEngine::device_scratch(const Program& program, int device) {
  std::unique_ptr<Scratch>& slot = comm_.cache.slot(program.style().name);
  auto* s = comm_.cache.find<DeviceScratch>(program.style().name);
  if (s == nullptr || s->device != device) {
    slot.reset();
    auto made = std::make_unique<DeviceScratch>();
    made->device = device;
    s = made.get();
    slot = std::move(made);
  }
  return *s;
}

// The messages this rank copies: its local copies, then its receives (pull: the peer's sender ->
// its own receiver) or its sends (push: its own sender -> the peer's receiver), in kernel_order():
// from the next rank on unless GDAP_PEER_ORDER=increasing. Built from the program's blocks only
// when no kept entry matches; a rank's thread is the only one to use its communicator's cache.
const std::vector<Transfer>& GroupEngine::transfers(const Program& program, const std::vector<const Published*>& all,
                                                    bool push) {
  std::vector<int64_t> key = copies_key(program, all, push, false);
  const std::string name = std::string(program.style().name) + ".transfers";
  const auto same = [&](const Transfers& t) { return t.key == key; };
  if (const Transfers* kept = comm_.cache.find_recent<Transfers>(name, same)) return kept->list;
  std::vector<Transfer> made = build_transfers(program, all, push);
  if (copies_in(made) > Transfers::kCopies) {
    TooLong& once = comm_.cache.get<TooLong>(name + ".too_long");
    once.list = std::move(made);
    return once.list;
  }
  comm_.cache.slot(name + ".too_long").reset();
  auto list = std::make_unique<Transfers>(Transfers{std::move(key), std::move(made)});
  const Transfers& kept = comm_.cache.keep_recent<Transfers>(name, std::move(list));
  auto& lists = comm_.cache.get<Recent<Transfers>>(name).kept;  // newest first: drop the oldest beyond kCopies
  size_t total = 0, keep = 0;
  while (keep < lists.size() && (keep == 0 || total + copies_in(lists[keep]->list) <= Transfers::kCopies)) {
    total += copies_in(lists[keep++]->list);
  }
  lists.resize(keep);
  return kept.list;
}

// The transfers of `program` for these publications, built from its blocks.
std::vector<Transfer> GroupEngine::build_transfers(const Program& program, const std::vector<const Published*>& all,
                                                   bool push) {
  const int64_t me = comm_.rank;
  std::vector<Transfer> made;
  auto one = [&](const Message& m, int64_t from, int64_t to) {
    Transfer& t = made.emplace_back(Transfer{from, to, {}});
    program.copies(m, End{End::sender, all[static_cast<size_t>(from)]->src->section.strides},
                   End{End::receiver, all[static_cast<size_t>(to)]->dst->section.strides}, t.copies);
  };
  for (const Message& m : program.messages(Part::local)) one(m, me, me);
  for (const Message* m : kernel_order(program.messages(push ? Part::send : Part::recv), me, comm_.size)) {
    if (push) one(*m, me, m->peer);
    else one(*m, m->peer, me);
  }
  return made;
}

// Queues one call's copies on the rank's stream as one kernel, after every rank's earlier work
// (each publication's `ready` event; this rank's own is skipped, since its stream already orders
// it), then records `done`. The kernel's copies are uploaded again only when the program or a
// section (address, strides) changes; where only addresses changed, re-based from the kept
// transfers.
void GroupEngine::queue_copies(DeviceScratch& scratch, const Program& program,
                               const std::vector<const Published*>& all, bool push) {
  void* stream = comm_.stream;
  for (const Published* p : all) {
    if (p->ready != nullptr && p->ready != &scratch.ready) p->ready->wait_on(stream);
  }
  std::vector<int64_t> key = copies_key(program, all, push, true);
  const auto same = [&](const UploadedCopies& u) { return u.device == scratch.device && u.batch.holds(key); };
  const std::string name = std::string(program.style().name) + ".uploaded";
  const UploadedCopies& uploaded = comm_.cache.recent<UploadedCopies>(name, same, [&] {
    auto made = std::make_unique<UploadedCopies>();
    made->device = scratch.device;
    std::vector<std::vector<cuda::DeviceCopy>> per_message;
    for (const Transfer& t : transfers(program, all, push)) {
      const gdap_array* from = all[static_cast<size_t>(t.from)]->src;
      gdap_array* to = all[static_cast<size_t>(t.to)]->dst;
      const int peer = (push ? to : from)->section.device.id;
      cuda::enable_peer_access(scratch.device, peer);
      append_device_copies(per_message.emplace_back(), t.copies, static_cast<const char*>(from->data()),
                           static_cast<char*>(to->data()), peer != scratch.device);
    }
    made->batch.upload(std::move(key), order_device_copies(std::move(per_message)), stream);
    return made;
  });
  uploaded.batch.launch(stream);
  scratch.done.record(stream);
}

void GroupEngine::run(const Program& program, const Sections& sections, const Agreement& agreement) {
  Published mine;
  DeviceScratch* scratch = nullptr;
  bool push = true;
  try {
    check_all(program, sections, agreement);
    mine.token = agreement.token;
    mine.memory = memory_of(sections.src != nullptr ? sections.src : sections.dst);
    mine.src = sections.src;
    mine.dst = sections.dst;
    push = push_mode();  // device copies only, but a bad value is refused whatever the sections
    if (mine.memory == Memory::device) {
      const int device = (mine.src ? mine.src : mine.dst)->section.device.id;
      cuda::set_device(device);
      scratch = &device_scratch(program, device);
      scratch->ready.record(comm_.stream);
      mine.ready = &scratch->ready;
      mine.done = &scratch->done;
    }
  } catch (const Error& e) {
    mine.error = e.what();
    mine.status = e.status();
  }
  // Copies happen inside the rendezvous, while every peer's publication is alive; nothing may
  // throw out of it (the peers are waiting at its closing barrier), so errors are kept for after.
  std::optional<Error> failure;
  bool any_device = false, refused = false;
  group_.exchange(&mine, [&](const std::vector<const void*>& raw) {
    std::vector<const Published*> all;
    for (const void* p : raw) all.push_back(static_cast<const Published*>(p));
    for (const Published* p : all) any_device = any_device || p->memory == Memory::device;
    failure = verdict(all, comm_.rank, agreement);
    refused = failure.has_value();
    if (refused) return;
    try {
      if (mine.memory == Memory::host) {
        for (const Transfer& t : transfers(program, all, false)) {
          run_host_copies(t.copies, static_cast<const char*>(all[static_cast<size_t>(t.from)]->src->data()),
                          static_cast<char*>(all[static_cast<size_t>(t.to)]->dst->data()));
        }
      }
      if (mine.memory == Memory::device) queue_copies(*scratch, program, all, push);
    } catch (const Error& e) {
      failure = e;
    } catch (const std::bad_alloc&) {
      failure = Error(GDAP_ERR_NO_MEMORY, "out of host memory while copying");
    }
  });
  // A rank whose copy failed after the verdict still meets the peers below, so none waits for it.
  if (any_device && !refused) {
    // Every device rank's stream waits for the peers' copy kernels before the caller's later
    // work on it. Every rank decides alike (all saw the same publications), so all meet here.
    group_.exchange(&mine, [&](const std::vector<const void*>& raw) {
      for (const void* p : raw) {
        const auto* peer = static_cast<const Published*>(p);
        if (scratch != nullptr && peer->done != nullptr && peer != &mine) peer->done->wait_on(comm_.stream);
      }
    });
  }
  if (failure) throw *failure;
}

void GroupEngine::check_section(const gdap_array& a, std::string_view which, std::string_view operation,
                                bool reduce) const {
  const Memory m = memory_of(&a);
  if (m == Memory::none) fail(GDAP_ERR_UNSUPPORTED, "{} lives on device type {}, which gdap cannot move", which, a.section.device.type);
  if (reduce && m == Memory::device) {
    fail(GDAP_ERR_UNSUPPORTED, "{} is in CUDA device memory: on an in-process group {} reduces host-accessible "
         "sections (host, pinned or managed memory); device sections reduce over NCCL (gdap_comm_from_nccl)", which,
         operation);
  }
}

// Every rank reads every peer's buffer into its own result, in rank order (so every rank's result
// is bitwise the same), at the rendezvous; it writes its own buffer only after the rendezvous,
// when no peer reads any more.
void GroupEngine::allreduce(void* data, int64_t count, const Reduce& r) {
  if (count == 0) return;  // every rank's buffer has the same size: every rank returns here
  const size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(r.dtype.bits / 8);
  const std::unique_ptr<char[]> result(new char[bytes]);  // uninitialised: the copy below fills it
  group_.exchange(data, [&](const std::vector<const void*>& buffers) {
    std::memcpy(result.get(), buffers[0], bytes);
    for (size_t q = 1; q < buffers.size(); ++q) r.combine(r.dtype, r.op, result.get(), buffers[q], count);
  });
  std::memcpy(data, result.get(), bytes);
}

// Each rank combines its segment of every peer's `send`, in rank order (the order allreduce
// combines in), at the rendezvous, a chunk at a time, and writes each chunk's result to `recv`.
// In place, `recv` is the rank's own segment of its `send`: the peers read only their segments, so
// no one reads what it overwrites.
void GroupEngine::reduce_scatter(const void* send, void* recv, int64_t segment, const Reduce& r) {
  const size_t es = static_cast<size_t>(r.dtype.bits / 8), bytes = static_cast<size_t>(segment) * es;
  const size_t mine = static_cast<size_t>(comm_.rank) * bytes;
  constexpr size_t kChunk = size_t{1} << 16;  // stays in cache while every peer's part is added
  std::vector<char> acc(std::min(kChunk, bytes));
  char* out = static_cast<char*>(recv);
  group_.exchange(send, [&](const std::vector<const void*>& sends) {
    for (size_t at = 0; at < bytes; at += kChunk) {
      const size_t n = std::min(kChunk, bytes - at);
      std::memcpy(acc.data(), static_cast<const char*>(sends[0]) + mine + at, n);
      for (size_t q = 1; q < sends.size(); ++q) {
        r.combine(r.dtype, r.op, acc.data(), static_cast<const char*>(sends[q]) + mine + at, static_cast<int64_t>(n / es));
      }
      std::memcpy(out + at, acc.data(), n);
    }
  });
}

int64_t GroupEngine::reduce_scatter_in_place(void* buffer, int64_t segment, const Reduce& r) {
  if (segment == 0) return 0;
  const size_t bytes = static_cast<size_t>(segment) * static_cast<size_t>(r.dtype.bits / 8);
  reduce_scatter(buffer, static_cast<char*>(buffer) + static_cast<size_t>(comm_.rank) * bytes, segment, r);
  return comm_.rank * segment;
}

std::unique_ptr<Broadcasts> GroupEngine::broadcasts(const BroadcastSetup& setup) {
  if (setup.memory != Memory::device) return std::make_unique<HostBroadcasts>(group_, setup.sections);
  const int device = setup.sections.front()->section.device.id;
  auto* events = comm_.cache.find<BroadcastEvents>("broadcasts");
  if (events == nullptr || events->device != device) {
    cuda::set_device(device);
    auto made = std::make_unique<BroadcastEvents>();
    made->device = device;
    events = made.get();
    comm_.cache.slot("broadcasts") = std::move(made);
  }
  return std::make_unique<DeviceBroadcasts>(group_, setup.sections, setup.copy_stream, *events);
}

}  // namespace

std::unique_ptr<Engine> make_engine(GroupComm& comm) { return std::make_unique<GroupEngine>(comm); }

}  // namespace gdap::exchange
