#include "comm/map_gather.hpp"

#include "core/error.hpp"
#include "maps/map.hpp"
#include "protocol/dim.hpp"

#include <array>
#include <cstring>
#include <functional>
#include <string_view>
#include <utility>

namespace gdap {
namespace {

constexpr const char* kCacheKey = "comm.maps";     // the communicator's cache entry
constexpr size_t kSlots = 8;                      // a solver's few distributions
constexpr size_t kMaxEntryBytes = size_t{64} << 20;  // all ranks' dictionaries of one map
constexpr size_t kMaxBytes = size_t{256} << 20;      // of all the remembered maps

struct Slot {
  std::string mine;          // this rank's packed dictionaries when the map was built
  SharedMap map;
  uint64_t fingerprint = 0;  // 0: empty
  size_t bytes = 0;          // all ranks' packed dictionaries: the same on every rank
  uint64_t used = 0;         // when last taken or built: the same on every rank
};

// Every rank changes its slots in the same way at the same point of the same collective calls,
// so a slot's number means the same map on every rank (the fingerprint checks it).
struct MapCache : Scratch {
  std::array<Slot, kSlots> slots;
  uint64_t clock = 0;

  void clear() noexcept {
    for (Slot& s : slots) s = Slot{};
  }

  size_t bytes() const {
    size_t n = 0;
    for (const Slot& s : slots) n += s.bytes;
    return n;
  }

  // The slot to fill: an empty one, else the least recently used (the same on every rank).
  Slot& victim() {
    Slot* v = &slots[0];
    for (Slot& s : slots) {
      if (s.fingerprint == 0) return s;
      if (s.used < v->used) v = &s;
    }
    return *v;
  }

