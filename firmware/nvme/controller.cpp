// Controller construction, introspection, command slots and asynchronous
// events. Registers, admin, I/O and the doorbell buffer live in the
// controller_*.cpp files beside this one.
#include "nvmesim/firmware/nvme/controller.h"

#include <algorithm>

#include "nvmesim/firmware/nvme/prp.h"

namespace nvmesim::fw {

using namespace nvme;

const char* dma_purpose_name(DmaPurpose purpose) {
  switch (purpose) {
    case DmaPurpose::SqeFetch: return "sqe_fetch";
    case DmaPurpose::PrpList: return "prp_list";
    case DmaPurpose::ShadowRead: return "shadow_read";
    case DmaPurpose::ShadowWrite: return "shadow_write";
    case DmaPurpose::EventIdxWrite: return "eventidx_write";
    case DmaPurpose::CqeWrite: return "cqe_write";
    case DmaPurpose::Data: return "data";
    case DmaPurpose::AdminData: return "admin_data";
  }
  return "?";
}

Controller::Controller(const ControllerConfig& config, ControllerEnv& env)
    : config_(config), env_(env), arbiter_(size_t(std::max<uint16_t>(config.max_io_queues, 1)) + 1) {
  // MQES is 0's based and at least 1 (queues of >= 2 entries).
  if (config_.mqes == 0) config_.mqes = 1;
  if (config_.max_io_queues == 0) config_.max_io_queues = 1;
  if (config_.msix_vectors == 0) config_.msix_vectors = 1;
  config_.dbbuf_order = sanitized_order(config_.dbbuf_order);
  cap_ = cap::make(config_.mqes, /*cqr=*/true, config_.cap_timeout, config_.dstrd,
                   config_.mpsmin, config_.mpsmax, config_.wrr_urgent);
  sqs_.resize(size_t(config_.max_io_queues) + 1);
  cqs_.resize(size_t(config_.max_io_queues) + 1);
  nsq_allocated_ = ncq_allocated_ = uint16_t(config_.max_io_queues - 1);
  // Room for the largest transfer once: MDTS, or NLB's 16 bits when MDTS is
  // 0 (no limit), at the smallest memory page size.
  const uint64_t min_page = uint64_t(4096) << config_.mpsmin;
  uint64_t largest = uint64_t(65536) * config_.lba_bytes;
  if (config_.mdts != 0 && config_.mdts < 32)
    largest = std::min(largest, (uint64_t(1) << config_.mdts) * min_page);
  req_.segments.reserve(max_prp_segments(std::min<uint64_t>(largest, 0xFFFFFFFFull), uint32_t(min_page)));
  page_segments_.reserve(2);
}

// ---------------------------------------------------------------- introspection

Controller::SqState Controller::sq_state(uint16_t qid) const {
  SqState s;
  if (qid >= sqs_.size() || !sqs_[qid].exists) return s;
  const Sq& q = sqs_[qid];
  s.exists = true;
  s.base = q.base;
  s.size = q.size;
  s.head = q.head;
  s.tail = q.tail;
  s.cqid = q.cqid;
  return s;
}

Controller::CqState Controller::cq_state(uint16_t qid) const {
  CqState s;
  if (qid >= cqs_.size() || !cqs_[qid].exists) return s;
  const Cq& q = cqs_[qid];
  s.exists = true;
  s.base = q.base;
  s.size = q.size;
  s.head = q.head;
  s.tail = q.tail;
  s.phase = q.phase;
  s.interrupts_enabled = q.ien;
  s.vector = q.vector;
  s.pending = q.pending;
  return s;
}

bool Controller::enabled() const { return (csts_ & csts::RDY) != 0; }
bool Controller::fatal() const { return (csts_ & csts::CFS) != 0; }
bool Controller::dbbuf_active() const { return dbbuf_active_; }
uint64_t Controller::shadow_buffer_addr() const { return dbbuf_active_ ? dbbuf_shadow_ : 0; }
uint64_t Controller::eventidx_buffer_addr() const { return dbbuf_active_ ? dbbuf_eventidx_ : 0; }
uint32_t Controller::outstanding_io() const { return outstanding_io_; }
uint16_t Controller::interrupt_coalescing_threshold() const { return ic_thr_; }
uint8_t Controller::interrupt_coalescing_time_100us() const { return ic_time_; }

bool Controller::sq_has_work(uint16_t sqid) const {
  return sqid < sqs_.size() && sqs_[sqid].exists && sqs_[sqid].head != sqs_[sqid].tail;
}

bool Controller::cq_has_pending(uint16_t cqid) const {
  return cqid < cqs_.size() && cqs_[cqid].exists && cqs_[cqid].pending > 0;
}

// ---------------------------------------------------------------- slots

// Called when an SQ is created: the pool holds at least one slot per entry
// of every existing SQ, so alloc_slot never fails for an SQ under quota.
void Controller::reserve_slots(uint32_t count) {
  slots_reserved_ += count;
  while (slots_.size() < slots_reserved_) {
    slots_.emplace_back();
    slots_.back().next = free_slot_;
    free_slot_ = uint32_t(slots_.size() - 1);
  }
}

uint32_t Controller::alloc_slot(uint16_t sqid, uint16_t cid) {
  const uint32_t i = free_slot_;
  if (i == NO_SLOT) return NO_SLOT;
  Slot& s = slots_[i];
  free_slot_ = s.next;
  s.next = NO_SLOT;
  s.sqid = sqid;
  s.cid = cid;
  s.status = 0;
  s.dw0 = 0;
  s.state = SlotState::Executing;
  sqs_[sqid].in_use++;
  return i;
}

void Controller::release_slot(uint32_t index) {
  Slot& s = slots_[index];
  if (s.state == SlotState::Free) return;
  if (s.state == SlotState::Backend && outstanding_io_ > 0) outstanding_io_--;
  if (s.sqid < sqs_.size() && sqs_[s.sqid].in_use > 0) sqs_[s.sqid].in_use--;
  s.state = SlotState::Free;
  s.gen = uint8_t(s.gen + 1);  // stale tags no longer match
  s.next = free_slot_;
  free_slot_ = index;
}

void Controller::enqueue_completion(uint32_t index, uint16_t status, uint32_t dw0) {
  Slot& s = slots_[index];
  if (s.state == SlotState::Backend && outstanding_io_ > 0) outstanding_io_--;
  s.status = status;
  s.dw0 = dw0;
  s.state = SlotState::Pending;
  s.next = NO_SLOT;
  Cq& cq = cqs_[sqs_[s.sqid].cqid];
  if (cq.pend_last == NO_SLOT) {
    cq.pend_first = index;
  } else {
    slots_[cq.pend_last].next = index;
  }
  cq.pend_last = index;
  cq.pending++;
}

void Controller::complete_io(uint32_t tag, uint16_t status) {
  const uint32_t index = tag_slot(tag);
  const uint8_t gen = tag_generation(tag);
  if (index >= slots_.size()) return;
  const Slot& s = slots_[index];
  // Abandoned (reset, SQ deleted) or unknown: ignore.
  if (s.state != SlotState::Backend || s.gen != gen) return;
  enqueue_completion(index, uint16_t(status & 0x7FFF), 0);
}

// QEMU drops the commands of a deleted SQ (no CQEs): cancel what the backend
// holds (its later complete_io is ignored) and unlink unposted completions.
void Controller::abandon_sq_commands(uint16_t sqid) {
  const uint16_t cqid = sqs_[sqid].cqid;
  if (cqid < cqs_.size() && cqs_[cqid].exists) {
    Cq& cq = cqs_[cqid];
    uint32_t prev = NO_SLOT;
    uint32_t i = cq.pend_first;
    while (i != NO_SLOT) {
      const uint32_t next = slots_[i].next;
      if (slots_[i].sqid == sqid) {
        if (prev == NO_SLOT) cq.pend_first = next; else slots_[prev].next = next;
        if (cq.pend_last == i) cq.pend_last = prev;
        cq.pending--;
        release_slot(i);
      } else {
        prev = i;
      }
      i = next;
    }
  }
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].state != SlotState::Free && slots_[i].sqid == sqid) release_slot(i);
  }
}

