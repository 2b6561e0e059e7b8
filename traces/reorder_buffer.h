// The trace writers' reorder buffer. Hooks arrive out of time order (a vCPU
// runs ahead of the kernel by up to a quantum); the buffer hands events out
// in (time, arrival) order once the writer knows nothing earlier can come.
// An event dated before one already handed out is moved to that time and
// counted late, so the file stays ordered.
#pragma once

#include <cstdint>
#include <queue>
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
    heap_.push(e);
  }
  // Hands every event dated before `horizon` to emit(e), in order; emit may
  // push more events (handed out in the same call when they are early enough).
  template <class Emit>
  void flush(uint64_t horizon, Emit&& emit) {
    while (!heap_.empty() && heap_.top().t < horizon) {
      const Event e = heap_.top();
      heap_.pop();
      emitted_ = e.t;
      emit(e);
    }
  }
  uint64_t emitted() const { return emitted_; }  // time of the last event handed out
  uint64_t late() const { return late_; }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.t != b.t ? a.t > b.t : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t seq_ = 0, emitted_ = 0, late_ = 0;
};

}  // namespace nvmesim::traces
