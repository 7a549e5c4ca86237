#include "move/group_copies.hpp"

#include <cstdlib>
#include <cstring>

namespace gdap::move {

GroupDeviceScratch& group_device_scratch(std::unique_ptr<Scratch>& slot, int device) {
  auto* s = dynamic_cast<GroupDeviceScratch*>(slot.get());
  if (s == nullptr || s->device != device) {
    slot.reset();  // the old one's device memory goes before the new one's is taken
    auto made = std::make_unique<GroupDeviceScratch>();
    made->device = device;
    s = made.get();
    slot = std::move(made);
  }
  return *s;
}

bool push_mode() {
  const char* mode = std::getenv("GDAP_GROUP_COPY");
  return mode == nullptr || std::strcmp(mode, "pull") != 0;
}

}  // namespace gdap::move