// ---------------------------------------------------------------- async events

void Controller::invalid_doorbell(uint8_t info) {
  counters_.invalid_doorbell_writes++;
  async_event(async_event::TYPE_ERROR, info, async_event::LOG_ERROR_INFORMATION);
}

void Controller::async_event(uint8_t type, uint8_t info, uint8_t log_page) {
  counters_.async_events++;
  const uint32_t dw0 = async_event::make_dw0(type, info, log_page);
  if (aer_count_ > 0) {
    const uint32_t slot = aer_slots_[0];
    std::copy(aer_slots_.begin() + 1, aer_slots_.begin() + aer_count_, aer_slots_.begin());
    aer_count_--;
    complete_aer(slot, dw0);
    return;
  }
  if (ae_count_ < AE_QUEUE_MAX) {  // bounded: further events are dropped
    ae_queue_[(ae_first_ + ae_count_) % AE_QUEUE_MAX] = dw0;
    ae_count_++;
  }
}

// An AER completion is posted at once, except inside an admin burst, whose
// end posts the admin CQ anyway.
void Controller::complete_aer(uint32_t slot, uint32_t dw0) {
  enqueue_completion(slot, STATUS_SUCCESS, dw0);
  if (!in_admin_burst_) post_completions(0);
}

}  // namespace nvmesim::fw
