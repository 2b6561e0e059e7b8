// The trace writers' reorder buffer. Hooks arrive out of time order (a vCPU
// runs ahead of the kernel by up to a quantum); the buffer hands events out
// in (time, arrival) order once the writer knows nothing earlier can come.
// An event dated before one already handed out is moved to that time and
// counted late, so the file stays ordered.
//
// Events arrive nearly in order, so they are kept sorted in a vector:
// an insertion searches back from the newest and moves only the few later
// ones, and the oldest are handed out from the front. (A binary heap costs
// a logarithmic sift per push and per pop, which dominated a traced run.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvmesim::traces {

template <class Event>  // has uint64_t t (ps) and seq (set here)
class ReorderBuffer {
 public:
  void push(Event e) {
    if (e.t < emitted_) {
      ++late_;
      e.t = emitted_;
    }
    e.seq = seq_++;
    // After every event of the same or an earlier time: seq grows with
    // arrival, so (t, seq) order is arrival order within a time.
    size_t at = events_.size();
    while (at > head_ && events_[at - 1].t > e.t) --at;
    events_.insert(events_.begin() + std::ptrdiff_t(at), e);
  }
  // Hands every event dated before `horizon` to emit(e), in order; emit may
  // push more events (handed out in the same call when they are early enough).
  template <class Emit>
  void flush(uint64_t horizon, Emit&& emit) {
    while (head_ < events_.size() && events_[head_].t < horizon) {
      const Event e = events_[head_++];
      emitted_ = e.t;
      emit(e);
    }
    // Reclaim the handed-out front: all of it when empty, else once it is
    // the larger part (each event is moved O(1) times on average).
    if (head_ == events_.size()) {
      events_.clear();
      head_ = 0;
    } else if (head_ > 64 && head_ * 2 > events_.size()) {
      events_.erase(events_.begin(), events_.begin() + std::ptrdiff_t(head_));
      head_ = 0;
    }
  }
  size_t size() const { return events_.size() - head_; }  // events held
  uint64_t emitted() const { return emitted_; }           // time of the last event handed out
  uint64_t late() const { return late_; }

 private:
  std::vector<Event> events_;  // [head_, end) held, sorted by (t, seq)
  size_t head_ = 0;
  uint64_t seq_ = 0, emitted_ = 0, late_ = 0;
};

}  // namespace nvmesim::traces
