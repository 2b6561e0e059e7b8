#include "nvmesim/platform/verify/model.h"

#include <cstring>
#include <new>
#include <sstream>

namespace nvmesim::platform::verify {

namespace {

using fw::DbbufPublish;
using Pub = DbbufPublish::Step;

enum GuestPc : uint8_t { kGuestIdle, kGuestPublish, kGuestMmio, kGuestIrq };

// The device's program counter: idle, inside an SQ pass or a CQ posting run
// (the position of its fw::DbbufDevicePass cursor), or about to send the
// posting run's MSI-X.
using Pass = fw::DbbufDevicePass;
using DevStep = fw::DbbufDeviceStep;
constexpr uint8_t kDevIdle = 0;
constexpr uint8_t kDevSqPass = 1;                              // + cursor position
constexpr uint8_t kDevCqPost = kDevSqPass + Pass::kPositions;  // + cursor position
constexpr uint8_t kDevMsix = kDevCqPost + Pass::kPositions;
static_assert(kDevMsix < 16, "the device's program counter fits a nibble (packed_state.cpp)");

struct Ctx {
  const ModelConfig& c;
  bool device_covers, driver_shadow;
  uint32_t n, m;
  fw::DbbufDeviceOrder order;
  const fw::DbbufStepCode& code;
  explicit Ctx(const ModelConfig& cfg)
      : c(cfg),
        device_covers(fw::device_dbbuf_covers(cfg.dbbuf != fw::DbbufMode::Off, cfg.dbbuf, cfg.qid)),
        driver_shadow(fw::driver_uses_shadow(cfg.dbbuf != fw::DbbufMode::Off, cfg.admin_shadow, cfg.qid)),
        n(cfg.qsize),
        m(cfg.cq_size()),
        order(device_access_order(cfg)),
        code(cfg.step_code_override ? *cfg.step_code_override : fw::kDbbufStepCode) {}
};

// The step code's memory (fw::DbbufDeviceMemory) in the model: the device's
// shadow load sees memory (where the guest's drained stores are); its
// EventIdx store is recorded, and the model places it (in memory at once, or
// in the device's write buffer when no barrier follows).
class StepMemory final : public fw::DbbufDeviceMemory {
 public:
  explicit StepMemory(uint16_t shadow = 0) : shadow_(shadow) {}
  bool load_shadow(uint32_t& value) override {
    loaded = true;
    value = shadow_;
    return true;
  }
  void store_eventidx(uint32_t value) override {
    stored = true;
    this->value = value;
  }
  void invalid_shadow_value() override {}  // the asynchronous event is not modelled
  bool loaded = false, stored = false;
  uint32_t value = 0;

