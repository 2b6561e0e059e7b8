// BAR0: the register file, CC.EN/CSTS.RDY handshake, reset, shutdown,
// interrupt masks and the doorbells.
#include "nvmesim/firmware/nvme/controller.h"

#include "nvmesim/firmware/nvme/eventidx.h"

namespace nvmesim::fw {

using namespace nvme;

namespace {
constexpr bool is_page_aligned(uint64_t addr, uint32_t page) { return (addr & (page - 1)) == 0; }
}  // namespace

uint32_t Controller::read32(uint32_t offset) const {
  switch (offset) {
    case reg::CAP: return uint32_t(cap_);
    case reg::CAP + 4: return uint32_t(cap_ >> 32);
    case reg::VS: return make_version(1, 3);
    case reg::INTMS:
    case reg::INTMC: return int_mask_;
    case reg::CC: return cc_;
    case reg::CSTS: return csts_;
    case reg::AQA: return aqa_;
    case reg::ASQ: return uint32_t(asq_);
    case reg::ASQ + 4: return uint32_t(asq_ >> 32);
    case reg::ACQ: return uint32_t(acq_);
    case reg::ACQ + 4: return uint32_t(acq_ >> 32);
    default: return 0;  // reserved, NSSR and doorbells read as 0
  }
}

uint64_t Controller::bar0_read(uint32_t offset, unsigned size) const {
  if (offset & 3) return 0;
  if (size == 8) return uint64_t(read32(offset)) | (uint64_t(read32(offset + 4)) << 32);
  if (size == 4) return read32(offset);
  return 0;
}

// A 64-bit write is two 32-bit writes, low dword first; the effect of the
// second wins unless it is None.
Bar0WriteEffect Controller::bar0_write(uint32_t offset, uint64_t value, unsigned size) {
  if (offset & 3) return {};
  if (size == 4) return write32(offset, uint32_t(value));
  if (size != 8) return {};
  const Bar0WriteEffect lo = write32(offset, uint32_t(value));
  const Bar0WriteEffect hi = write32(offset + 4, uint32_t(value >> 32));
  return hi.kind != Bar0WriteEffect::None ? hi : lo;
}

Bar0WriteEffect Controller::write32(uint32_t offset, uint32_t value) {
  if (offset >= reg::DOORBELL_BASE) return write_doorbell(offset, value);
  // AQA/ASQ/ACQ are only taken into account at the next enable.
  switch (offset) {
    case reg::INTMS: {
      int_mask_ |= value;
      return {};
    }
    case reg::INTMC: {
      int_mask_ &= ~value;
      // Unmasked vectors send what they held back.
      const uint32_t release = int_pending_ & value;
      int_pending_ &= ~release;
      for (uint16_t v = 0; v < 32; ++v)
        if (release & (1u << v)) raise_interrupt(v);
      return {};
    }
    case reg::CC: return write_cc(value);
    case reg::AQA: aqa_ = value; return {};
    case reg::ASQ: asq_ = (asq_ & ~0xFFFFFFFFull) | value; return {};
    case reg::ASQ + 4: asq_ = (asq_ & 0xFFFFFFFFull) | (uint64_t(value) << 32); return {};
    case reg::ACQ: acq_ = (acq_ & ~0xFFFFFFFFull) | value; return {};
    case reg::ACQ + 4: acq_ = (acq_ & 0xFFFFFFFFull) | (uint64_t(value) << 32); return {};
    default: return {};  // CAP, VS, CSTS, NSSR, reserved: read-only / not modelled
  }
}

Bar0WriteEffect Controller::write_cc(uint32_t value) {
  const uint32_t old = cc_;
  cc_ = value;
  Bar0WriteEffect effect;
  const bool was_en = (old & cc::EN) != 0;
  const bool en = (value & cc::EN) != 0;
  if (!was_en && en) {
    effect.kind = Bar0WriteEffect::EnableRequested;
  } else if (was_en && !en) {
    controller_reset();
    effect.kind = Bar0WriteEffect::Reset;
  }
  if (cc::shn(value) != 0 && cc::shn(old) == 0) {
    // Shutdown: nothing to flush in this model; it completes at once.
    csts_ = (csts_ & ~csts::SHST_MASK) | csts::SHST_COMPLETE;
    // A reset in the same write stays the reported effect (the model must
    // abandon the backend's work); CSTS.SHST shows the shutdown.
    if (effect.kind != Bar0WriteEffect::Reset) effect.kind = Bar0WriteEffect::Shutdown;
  } else if (cc::shn(value) == 0 && cc::shn(old) != 0) {
    csts_ &= ~csts::SHST_MASK;
  }
  return effect;
}

void Controller::set_fatal() {
  csts_ |= csts::CFS;
}

void Controller::complete_enable() {
  if (!(cc_ & cc::EN) || (csts_ & csts::RDY)) return;  // cancelled by a reset, or done
  const uint32_t mps = cc::mps(cc_);
  const uint32_t page = 1u << (12 + (mps & 0xF));
  // CC.AMS: NVMe 1.4 "Controller Configuration" has host software select
  // only a mechanism CAP.AMS reports and leaves the controller's behaviour
  // undefined otherwise; this one refuses to become ready (CSTS.CFS), as for
  // the other fields it cannot work with.
  const uint32_t ams = cc::ams(cc_);
  const bool ams_ok = ams == cc::AMS_RR || (ams == cc::AMS_WRR_URGENT && config_.wrr_urgent);
  const bool valid = mps >= config_.mpsmin && mps <= config_.mpsmax && cc::css(cc_) == 0 &&
                     ams_ok && aqa::asqs(aqa_) != 0 && aqa::acqs(aqa_) != 0 &&
                     asq_ != 0 && acq_ != 0 && is_page_aligned(asq_, page) &&
                     is_page_aligned(acq_, page);
  if (!valid) {
    csts_ = (csts_ & ~csts::RDY) | csts::CFS;
    return;
  }
  page_bytes_ = page;
  Sq& sq = sqs_[0];
  sq = Sq{};
  sq.exists = true;
  sq.base = asq_;
  sq.size = aqa::asqs(aqa_) + 1;
  sq.cqid = 0;
  Cq& cq = cqs_[0];
  cq = Cq{};
  cq.exists = true;
  cq.base = acq_;
  cq.size = aqa::acqs(aqa_) + 1;
  cq.ien = true;
  cq.vector = 0;
  cq.attached_sqs = 1;
  reserve_slots(sq.size);
  arbiter_.configure(ams == cc::AMS_WRR_URGENT ? ArbitrationMechanism::WeightedRoundRobinUrgent
                                               : ArbitrationMechanism::RoundRobin,
                     arb_feature_);
  csts_ = (csts_ & ~csts::CFS) | csts::RDY;
}

// CC.EN 1 -> 0: a Controller Level Reset.
void Controller::controller_reset() {
  for (Sq& q : sqs_) q = Sq{};
  for (Cq& q : cqs_) q = Cq{};
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.state != SlotState::Free) s.gen = uint8_t(s.gen + 1);
    s.state = SlotState::Free;
  }
  // Rebuild the free list (keep the memory: the next bring-up reuses it).
  free_slot_ = NO_SLOT;
  for (uint32_t i = uint32_t(slots_.size()); i-- > 0;) {
    slots_[i].next = free_slot_;
    free_slot_ = i;
  }
  slots_reserved_ = 0;
  outstanding_io_ = 0;
  dbbuf_active_ = false;
  dbbuf_shadow_ = dbbuf_eventidx_ = 0;
  aer_count_ = 0;
  ae_first_ = ae_count_ = 0;
  int_mask_ = int_pending_ = 0;
  nsq_allocated_ = ncq_allocated_ = uint16_t(config_.max_io_queues - 1);
  ic_thr_ = ic_time_ = 0;
  arb_feature_ = ArbitrationFeature{};
  arbiter_.reset();
  arbiter_.configure(ArbitrationMechanism::RoundRobin, arb_feature_);
  csts_ &= ~csts::RDY;
}

