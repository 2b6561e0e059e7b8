// The doorbell buffer: Doorbell Buffer Config, shadow reads and the
// device's EventIdx policies.
#include "nvmesim/firmware/nvme/controller.h"

#include "nvmesim/firmware/nvme/eventidx.h"

namespace nvmesim::fw {

using namespace nvme;

namespace {
void put_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint32_t get_le32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
}  // namespace

// Spec mode covers every queue, the admin queue included (as QEMU); the
// Google vendor-extension device covers the I/O queues only.
bool Controller::dbbuf_covers(uint16_t qid) const {
  return device_dbbuf_covers(dbbuf_active_, config_.dbbuf, qid);
}

bool Controller::cq_head_valid(const Cq& cq, uint32_t new_head) const {
  return cq_head_acceptable(cq.size, cq.head, cq.tail, new_head);
}

// A tail may only move forward over free entries: one that lands between
// the fetch head and the known tail would add more commands than the ring
// has room for (NVMe: Invalid Doorbell Write Value). The fetch head never
// passes the guest's idea of it, so a correct guest never trips this.
bool Controller::sq_tail_valid(const Sq& sq, uint32_t new_tail) const {
  return sq_tail_acceptable(sq.size, sq.head, sq.tail, new_tail);
}

void Controller::mirror_to_shadow(uint32_t offset, uint32_t value) {
  uint8_t b[4];
  put_le32(b, value);
  env_.dma_write(DmaPurpose::ShadowWrite, dbbuf_shadow_ + offset, b, 4);
}

void Controller::write_eventidx(uint32_t offset, uint32_t value) {
  uint8_t b[4];
  put_le32(b, value);
  if (env_.dma_write(DmaPurpose::EventIdxWrite, dbbuf_eventidx_ + offset, b, 4)) counters_.eventidx_writes++;
}

namespace {

// The step code (dbbuf_device_steps.h): pure but for `memory`.
void load_shadow_sq_tail(DbbufQueue& sq, DbbufDeviceMemory& memory) {
  uint32_t v = 0;
  if (!memory.load_shadow(v)) return;
  if (!sq_tail_acceptable(sq.size, sq.head, sq.tail, v)) {  // not trusted: keep the tail we know
    memory.invalid_shadow_value();
    return;
  }
  sq.tail = v;
}

void load_shadow_cq_head(DbbufQueue& cq, DbbufDeviceMemory& memory) {
  uint32_t v = 0;
  if (!memory.load_shadow(v)) return;
  if (!cq_head_acceptable(cq.size, cq.head, cq.tail, v)) {
    memory.invalid_shadow_value();
    return;
  }
  cq.head = v;
}

void store_sq_eventidx(EventIdxPolicy policy, DbbufQueue& sq, DbbufDeviceMemory& memory) {
  const EventIdxWrite w = eventidx_update(policy, sq.tail, sq.size, sq.eventidx_parked);
  if (w.write) memory.store_eventidx(w.value);
}

void store_cq_eventidx(EventIdxPolicy policy, DbbufQueue& cq, DbbufDeviceMemory& memory) {
  const EventIdxWrite w = eventidx_update(policy, cq.head, cq.size, cq.eventidx_parked);
  if (w.write) memory.store_eventidx(w.value);
}

// Runs one step on a copy of `queue`'s doorbell state (the step code is
// shared with verify, which keeps its own state); what the step left in the
// copy becomes the queue's.
template <class Queue, class Step>
void run_step(Queue& queue, DbbufDeviceMemory& memory, Step&& step) {
  DbbufQueue q{queue.size, queue.head, queue.tail, queue.eventidx_parked};
  step(q, memory);
  queue.head = q.head;
  queue.tail = q.tail;
  queue.eventidx_parked = q.eventidx_parked;
}

}  // namespace

const DbbufStepCode kDbbufStepCode{load_shadow_sq_tail, load_shadow_cq_head, store_sq_eventidx, store_cq_eventidx};

// One queue's entries of the doorbell buffer through the controller's DMA.
class Controller::DbbufAccess final : public DbbufDeviceMemory {
 public:
  DbbufAccess(Controller& c, uint32_t offset) : c_(c), offset_(offset) {}
  bool load_shadow(uint32_t& value) override {
    uint8_t b[4];
    if (!c_.env_.dma_read(DmaPurpose::ShadowRead, c_.dbbuf_shadow_ + offset_, b, 4)) return false;
    value = get_le32(b);
    return true;
  }
  void store_eventidx(uint32_t value) override { c_.write_eventidx(offset_, value); }
  void invalid_shadow_value() override { c_.invalid_doorbell(async_event::INFO_INVALID_DOORBELL_VALUE); }