 private:
  uint16_t shadow_;
};

// The device's doorbell state of one queue, as the step code takes it.
fw::DbbufQueue queue_of(const State& s, const Ctx& x, bool sq) {
  return sq ? fw::DbbufQueue{x.n, s.dev_sq_head, s.dev_sq_tail, s.sq_parked != 0}
            : fw::DbbufQueue{x.m, s.dev_cq_head, s.dev_cq_tail, s.cq_parked != 0};
}
void set_queue(State& s, bool sq, const fw::DbbufQueue& q) {
  if (sq) {
    s.dev_sq_head = uint8_t(q.head);
    s.dev_sq_tail = uint8_t(q.tail);
    s.sq_parked = q.eventidx_parked;
  } else {
    s.dev_cq_head = uint8_t(q.head);
    s.dev_cq_tail = uint8_t(q.tail);
    s.cq_parked = q.eventidx_parked;
  }
}
// The controller's StoreEventIdx code on `s`'s queue: `q` is the queue after
// it, `memory` says whether it stored and what.
void run_store_eventidx(const State& s, const Ctx& x, bool sq, fw::DbbufQueue& q, StepMemory& memory) {
  q = queue_of(s, x, sq);
  if (sq) x.code.store_sq_eventidx(x.c.sq_eventidx, q, memory);
  else x.code.store_cq_eventidx(x.c.cq_eventidx, q, memory);
}

bool in_pass(const State& s) { return s.device_pc >= kDevSqPass && s.device_pc < kDevMsix; }
Pass pass_of(const State& s, const Ctx& x) {
  const bool sq = s.device_pc < kDevCqPost;
  return Pass::at(sq, x.order, uint8_t(s.device_pc - (sq ? kDevSqPass : kDevCqPost)));
}
// Where the device is once the cursor moved: a finished SQ pass leaves it
// idle, a finished posting run sends its MSI-X if it wrote a CQE.
void set_pass(State& s, const Pass& p) {
  if (!p.done()) s.device_pc = uint8_t((p.sq() ? kDevSqPass : kDevCqPost) + p.position());
  else s.device_pc = !p.sq() && s.posted ? kDevMsix : kDevIdle;
}

void copy_state(State& dst, const State& src) { std::memcpy(&dst, &src, sizeof(State)); }

void start_publish(State& s, const ModelConfig& c, uint16_t value) {
  s.publish = DbbufPublish(value, c.full_barrier, c.need_event);
}
void clear_publish(State& s) { s.publish = cleared_publish(); }

// The guest's load: its own newest buffered store to the location, else memory.
uint16_t guest_load_shadow(const State& s, bool sq) {
  const uint8_t loc = sq ? kShadowSq : kShadowCq;
  for (unsigned i = s.store_count; i-- > 0;)
    if (s.store_buffer[i].location == loc) return s.store_buffer[i].value;
  return sq ? s.shadow_sq : s.shadow_cq;
}

// wmb(): on x86 stores already leave in order; on Arm it starts a new epoch
// that may not pass the stores before it (nothing to order when empty).
void write_barrier(State& s, const ModelConfig& c) {
  if (c.memory == MemoryModel::Arm && s.store_count != 0) s.wmb_epoch++;
}

void push_store(State& s, uint8_t loc, uint16_t value) {
  s.store_buffer[s.store_count++] = BufferedStore{loc, s.wmb_epoch, value};
}

// Folds the device's internal moves (a pass's decisions, a policy that
// writes nothing, a barrier with nothing to wait for) so every state sits
// where the next visible access is.
void settle_device(State& s, const Ctx& x) {
  while (in_pass(s)) {
    Pass p = pass_of(s, x);
    switch (p.step()) {
      case DevStep::FetchSqe:
        if (s.dev_sq_head != s.dev_sq_tail && s.held < x.n) return;
        p.finish();
        break;
      case DevStep::StoreEventIdx: {
        fw::DbbufQueue q;
        StepMemory memory;
        run_store_eventidx(s, x, p.sq(), q, memory);
        if (memory.stored) return;  // an access the driver can see
        set_queue(s, p.sq(), q);
        p.advance(x.device_covers);
        break;
      }
      case DevStep::Barrier:
        if (s.dev_store_pending) return;  // waits for the store to drain
        p.advance(x.device_covers);
        break;
      case DevStep::CqePending:
        if (s.held == 0) p.finish();
        else p.advance(x.device_covers);
        break;
      case DevStep::WriteCqe:
        if (!fw::Ring{x.m}.full(s.dev_cq_head, s.dev_cq_tail)) return;
        s.stalled = 1;
        p.finish();
        break;
      default: return;  // LoadShadow: an access
    }
    set_pass(s, p);
  }
}

class Builder {
 public:
  Builder(const State& s, const Ctx& x, std::vector<Successor>& out, bool text)
      : s_(s), x_(x), out_(out), text_(text) {}

  // A new successor starting from the current state.
  Successor& add(StepKind kind, bool sq = true, uint16_t arg = 0) {
    out_.emplace_back();
    Successor& n = out_.back();
    copy_state(n.state, s_);
    n.step.kind = kind;
    n.step.sq = sq;
    n.step.arg = arg;
    return n;
  }
  // `text` builds the step's text: only called for counterexamples, so the
  // search itself builds no strings.
  template <class Text>
  void say(Successor& n, Text&& text) {
    if (text_) n.step.text = text();
  }
  void violate(Successor& n, Property p, const std::string& why) {
    n.violation = p;
    n.why = why;
  }
  bool text() const { return text_; }

