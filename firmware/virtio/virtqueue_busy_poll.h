// vhost-style busy polling of the virtqueues one host thread serves, as
// Linux's vhost runs it (drivers/vhost/net.c: vhost_net_tx_get_vq_desc and
// vhost_net_busy_poll, from Jason Wang's "vhost_net: basic polling support",
// Linux 4.6; QEMU passes the window as the tap's poll-us): a handler that
// drained its queue leaves guest notifications off and spins on the avail
// rings for up to the window; work found restarts it, other work queued on
// the thread (vhost_has_work) breaks it, and only a window that expires with
// nothing new switches notifications back on (vhost_enable_notify, then one
// more look at the ring). Decisions only: times are ns the caller gives.
#pragma once

#include <cstdint>
#include <vector>

namespace nvmesim::fw {

class VirtqueueBusyPoll {
 public:
  explicit VirtqueueBusyPoll(uint64_t window_ns = 0) : window_ns_(window_ns) {}
  uint64_t window_ns() const { return window_ns_; }
  bool enabled() const { return window_ns_ != 0; }

  // Queue q was drained with its notifications left off: it is polled from
  // now on, until a window expires with nothing on it (drop).
  void add(uint16_t q);
  void drop(uint16_t q);
  void clear() { polled_.clear(); }
  bool polled(uint16_t q) const;
  const std::vector<uint16_t>& polled() const { return polled_; }

  // A window opens at `now_ns` (every polled queue drained); its deadline.
  uint64_t open(uint64_t now_ns);
  uint64_t deadline_ns() const { return deadline_ns_; }

  // What the poll loop does next at `now_ns`, in vhost's order: the loop
  // condition (vhost_can_busy_poll: the window) first, then other work on
  // the thread, then the avail rings (vhost_vq_avail_empty). `avail_found`
  // is only asked for (`look`) when the first two did not end the window.
  enum class Step { Spin, Found, Interrupted, Expired };
  template <class Look>
  Step step(uint64_t now_ns, bool other_work, Look&& avail_found) const {
    if (now_ns >= deadline_ns_) return Step::Expired;
    if (other_work) return Step::Interrupted;
    return avail_found() ? Step::Found : Step::Spin;
  }

 private:
  uint64_t window_ns_;
  uint64_t deadline_ns_ = 0;
  std::vector<uint16_t> polled_;  // in the order they started polling
};

}  // namespace nvmesim::fw