void Controller::raise_interrupt(uint16_t vector) {
  if (vector < 32 && (int_mask_ & (1u << vector))) {
    int_pending_ |= 1u << vector;
    return;
  }
  counters_.interrupts_raised++;
  env_.msix(vector);
}

// SQyTDBL / CQyHDBL.
Bar0WriteEffect Controller::write_doorbell(uint32_t offset, uint32_t value) {
  if (!enabled() || fatal()) return {};
  const uint32_t stride = doorbell_stride(config_.dstrd);
  const uint32_t rel = offset - reg::DOORBELL_BASE;
  if (rel % stride != 0) return {};  // inside a stride's padding: no register
  const uint32_t index = rel / stride;
  const uint32_t qid32 = index / 2;
  const bool is_cq = (index & 1) != 0;
  if (qid32 >= sqs_.size() || (is_cq ? !cqs_[qid32].exists : !sqs_[qid32].exists)) {
    invalid_doorbell(async_event::INFO_INVALID_DOORBELL_REGISTER);
    return {};
  }
  const uint16_t qid = uint16_t(qid32);
  // The admin queue always takes the written value (Linux never uses its
  // shadow); with the buffer on, QEMU mirrors it into the shadow entry.
  const bool value_ignored = dbbuf_covers(qid) && qid != 0 &&
                             config_.mmio_doorbell_value == MmioDoorbellValue::Ignore;
  if (is_cq) {
    Cq& cq = cqs_[qid];
    if (value >= cq.size || (!value_ignored && !cq_head_valid(cq, value))) {
      invalid_doorbell(async_event::INFO_INVALID_DOORBELL_VALUE);
      return {};
    }
    // QEMU schedules posting only if the CQ was full before this head
    // (hw/nvme/ctrl.c nvme_process_db: "if (nvme_cq_full(cq))"); otherwise
    // the completions' own posting is already on its way. A device that
    // ignores the value must read the shadow to learn anything.
    const bool was_full = Ring{cq.size}.full(cq.head, cq.tail);
    if (!value_ignored) {
      cq.head = value;
      if (qid == 0 && dbbuf_covers(0)) mirror_to_shadow(dbbuf_cq_offset(0, config_.dstrd), value);
    }
    if (cq.pending > 0 && (value_ignored || was_full)) return {Bar0WriteEffect::CqDoorbell, qid};
    return {};
  }
  Sq& sq = sqs_[qid];
  if (value >= sq.size || (!value_ignored && !sq_tail_valid(sq, value))) {
    invalid_doorbell(async_event::INFO_INVALID_DOORBELL_VALUE);
    return {};
  }
  if (!value_ignored) {
    sq.tail = value;
    if (qid == 0 && dbbuf_covers(0)) mirror_to_shadow(dbbuf_sq_offset(0, config_.dstrd), value);
  }
  return {Bar0WriteEffect::SqDoorbell, qid};
}

}  // namespace nvmesim::fw