 private:
  Controller& c_;
  uint32_t offset_;
};

const DbbufStepCode& Controller::step_code() const {
  return config_.dbbuf_step_code ? *config_.dbbuf_step_code : kDbbufStepCode;
}

void Controller::shadow_read_sq_tail(uint16_t sqid) {
  counters_.shadow_reads++;
  DbbufAccess memory(*this, dbbuf_sq_offset(sqid, config_.dstrd));
  run_step(sqs_[sqid], memory, step_code().load_shadow_sq_tail);
}

void Controller::shadow_read_cq_head(uint16_t cqid) {
  counters_.shadow_reads++;
  DbbufAccess memory(*this, dbbuf_cq_offset(cqid, config_.dstrd));
  run_step(cqs_[cqid], memory, step_code().load_shadow_cq_head);
}

void Controller::apply_sq_eventidx(uint16_t sqid) {
  DbbufAccess memory(*this, dbbuf_sq_offset(sqid, config_.dstrd));
  run_step(sqs_[sqid], memory, [this](DbbufQueue& q, DbbufDeviceMemory& m) {
    step_code().store_sq_eventidx(config_.sq_eventidx, q, m);
  });
}

void Controller::apply_cq_eventidx(uint16_t cqid) {
  DbbufAccess memory(*this, dbbuf_cq_offset(cqid, config_.dstrd));
  run_step(cqs_[cqid], memory, [this](DbbufQueue& q, DbbufDeviceMemory& m) {
    step_code().store_cq_eventidx(config_.cq_eventidx, q, m);
  });
}

bool Controller::refresh_cq_head_from_shadow(uint16_t cqid) {
  if (!enabled() || fatal() || cqid >= cqs_.size() || !cqs_[cqid].exists || !dbbuf_covers(cqid))
    return false;
  shadow_read_cq_head(cqid);
  return true;
}

void Controller::sq_poll_begin(uint16_t sqid) {
  if (!enabled() || fatal() || sqid >= sqs_.size() || !sqs_[sqid].exists || !dbbuf_covers(sqid)) return;
  apply_sq_eventidx(sqid);
  sqs_[sqid].suppress_eventidx = true;
}

bool Controller::sq_poll_end(uint16_t sqid) {
  if (!enabled() || fatal() || sqid >= sqs_.size() || !sqs_[sqid].exists || !dbbuf_covers(sqid)) return false;
  if (!sqs_[sqid].suppress_eventidx) return false;  // poll begin found the queue uncovered
  sqs_[sqid].suppress_eventidx = false;
  apply_sq_eventidx(sqid);
  return refresh_sq_tail_from_shadow(sqid);  // aio-posix's io_poll after io_poll_end
}

bool Controller::refresh_sq_tail_from_shadow(uint16_t sqid) {
  if (!enabled() || fatal() || sqid >= sqs_.size() || !sqs_[sqid].exists) return false;
  if (dbbuf_covers(sqid)) shadow_read_sq_tail(sqid);
  return sq_has_work(sqid);
}

// Doorbell Buffer Config (0x7C) / the vendor's 0xC0: PRP1 = shadow doorbell
// buffer, PRP2 = EventIdx buffer, one memory page each.
uint16_t Controller::admin_dbbuf_config(const SubmissionEntry& cmd) {
  const uint64_t shadow = cmd.prp1;
  const uint64_t eventidx = cmd.prp2;
  const uint64_t page = page_bytes();
  const uint64_t mem = config_.guest_memory_bytes;
  auto inside = [&](uint64_t a) { return mem == 0 || (a < mem && mem - a >= page); };
  if (shadow == 0 || eventidx == 0 || shadow == eventidx || (shadow & (page - 1)) ||
      (eventidx & (page - 1)) || !inside(shadow) || !inside(eventidx) ||
      dbbuf_bytes_needed(config_.max_io_queues, config_.dstrd) > page) {
    return status_generic(sc::INVALID_FIELD);
  }
  // A second config replaces the first.
  dbbuf_active_ = true;
  dbbuf_shadow_ = shadow;
  dbbuf_eventidx_ = eventidx;
  // Like QEMU: publish the device's tail/head of every existing queue in the
  // shadow buffer (the EventIdx buffer is left to the policies).
  for (uint16_t q = 0; q < sqs_.size(); ++q) {
    sqs_[q].eventidx_parked = false;
    cqs_[q].eventidx_parked = false;
    if (!dbbuf_covers(q)) continue;
    if (sqs_[q].exists) mirror_to_shadow(dbbuf_sq_offset(q, config_.dstrd), sqs_[q].tail);
    if (cqs_[q].exists) mirror_to_shadow(dbbuf_cq_offset(q, config_.dstrd), cqs_[q].head);
  }
  return STATUS_SUCCESS;
}

}  // namespace nvmesim::fw
