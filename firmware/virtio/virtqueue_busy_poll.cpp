#include "nvmesim/firmware/virtio/virtqueue_busy_poll.h"

#include <algorithm>

namespace nvmesim::fw {

void VirtqueueBusyPoll::add(uint16_t q) {
  if (!polled(q)) polled_.push_back(q);
}

void VirtqueueBusyPoll::drop(uint16_t q) {
  polled_.erase(std::remove(polled_.begin(), polled_.end(), q), polled_.end());
}

bool VirtqueueBusyPoll::polled(uint16_t q) const {
  return std::find(polled_.begin(), polled_.end(), q) != polled_.end();
}

uint64_t VirtqueueBusyPoll::open(uint64_t now_ns) {
  deadline_ns_ = now_ns + window_ns_;
  return deadline_ns_;
}

}  // namespace nvmesim::fw
