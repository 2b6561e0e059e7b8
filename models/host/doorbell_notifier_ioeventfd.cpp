#include "nvmesim/models/host/doorbell_notifier_ioeventfd.h"

#include <algorithm>

#include "nvmesim/models/host/host_thread.h"

using namespace sc_core;

namespace nvmesim::models {

IoeventfdNotifier::IoeventfdNotifier(NotifyTarget& target, uint16_t queues, EventfdFault fault)
    : target_(target), fault_(fault), eventfd_set_(2u * queues, 0), stuck_(target.thread_count()) {}

void IoeventfdNotifier::doorbell_written(uint16_t qid, bool, sc_time& delay) {
  target_.thread(target_.thread_of(qid)).kick(delay);
}

bool IoeventfdNotifier::eventfd_signalled(uint32_t index, uint16_t qid, const sc_time& delay) {
  // Ming Lin's ioeventfd bug: the handler never read (cleared) the eventfd.
  if (fault_ == EventfdFault::LostWakeups) {
    // The lost-wake-up reading: once set, later writes do not make it
    // readable again, so the work waits until something else wakes the thread.
    if (eventfd_set_.at(index)) return false;
    eventfd_set_[index] = 1;
  } else if (fault_ == EventfdFault::Spin && !eventfd_set_.at(index)) {
    // QEMU's reading: the fd stays readable, so every loop iteration of its
    // thread runs the handler again and the thread never sleeps.
    eventfd_set_[index] = 1;
    const unsigned thread = target_.thread_of(qid);
    stuck_[thread].push_back(index);
    target_.thread(thread).set_spinning(true);
  }
  target_.thread(target_.thread_of(qid)).kick(delay);
  return true;
}

// A still-readable eventfd: its handler runs again on this iteration.
unsigned IoeventfdNotifier::on_emulation_start(unsigned index) {
  for (const uint32_t doorbell : stuck_[index]) {
    if (doorbell % 2 == 0)
      target_.mark_sq(uint16_t(doorbell / 2));
    else
      target_.mark_cq(uint16_t(doorbell / 2), true);
  }
  return unsigned(stuck_[index].size());
}

void IoeventfdNotifier::on_controller_reset() {
  std::fill(eventfd_set_.begin(), eventfd_set_.end(), 0);
  for (unsigned i = 0; i < stuck_.size(); ++i) {
    stuck_[i].clear();  // the eventfds are torn down with the queues
    target_.thread(i).set_spinning(false);
  }
}

}  // namespace nvmesim::models