 private:
  const State& s_;
  const Ctx& x_;
  std::vector<Successor>& out_;
  bool text_;
};

std::string q(bool sq) { return sq ? "SQ" : "CQ"; }

// A doorbell MMIO write reaching the controller (firmware
// controller_registers.cpp write_doorbell, with the buffer state of the run).
void mmio_effect(State& s, const Ctx& x, bool sq, uint16_t value) {
  const bool ignored = x.device_covers && x.c.qid != 0 &&
                       x.c.mmio_doorbell_value == fw::MmioDoorbellValue::Ignore;
  if (sq) {
    if (value >= x.n || (!ignored && !fw::sq_tail_acceptable(x.n, s.dev_sq_head, s.dev_sq_tail, value)))
      return;  // Invalid Doorbell Write Value: an asynchronous event, no kick
    if (!ignored) {
      s.dev_sq_tail = uint8_t(value);
      if (x.c.qid == 0 && x.device_covers) s.shadow_sq = value;  // QEMU mirrors the admin value
    }
    s.sq_kick = 1;
    return;
  }
  if (value >= x.m || (!ignored && !fw::cq_head_acceptable(x.m, s.dev_cq_head, s.dev_cq_tail, value)))
    return;
  const bool was_full = fw::Ring{x.m}.full(s.dev_cq_head, s.dev_cq_tail);
  if (!ignored) {
    s.dev_cq_head = uint8_t(value);
    if (x.c.qid == 0 && x.device_covers) s.shadow_cq = value;
  }
  if (s.held > 0 && (ignored || was_full)) s.cq_kick = 1;
}

bool decide(const DbbufPublish& p, const ModelConfig& c) {
  if (c.need_event_override) return c.need_event_override(p.eventidx(), p.new_value(), p.old_value());
  return p.ring();
}

void guest_steps(const State& s, const Ctx& x, Builder& b) {
  const ModelConfig& c = x.c;
  const fw::Ring sq_ring{x.n}, cq_ring{x.m};
  switch (s.guest_pc) {
    case kGuestIdle: {
      const unsigned outstanding = unsigned(s.next_seq - s.expect_seq);
      const unsigned remaining = c.commands - s.completed - outstanding;
      // Submit: build the SQE in the next slot (a store), advance the tail.
      const bool buffer_room = s.store_count < kMaxStoreBuffer;  // a full store buffer stalls the CPU
      if (remaining > 0 && !sq_ring.full(s.sq_head, s.sq_tail) && outstanding < x.n - 1 && buffer_room) {
        Successor& n = b.add(StepKind::Submit, true, s.sq_tail);
        State& t = n.state;
        const uint8_t old = s.sqe[s.sq_tail];
        if (old != 0 && old >= s.fetch_seq)
          b.violate(n, Property::QueueOverflow,
                    "SQ overflow: slot " + std::to_string(s.sq_tail) + " still holds unfetched command #" +
                        std::to_string(old));
        push_store(t, s.sq_tail, s.next_seq);
        t.sq_tail = uint8_t(sq_ring.advance(s.sq_tail));
        t.next_seq++;
        if (b.text())
          b.say(n, [&] {
            return "driver: store command #" + std::to_string(s.next_seq) + " in SQ slot " + std::to_string(s.sq_tail) +
                   " (store buffer), tail " + std::to_string(t.sq_tail);
          });
      }
      // Publish the SQ tail.
      if (s.sq_tail != s.sq_published) {
        if (x.driver_shadow && buffer_room) {
          Successor& n = b.add(StepKind::StoreShadow, true, s.sq_tail);
          State& t = n.state;
          start_publish(t, c, s.sq_tail);
          t.guest_pc = kGuestPublish;
          t.publishing_sq = 1;
          t.sq_published = s.sq_tail;
          // The firmware's sequence up to the first access the device can
          // see: wmb, load the old shadow value (own store or memory), store.
          while (t.publish.step() == Pub::WriteBarrier || t.publish.step() == Pub::LoadShadow ||
                 t.publish.step() == Pub::StoreShadow) {
            switch (t.publish.step()) {
              case Pub::WriteBarrier: write_barrier(t, c); t.publish.advance(); break;
              case Pub::LoadShadow: t.publish.advance(guest_load_shadow(t, true)); break;
              default: push_store(t, kShadowSq, s.sq_tail); t.publish.advance(); break;
            }
          }
          if (b.text())
            b.say(n, [&] {
              return "driver: store shadow SQ tail = " + std::to_string(s.sq_tail) + " (store buffer; old " +
                     std::to_string(t.publish.old_value()) + ")";
            });
        } else if (!x.driver_shadow && s.store_count == 0) {
          Successor& n = b.add(StepKind::MmioDoorbell, true, s.sq_tail);
          n.state.sq_published = s.sq_tail;
          mmio_effect(n.state, x, true, s.sq_tail);
          b.say(n, [&] { return "driver: MMIO SQ doorbell = " + std::to_string(s.sq_tail); });
        }
      }
      if (s.irq_pending) {
        Successor& n = b.add(StepKind::TakeInterrupt, false);
        n.state.irq_pending = 0;
        n.state.guest_pc = kGuestIrq;
        b.say(n, [&] { return "driver: take the interrupt"; });
      }
      if (c.reset != ResetMode::Off && !s.reset_done && s.completed > 0 && s.store_count == 0) {
        Successor& n = b.add(StepKind::Reset, true);
        State& t = n.state;
        t.reset_done = 1;
        // Outstanding commands are abandoned without CQEs and go again as new submissions.
        t.expect_seq = s.next_seq;
        t.fetch_seq = s.next_seq;
        t.sq_tail = t.sq_published = t.sq_head = t.cq_head = t.cq_published = 0;
        t.cq_phase = 1;
        t.irq_pending = 0;
        std::memset(t.cqe_seq, 0, sizeof t.cqe_seq);  // nvme_init_queue clears the CQ
        std::memset(t.cqe_sqhd, 0, sizeof t.cqe_sqhd);
        std::memset(t.cqe_phase, 0, sizeof t.cqe_phase);
        t.cq_unconsumed = 0;
        if (c.reset == ResetMode::Zeroed) t.shadow_sq = t.shadow_cq = t.eventidx_sq = t.eventidx_cq = 0;
        t.device_pc = kDevIdle;
        t.dev_sq_head = t.dev_sq_tail = t.dev_cq_head = t.dev_cq_tail = 0;
        t.dev_phase = 1;
        t.sq_kick = t.cq_kick = t.stalled = t.sq_parked = t.cq_parked = t.posted = 0;
        t.held = 0;
        t.dev_store_location = t.dev_store_pending = 0;
        t.dev_store_value = 0;
        if (b.text())
          b.say(n, [&] {
            return std::string("driver: controller reset and bring-up again, doorbell buffer ") +
                   (c.reset == ResetMode::Zeroed ? "cleared" : "kept as it was") + " (shadow SQ " +
                   std::to_string(t.shadow_sq) + ", CQ " + std::to_string(t.shadow_cq) + "; EventIdx SQ " +
                   std::to_string(t.eventidx_sq) + ", CQ " + std::to_string(t.eventidx_cq) + ")";
          });
      }
      break;
    }
    case kGuestPublish: {
      const bool sq = s.publishing_sq;
      // mb() waits for the store buffer; then the EventIdx load and the decision.
      if (s.publish.step() == Pub::FullBarrier && s.store_count != 0) break;
      Successor& n = b.add(StepKind::LoadEventIdx, sq);
      State& t = n.state;
      const bool barrier = t.publish.step() == Pub::FullBarrier;
      if (barrier) t.publish.advance();
      t.publish.advance(sq ? s.eventidx_sq : s.eventidx_cq);
      const bool ring = decide(t.publish, c);
      n.step.arg = ring;
      if (b.text())
        b.say(n, [&] {
          return std::string("driver: ") + (barrier ? "mb(), " : "") + "load " + q(sq) +
                 " EventIdx = " + std::to_string(t.publish.eventidx()) + ": need_event(" +
                 std::to_string(t.publish.eventidx()) + ", new " + std::to_string(t.publish.new_value()) + ", old " +
                 std::to_string(t.publish.old_value()) + ") " + (ring ? "-> ring" : "-> suppressed");
        });
      t.guest_pc = ring ? kGuestMmio : kGuestIdle;
      if (!ring) clear_publish(t);
      break;
    }
    case kGuestMmio: {
      if (s.store_count != 0) break;  // the UC write leaves after the buffered stores
      const bool sq = s.publishing_sq;
      const uint16_t value = s.publish.new_value();
      Successor& n = b.add(StepKind::MmioDoorbell, sq, value);
      mmio_effect(n.state, x, sq, value);
      n.state.guest_pc = kGuestIdle;
      clear_publish(n.state);
      b.say(n, [&] { return "driver: MMIO " + q(sq) + " doorbell = " + std::to_string(value); });
      break;
    }
    case kGuestIrq: {
      if (s.store_count >= kMaxStoreBuffer) break;
      const uint8_t h = s.cq_head;
      Successor& n = b.add(StepKind::LoadCqe, false, h);
      State& t = n.state;
      if (s.cqe_phase[h] == s.cq_phase) {
        const uint8_t seq = s.cqe_seq[h];
        if (seq != s.expect_seq)
          b.violate(n, Property::EntryTwiceOrSkipped,
                    "the driver read command #" + std::to_string(seq) + "'s completion where #" +
                        std::to_string(s.expect_seq) + "'s was due");
        t.expect_seq++;
        t.completed++;
        t.cq_unconsumed--;
        t.sq_head = s.cqe_sqhd[h];
        t.cq_head = uint8_t(cq_ring.advance(h));
        if (t.cq_head == 0) t.cq_phase ^= 1;
        if (b.text())
          b.say(n, [&] {
            return "driver: load CQE " + std::to_string(h) + ": command #" + std::to_string(seq) + " done (SQ head " +
                   std::to_string(t.sq_head) + "), CQ head " + std::to_string(t.cq_head);
          });
        break;
      }
      // Phase mismatch: the batch ends; publish the CQ head once.
      std::string what;
      if (b.text())
        what = "driver: load CQE " + std::to_string(h) + ": phase " + std::to_string(s.cqe_phase[h]) + " is not " +
               std::to_string(s.cq_phase) + ", batch over";
      if (s.cq_head == s.cq_published) {
        t.guest_pc = kGuestIdle;
      } else if (x.driver_shadow) {
        start_publish(t, c, s.cq_head);
        t.guest_pc = kGuestPublish;
        t.publishing_sq = 0;
        t.cq_published = s.cq_head;
        while (t.publish.step() == Pub::WriteBarrier || t.publish.step() == Pub::LoadShadow ||
               t.publish.step() == Pub::StoreShadow) {
          switch (t.publish.step()) {
            case Pub::WriteBarrier: write_barrier(t, c); t.publish.advance(); break;
            case Pub::LoadShadow: t.publish.advance(guest_load_shadow(t, false)); break;
            default: push_store(t, kShadowCq, s.cq_head); t.publish.advance(); break;
          }
        }
        if (b.text())
          what += "; store shadow CQ head = " + std::to_string(s.cq_head) + " (store buffer; old " +
                  std::to_string(t.publish.old_value()) + ")";
      } else {
        start_publish(t, c, s.cq_head);  // only new_value() is used: the MMIO write
        t.guest_pc = kGuestMmio;
        t.publishing_sq = 0;
        t.cq_published = s.cq_head;
      }
      b.say(n, [&] { return what; });
      break;
    }
    default: break;
  }
  // Stores leaving the store buffer.
  for (unsigned i = 0; i < s.store_count; ++i) {
    bool may = i == 0;
    if (!may && c.memory == MemoryModel::Arm) {
      may = true;
      for (unsigned j = 0; j < i; ++j)
        if (s.store_buffer[j].epoch != s.store_buffer[i].epoch ||
            s.store_buffer[j].location == s.store_buffer[i].location)
          may = false;
    }
    if (!may) continue;
    const BufferedStore st = s.store_buffer[i];
    Successor& n = b.add(StepKind::Drain, true, uint16_t(i));
    State& t = n.state;
    if (st.location == kShadowSq) t.shadow_sq = st.value;
    else if (st.location == kShadowCq) t.shadow_cq = st.value;
    else t.sqe[st.location] = uint8_t(st.value);
    for (unsigned j = i; j + 1 < s.store_count; ++j) t.store_buffer[j] = s.store_buffer[j + 1];
    t.store_count--;
    std::memset(&t.store_buffer[t.store_count], 0, sizeof(BufferedStore));
    if (t.store_count == 0) t.wmb_epoch = 0;  // nothing left to order against
    if (b.text()) {
      const std::string where = st.location == kShadowSq   ? "shadow SQ tail = " + std::to_string(st.value)
                                : st.location == kShadowCq ? "shadow CQ head = " + std::to_string(st.value)
                                                           : "SQ slot " + std::to_string(st.location) +
                                                                 " (command #" + std::to_string(st.value) + ")";
      b.say(n, [&] { return "memory: the driver's store of " + where + " becomes visible"; });
    }
  }
}

// A non-parked EventIdx may lie from one behind `from` (Lag) up to `to`:
// the SQ from the fetch head to the driver's tail, the CQ from the device's
// known head to the driver's head. Spans count entries, so a full lap of a
// small ring stays unambiguous.
bool eventidx_claim_ok(uint32_t value, uint32_t from, uint32_t to, uint32_t size) {
  if (value >= size) return true;  // parked: claims nothing
  const fw::Ring r{size};
  return r.distance((from + size - 1) % size, value) <= 1 + r.distance(from, to);
}

// The shadow load the device's cursor is at: the controller's own step code
// (shadow_read_sq_tail / _cq_head) on the model's queue and memory.
std::string device_load_shadow(State& t, const Ctx& x, bool sq, bool text) {
  const uint16_t v = sq ? t.shadow_sq : t.shadow_cq;
  StepMemory memory(v);
  fw::DbbufQueue q = queue_of(t, x, sq);
  if (sq) x.code.load_shadow_sq_tail(q, memory);
  else x.code.load_shadow_cq_head(q, memory);
  set_queue(t, sq, q);
  if (!text) return {};
  const std::string known = sq ? "device tail " + std::to_string(t.dev_sq_tail)
                               : "device head " + std::to_string(t.dev_cq_head);
  const std::string entry = sq ? "shadow SQ tail" : "shadow CQ head";
  return memory.loaded ? "load " + entry + " = " + std::to_string(v) + " (" + known + ")"
                       : "no load of the " + entry + " (" + known + ")";
}

void device_steps(const State& s, const Ctx& x, Builder& b) {
  const bool dev_store_free = !s.dev_store_pending;
  if (s.device_pc == kDevIdle) {
    if (s.sq_kick) {
      // The pass starts with its first access, the shadow tail (covered).
      Successor& n = b.add(StepKind::DevStartBurst, true);
      State& t = n.state;
      t.sq_kick = 0;
      std::string what;
      if (b.text()) what = "device: SQ burst starts";
      Pass p = Pass::sq_pass(x.device_covers, x.order);
      if (p.step() == DevStep::LoadShadow) {
        const std::string load = device_load_shadow(t, x, true, b.text());
        if (b.text()) what += ", " + load;
        p.advance(x.device_covers);
      }
      set_pass(t, p);
      settle_device(t, x);
      b.say(n, [&] { return what; });
    }
    if (s.held > 0 && (!s.stalled || s.cq_kick)) {
      Successor& n = b.add(StepKind::DevStartPosting, false);
      n.state.cq_kick = 0;
      set_pass(n.state, Pass::cq_post(x.order));
      settle_device(n.state, x);
      b.say(n, [&] { return "device: posting starts (" + std::to_string(s.held) + " completions waiting)"; });
    }
  } else if (s.device_pc == kDevMsix) {
    if (dev_store_free) {
      Successor& n = b.add(StepKind::DevMsix, false);
      n.state.irq_pending = 1;
      n.state.posted = 0;
      n.state.device_pc = kDevIdle;
      b.say(n, [&] { return "device: MSI-X"; });
    }
  } else {
    const Pass p = pass_of(s, x);
    const bool sq = p.sq();
    switch (p.step()) {
      case DevStep::FetchSqe: {
        const uint8_t h = s.dev_sq_head;
        Successor& n = b.add(StepKind::DevFetch, true, h);
        State& t = n.state;
        const uint8_t seq = s.sqe[h];
        if (seq != s.fetch_seq) {
          std::string why = seq == 0 ? "the device fetched SQ slot " + std::to_string(h) + ", never written"
                            : seq < s.fetch_seq
                                ? "the device fetched command #" + std::to_string(seq) + " again (SQ slot " +
                                      std::to_string(h) + ", a stale entry)"
                                : "the device fetched command #" + std::to_string(seq) + " and skipped #" +
                                      std::to_string(s.fetch_seq);
          b.violate(n, Property::EntryTwiceOrSkipped, why);
        }
        t.fetch_seq++;
        t.dev_sq_head = uint8_t(fw::Ring{x.n}.advance(h));
        t.held++;
        t.stalled = 0;  // a new completion: the model posts again
        Pass next = p;
        next.advance(x.device_covers);
        set_pass(t, next);
        settle_device(t, x);
        b.say(n, [&] {
          return "device: fetch SQ slot " + std::to_string(h) + " (command #" + std::to_string(seq) + "), head " +
                 std::to_string(t.dev_sq_head);
        });
        // The device's choice: stop here, come back later (settled: work is left).
        Successor& m = b.add(StepKind::DevStopBurst, true);
        m.state.sq_kick = 1;
        m.state.device_pc = kDevIdle;
        b.say(m, [&] { return "device: burst ends with work left (rescheduled)"; });
        break;
      }
      case DevStep::StoreEventIdx: {
        if (!dev_store_free) break;
        Successor& n = b.add(StepKind::DevWriteEventIdx, sq);
        State& t = n.state;
        fw::DbbufQueue queue;
        StepMemory memory;
        run_store_eventidx(s, x, sq, queue, memory);  // stores: settle_device folded the steps that do not
        set_queue(t, sq, queue);
        const fw::EventIdxWrite w{true, memory.value};
        const bool ok = sq ? eventidx_claim_ok(w.value, s.dev_sq_head, s.sq_tail, x.n)
                           : eventidx_claim_ok(w.value, s.dev_cq_head, s.cq_head, x.m);
        if (!ok)
          b.violate(n, Property::EventIdxAhead,
                    q(sq) + " EventIdx " + std::to_string(w.value) + " claims more than the " +
                        (sq ? "driver submitted" : "driver consumed"));
        // A barrier right after the store makes it visible before anything
        // else the device does, so it is written at once; without one it
        // waits in the device's one-entry write buffer and a load may pass it.
        const bool buffered = p.next_step(x.device_covers) != DevStep::Barrier;
        if (buffered) {
          t.dev_store_pending = 1;
          t.dev_store_location = sq ? 1 : 2;
          t.dev_store_value = uint16_t(w.value);
        } else if (sq) {
          t.eventidx_sq = uint16_t(w.value);
        } else {
          t.eventidx_cq = uint16_t(w.value);
        }
        Pass next = p;
        next.advance(x.device_covers);
        set_pass(t, next);
        settle_device(t, x);
        b.say(n, [&] {
          return "device: store " + q(sq) + " EventIdx = " + std::to_string(w.value) +
                 (buffered ? " (device write buffer)" : "");
        });
        break;
      }
      case DevStep::LoadShadow: {
        Successor& n = b.add(StepKind::DevReadShadow, sq);
        State& t = n.state;
        std::string what = b.text() && p.follows_barrier() ? "device_barrier(), " : "";
        what += device_load_shadow(t, x, sq, b.text());
        Pass next = p;
        next.advance(x.device_covers);
        set_pass(t, next);
        settle_device(t, x);
        b.say(n, [&] { return "device: " + what; });
        break;
      }
      case DevStep::WriteCqe: {
        if (!dev_store_free) break;
        const uint8_t tail = s.dev_cq_tail;
        Successor& n = b.add(StepKind::DevWriteCqe, false, tail);
        State& t = n.state;
        const uint8_t seq = uint8_t(s.fetch_seq - s.held);
        if (s.cq_unconsumed + 1u >= x.m)
          b.violate(n, Property::QueueOverflow,
                    "CQ overflow: CQE for command #" + std::to_string(seq) + " written with " +
                        std::to_string(s.cq_unconsumed) + " of " + std::to_string(x.m) + " entries unconsumed");
        t.cqe_seq[tail] = seq;
        t.cqe_sqhd[tail] = s.dev_sq_head;
        t.cqe_phase[tail] = s.dev_phase;
        t.dev_cq_tail = uint8_t(fw::Ring{x.m}.advance(tail));
        if (t.dev_cq_tail == 0) t.dev_phase ^= 1;
        t.held--;
        t.cq_unconsumed++;
        t.posted = 1;
        Pass next = p;
        next.advance(x.device_covers);
        set_pass(t, next);
        settle_device(t, x);
        b.say(n, [&] {
          return "device: write CQE " + std::to_string(tail) + " (command #" + std::to_string(seq) + ", phase " +
                 std::to_string(s.dev_phase) + ", SQ head " + std::to_string(s.dev_sq_head) + ")";
        });
        break;
      }
      default: break;  // a barrier waiting for the write buffer to drain
    }
  }
  if (s.dev_store_pending) {
    Successor& n = b.add(StepKind::DevDrain, s.dev_store_location == 1);
    State& t = n.state;
    if (s.dev_store_location == 1) t.eventidx_sq = s.dev_store_value;
    else t.eventidx_cq = s.dev_store_value;
    t.dev_store_pending = t.dev_store_location = 0;
    t.dev_store_value = 0;
    // A barrier that waited for this store is passed.
    settle_device(t, x);
    b.say(n, [&] {
      return "memory: the device's store of " + q(s.dev_store_location == 1) +
             " EventIdx = " + std::to_string(s.dev_store_value) + " becomes visible";
    });
  }
}

}  // namespace

const char* to_string(MemoryModel m) { return m == MemoryModel::X86 ? "x86" : "arm"; }
const char* to_string(DeviceOrder o) {
  switch (o) {
    case DeviceOrder::StoreBarrierLoad: return "store-barrier-load";
    case DeviceOrder::StoreLoad: return "store-load";
    case DeviceOrder::LoadStore: return "load-store";
  }
  return "?";
}
const char* to_string(ResetMode r) {
  switch (r) {
    case ResetMode::Off: return "off";
    case ResetMode::Zeroed: return "zeroed";
    case ResetMode::Stale: return "stale";
  }
  return "?";
}
const char* to_string(Property p) {
  switch (p) {
    case Property::None: return "none";
    case Property::LostWakeup: return "lost wake-up";
    case Property::QueueOverflow: return "queue overflow";
    case Property::EntryTwiceOrSkipped: return "entry processed twice or skipped";
    case Property::EventIdxAhead: return "EventIdx ahead of the device";
  }
  return "?";
}

fw::DbbufDeviceOrder device_access_order(const ModelConfig& c) {
  using fw::DbbufAccessOrder;
  if (c.order_override) return fw::sanitized_order(*c.order_override);
  fw::DbbufDeviceOrder o;  // the firmware's: EventIdx store, device_barrier(), shadow load
  if (c.device_order == DeviceOrder::StoreLoad) {
    o.sq = o.cq = DbbufAccessOrder{{DevStep::StoreEventIdx, DevStep::LoadShadow}, 2};
  } else if (c.device_order == DeviceOrder::LoadStore) {
    o.sq = o.cq = DbbufAccessOrder{{DevStep::LoadShadow, DevStep::StoreEventIdx, DevStep::Barrier}, 3};
  }
  return o;
}

State make_initial(const ModelConfig&) {
  State s;
  std::memset(static_cast<void*>(&s), 0, sizeof s);
  s.cq_phase = 1;
  s.dev_phase = 1;
  s.next_seq = 1;
  s.expect_seq = 1;
  s.fetch_seq = 1;
  return s;
}

void successors(const State& s, const ModelConfig& c, std::vector<Successor>& out, bool with_text) {
  out.clear();
  const Ctx x(c);
  Builder b(s, x, out, with_text);
  guest_steps(s, x, b);
  device_steps(s, x, b);
  // Fields without meaning in the new state are zeroed, so equal states
  // compare equal.
  for (Successor& n : out) {
    if (n.state.guest_pc == kGuestIdle || n.state.guest_pc == kGuestIrq) {
      clear_publish(n.state);
      n.state.publishing_sq = 0;
    }
  }
}

bool device_busy(const State& s) { return s.device_pc != kDevIdle; }
bool device_pass(const State& s, const ModelConfig& c, fw::DbbufDevicePass& out) {
  if (!in_pass(s)) return false;
  out = pass_of(s, Ctx(c));
  return true;
}
bool driver_in_interrupt(const State& s) {
  return s.guest_pc == kGuestIrq || (s.guest_pc != kGuestIdle && !s.publishing_sq);
}

bool finished(const State& s, const ModelConfig& c) { return s.completed == c.commands; }

std::string describe_stall(const State& s, const ModelConfig& c) {
  std::ostringstream o;
  const unsigned outstanding = unsigned(s.next_seq - s.expect_seq);
  o << "stalled with " << (c.commands - s.completed) << " of " << c.commands
    << " I/Os unfinished: the driver waits for an interrupt (" << outstanding
    << " outstanding, SQ tail " << unsigned(s.sq_tail) << ", CQ head " << unsigned(s.cq_head)
    << "), the device is idle (SQ head " << unsigned(s.dev_sq_head) << ", tail " << unsigned(s.dev_sq_tail)
    << "; CQ head " << unsigned(s.dev_cq_head) << ", tail " << unsigned(s.dev_cq_tail) << ", "
    << unsigned(s.held) << " completions held" << (s.stalled ? ", CQ full" : "")
    << "); shadow SQ " << s.shadow_sq << ", CQ " << s.shadow_cq << "; EventIdx SQ " << s.eventidx_sq
    << ", CQ " << s.eventidx_cq;
  return o.str();
}

}  // namespace nvmesim::platform::verify