  // Remembers a map just built from `every`; on any failure this rank forgets everything instead
  // (its peers' slots then no longer match its own, and the fingerprints keep them apart).
  void remember(const std::string& mine, const SharedMap& map, uint64_t fingerprint, size_t bytes) noexcept {
    if (bytes > kMaxEntryBytes) return;
    try {
      Slot fresh{mine, map, fingerprint, bytes, ++clock};
      Slot& into = victim();
      into = std::move(fresh);
      while (this->bytes() > kMaxBytes) {
        Slot* oldest = nullptr;
        for (Slot& s : slots) {
          if (s.fingerprint != 0 && &s != &into && (oldest == nullptr || s.used < oldest->used)) oldest = &s;
        }
        if (oldest == nullptr) break;
        *oldest = Slot{};
      }
    } catch (...) {
      clear();
    }
  }
};

uint64_t word(std::string_view bytes, size_t k) {
  uint64_t w = 0;
  if (bytes.size() >= (k + 1) * sizeof w) std::memcpy(&w, bytes.data() + k * sizeof w, sizeof w);
  return w;
}

void append_word(std::string& out, uint64_t w) { out.append(reinterpret_cast<const char*>(&w), sizeof w); }

// Never 0 (an empty slot's mark).
uint64_t fingerprint_of(const std::vector<std::string>& every) {
  uint64_t h = every.size();
  for (const std::string& part : every) h = (h ^ std::hash<std::string_view>{}(part)) * 0x100000001b3ULL;
  return h == 0 ? 1 : h;
}

// Appends one rank's dictionaries to `dims`; their indices point into `storage`.
void unpack_dims(const std::string& bytes, int64_t rank, int64_t ndim, std::vector<gdap_dim>& dims,
                 std::vector<std::vector<int64_t>>& storage) {
  size_t at = 0;
  auto take = [&](void* to, size_t n) {
    if (bytes.size() - at < n) fail(GDAP_ERR_INTERNAL, "rank {}: truncated dictionaries", rank);
    std::memcpy(to, bytes.data() + at, n);
    at += n;
  };
  int64_t theirs = 0;
  take(&theirs, sizeof theirs);
  if (theirs != ndim) fail(GDAP_ERR_PROTOCOL, "rank {} has {} dimensions but rank 0 has {}", rank, theirs, ndim);
  for (int64_t i = 0; i < ndim; ++i) {
    gdap_dim d{};
    take(&d, sizeof d);
    if (d.num_indices > 0) {
      auto& held = storage.emplace_back(static_cast<size_t>(d.num_indices));
      take(held.data(), sizeof(int64_t) * held.size());
      d.indices = held.data();
    }
    dims.push_back(d);
  }
}

}  // namespace

std::string pack_dims(int64_t ndim, const gdap_dim* dims) {
  if (ndim < 0 || ndim > 64) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim {} is not in [0, 64]", ndim);
  if (ndim > 0) require(dims, "dims");
  std::string out(reinterpret_cast<const char*>(&ndim), sizeof ndim);
  for (int64_t i = 0; i < ndim; ++i) {
    gdap_dim d = read_dim(dims, i);
    const int64_t* indices = d.indices;
    if (d.num_indices < 0 || (d.num_indices > 0 && indices == nullptr)) {
      fail(GDAP_ERR_PROTOCOL, "dimension {}: indices is NULL or num_indices {} is negative", i, d.num_indices);
    }
    d.indices = nullptr;
    out.append(reinterpret_cast<const char*>(&d), sizeof d);
    if (d.num_indices > 0) out.append(reinterpret_cast<const char*>(indices), sizeof(int64_t) * d.num_indices);
  }
  return out;
}

gdap_map* map_from_packed(const std::vector<std::string>& every, int64_t nranks) {
  int64_t ndim0 = 0;
  if (every[0].size() >= sizeof ndim0) std::memcpy(&ndim0, every[0].data(), sizeof ndim0);
  std::vector<gdap_dim> dims;
  std::vector<std::vector<int64_t>> storage;
  dims.reserve(static_cast<size_t>(nranks * ndim0));
  for (int64_t r = 0; r < nranks; ++r) unpack_dims(every[static_cast<size_t>(r)], r, ndim0, dims, storage);
  return new gdap_map(nranks, ndim0, dims.data());
}

void MapGather::add(std::string which, int64_t ndim, const gdap_dim* dims) {
  mine_.push_back(pack_dims(ndim, dims));
  which_.push_back(std::move(which));
}

std::string MapGather::offer() const {
  const MapCache* cache = comm_.cache.find<MapCache>(kCacheKey);
  std::string out;
  for (size_t s = 0; s < kSlots; ++s) append_word(out, cache != nullptr ? cache->slots[s].fingerprint : 0);
  for (const std::string& mine : mine_) {
    uint64_t matches = 0;
    for (size_t s = 0; cache != nullptr && s < kSlots; ++s) {
      const Slot& slot = cache->slots[s];
      if (slot.fingerprint != 0 && slot.mine == mine) matches |= uint64_t{1} << s;
    }
    append_word(out, matches);
  }
  return out;
}

std::vector<SharedMap> MapGather::finish(const std::vector<std::string>& offers) {
  MapCache& cache = comm_.cache.get<MapCache>(kCacheKey);
  std::vector<SharedMap> maps(mine_.size());
  std::vector<size_t> missing;
  for (size_t i = 0; i < mine_.size(); ++i) {
    uint64_t common = ~uint64_t{0};
    for (const std::string& o : offers) common &= word(o, kSlots + i);
    for (size_t s = 0; s < kSlots && !maps[i]; ++s) {
      if ((common >> s & 1) == 0) continue;
      bool same = true;
      for (const std::string& o : offers) same = same && word(o, s) == word(offers[0], s);
      if (!same) continue;
      maps[i] = cache.slots[s].map;
      cache.slots[s].used = ++cache.clock;
    }
    if (!maps[i]) missing.push_back(i);
  }
  if (missing.empty()) return maps;
  // One exchange for every missing map: each rank's dictionaries, length first.
  std::string mine;
  for (size_t i : missing) {
    append_word(mine, mine_[i].size());
    mine += mine_[i];
  }
  const std::vector<std::string> all = comm_.allgather(mine);
  std::vector<size_t> at(all.size(), 0);
  std::vector<std::pair<std::vector<std::string>, size_t>> built;  // this call's: one map per distribution
  for (size_t i : missing) {
    std::vector<std::string> every;
    size_t bytes = 0;
    for (size_t r = 0; r < all.size(); ++r) {
      const uint64_t n = word(std::string_view(all[r]).substr(at[r]), 0);
      every.push_back(all[r].substr(at[r] + sizeof n, n));
      at[r] += sizeof n + n;
      bytes += n;
    }
    for (const auto& [seen, j] : built) {
      if (seen == every) maps[i] = maps[j];  // source and result alike (every rank sees the same)
    }
    if (maps[i]) continue;
    try {
      maps[i] = SharedMap(map_from_packed(every, comm_.size));
    } catch (const Error& e) {
      fail(e.status(), "{}'s distribution: {}", which_[i], e.what());
    }
    cache.remember(mine_[i], maps[i], fingerprint_of(every), bytes);
    built.emplace_back(std::move(every), i);
  }
  return maps;
}

}  // namespace gdap
