// Admin command set: Identify, features, queue management, asynchronous
// event requests, Abort, Get Log Page, Doorbell Buffer Config.
#include "nvmesim/firmware/nvme/controller.h"

#include <algorithm>
#include <cstring>

#include "nvmesim/firmware/nvme/prp.h"

namespace nvmesim::fw {

using namespace nvme;

namespace {
constexpr uint8_t AERL = 3;  // 0's based: 4 outstanding AERs (QEMU's default)

void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }
void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_ascii(uint8_t* p, size_t width, const char* s) {
  std::memset(p, ' ', width);
  std::memcpy(p, s, std::min(width, std::strlen(s)));
}
uint8_t log2_u32(uint32_t v) {
  uint8_t n = 0;
  while (v > 1) { v >>= 1; ++n; }
  return n;
}
}  // namespace

static_assert(AERL + 1 == 4, "AER_MAX in controller.h is AERL + 1");

uint16_t Controller::write_page_to_host(const SubmissionEntry& cmd, uint32_t len) {
  std::vector<IoRequest::Segment>& segs = page_segments_;
  const uint16_t st = map_prp(env_, cmd.prp1, cmd.prp2, len, page_bytes(), segs);
  if (st != STATUS_SUCCESS) return st;
  uint32_t done = 0;
  for (size_t i = 0; i < segs.size(); ++i) {
    if (!env_.dma_write(DmaPurpose::AdminData, segs[i].addr, page_buf_.data() + done, segs[i].len))
      return status_generic(sc::DATA_TRANSFER_ERROR);
    done += segs[i].len;
  }
  return STATUS_SUCCESS;
}

uint16_t Controller::execute_admin(const SubmissionEntry& cmd, uint32_t slot, uint32_t& dw0,
                                   bool& held) {
  held = false;
  dw0 = 0;
  if (!plain_prp_command(cmd)) return status_generic(sc::INVALID_FIELD);
  switch (cmd.opcode) {
    case admin::DELETE_IO_SQ: return admin_delete_sq(cmd);
    case admin::CREATE_IO_SQ: return admin_create_sq(cmd);
    case admin::GET_LOG_PAGE: return admin_get_log_page(cmd);
    case admin::DELETE_IO_CQ: return admin_delete_cq(cmd);
    case admin::CREATE_IO_CQ: return admin_create_cq(cmd);
    case admin::IDENTIFY: return admin_identify(cmd);
    case admin::ABORT: dw0 = 1; return STATUS_SUCCESS;  // bit 0 = 1: command not aborted
    case admin::SET_FEATURES: return admin_features(cmd, true, dw0);
    case admin::GET_FEATURES: return admin_features(cmd, false, dw0);
    case admin::ASYNC_EVENT_REQUEST:
      if (ae_count_ > 0) {  // an event waited for a request
        dw0 = ae_queue_[ae_first_];
        ae_first_ = (ae_first_ + 1) % AE_QUEUE_MAX;
        ae_count_--;
        return STATUS_SUCCESS;
      }
      if (aer_count_ >= AER_MAX)  // no DNR, as QEMU
        return status_specific(sc_specific::ASYNC_EVENT_LIMIT_EXCEEDED, false);
      slots_[slot].state = SlotState::AerWait;
      aer_slots_[aer_count_++] = slot;
      held = true;
      return STATUS_SUCCESS;
    case admin::DOORBELL_BUFFER_CONFIG:
      if (config_.dbbuf != DbbufMode::Spec) break;
      return admin_dbbuf_config(cmd);
    case admin::VENDOR_DOORBELL_BUFFER_CONFIG:
      if (config_.dbbuf != DbbufMode::Vendor) break;
      return admin_dbbuf_config(cmd);
    default: break;
  }
  return status_generic(sc::INVALID_OPCODE);
}

uint16_t Controller::admin_identify(const SubmissionEntry& cmd) {
  const uint8_t cns = uint8_t(cmd.cdw10 & 0xFF);
  page_buf_.fill(0);
  uint8_t* d = page_buf_.data();
  switch (cns) {
    case cns::NAMESPACE: {
      if (cmd.nsid != 1) return status_generic(sc::INVALID_NAMESPACE);
      put64(d + id_ns::NSZE, config_.namespace_lbas);
      put64(d + id_ns::NCAP, config_.namespace_lbas);
      put64(d + id_ns::NUSE, config_.namespace_lbas);
      d[id_ns::NLBAF] = 0;
      d[id_ns::FLBAS] = 0;
      put32(d + id_ns::LBAF0, uint32_t(log2_u32(config_.lba_bytes)) << 16);
      break;
    }
    case cns::CONTROLLER: {
      put16(d + id_ctrl::VID, config_.pci_vendor_id);
      put16(d + id_ctrl::SSVID, config_.pci_vendor_id);
      put_ascii(d + id_ctrl::SN, 20, "NVMESIM0001");
      put_ascii(d + id_ctrl::MN, 40, "nvmesim NVMe controller");
      put_ascii(d + id_ctrl::FR, 8, "0.1");
      d[id_ctrl::MDTS] = config_.mdts;
      put16(d + id_ctrl::CNTLID, 0);
      put32(d + id_ctrl::VER, make_version(1, 3));
      put16(d + id_ctrl::OACS,
            config_.dbbuf == DbbufMode::Spec ? id_ctrl::OACS_DOORBELL_BUFFER_CONFIG : 0);
      d[id_ctrl::AERL] = AERL;
      d[id_ctrl::SQES] = 0x66;
      d[id_ctrl::CQES] = 0x44;
      put16(d + id_ctrl::MAXCMD, uint16_t(std::min<uint32_t>(config_.mqes + 1u, 0xFFFF)));
      put32(d + id_ctrl::NN, 1);
      put16(d + id_ctrl::ONCS, 0);
      d[id_ctrl::VWC] = 1;  // volatile write cache: Flush is meaningful
      break;
    }
    case cns::ACTIVE_NAMESPACE_LIST:
      // Namespaces with NSID > cmd.nsid: [1] when asked from 0.
      if (cmd.nsid >= 0xFFFFFFFEu) return status_generic(sc::INVALID_NAMESPACE);
      if (cmd.nsid == 0) put32(d, 1);
      break;
    default: return status_generic(sc::INVALID_FIELD);
  }
  return write_page_to_host(cmd, id_ctrl::SIZE);
}

// Error Information only, returned zeroed (no errors are logged), up to one page.
uint16_t Controller::admin_get_log_page(const SubmissionEntry& cmd) {
  const uint8_t lid = uint8_t(cmd.cdw10 & 0xFF);
  if (lid != async_event::LOG_ERROR_INFORMATION) return status_generic(sc::INVALID_FIELD);
  const uint64_t numd = ((uint64_t(cmd.cdw11 & 0xFFFF) << 16) | (cmd.cdw10 >> 16)) + 1;
  const uint32_t len = uint32_t(std::min<uint64_t>(numd * 4, page_buf_.size()));
  page_buf_.fill(0);
  return write_page_to_host(cmd, len);
}

uint16_t Controller::admin_features(const SubmissionEntry& cmd, bool set, uint32_t& dw0) {
  const uint8_t fid = uint8_t(cmd.cdw10 & 0xFF);
  switch (fid) {
    case feature::ARBITRATION:
      // NVMe 1.4, 5.21.1.1: AB 2:0, LPW 15:8, MPW 23:16, HPW 31:24 (bits
      // 7:3 reserved, dropped); the weights matter under WRR only. Takes
      // effect at once: the arbiter starts a new round.
      if (set) {
        arb_feature_ = ArbitrationFeature::from_dword(cmd.cdw11);
        arbiter_.configure(arbiter_.mechanism(), arb_feature_);
      }
      dw0 = arb_feature_.dword();
      return STATUS_SUCCESS;
    case feature::NUMBER_OF_QUEUES:
      if (set) {
        // Only before any I/O queue exists (NVMe 1.4, 5.21.1.7).
        for (uint16_t q = 1; q <= config_.max_io_queues; ++q)
          if (sqs_[q].exists || cqs_[q].exists) return status_generic(sc::COMMAND_SEQUENCE_ERROR);
        const uint16_t nsqr = uint16_t(cmd.cdw11 & 0xFFFF);
        const uint16_t ncqr = uint16_t(cmd.cdw11 >> 16);
        if (nsqr == 0xFFFF || ncqr == 0xFFFF) return status_generic(sc::INVALID_FIELD);
        const uint16_t max0 = uint16_t(config_.max_io_queues - 1);
        nsq_allocated_ = std::min(nsqr, max0);
        ncq_allocated_ = std::min(ncqr, max0);
      }
      dw0 = uint32_t(nsq_allocated_) | (uint32_t(ncq_allocated_) << 16);
      return STATUS_SUCCESS;
    case feature::INTERRUPT_COALESCING:
      // Stored only: the model applies coalescing to the MSI-X messages.
      if (set) {
        ic_thr_ = uint8_t(cmd.cdw11 & 0xFF);
        ic_time_ = uint8_t((cmd.cdw11 >> 8) & 0xFF);
      }
      dw0 = uint32_t(ic_thr_) | (uint32_t(ic_time_) << 8);
      return STATUS_SUCCESS;
    default: return status_generic(sc::INVALID_FIELD);
  }
}

uint16_t Controller::admin_create_cq(const SubmissionEntry& cmd) {
  const uint16_t qid = create_queue::qid(cmd.cdw10);
  const uint32_t entries = create_queue::entries(cmd.cdw10);
  const uint16_t vector = create_queue::cq_vector(cmd.cdw11);
  // Beyond the queues Number of Queues allocated (0's based) is out of range.
  if (qid == 0 || qid > uint32_t(ncq_allocated_) + 1 || cqs_[qid].exists)
    return status_specific(sc_specific::INVALID_QUEUE_IDENTIFIER);
  if (entries < 2 || entries > uint32_t(config_.mqes) + 1)
    return status_specific(sc_specific::INVALID_QUEUE_SIZE);
  if (!(cmd.cdw11 & create_queue::PC)) return status_generic(sc::INVALID_FIELD);  // CAP.CQR = 1
  if (vector >= config_.msix_vectors) return status_specific(sc_specific::INVALID_INTERRUPT_VECTOR);
  if (cmd.prp1 == 0 || (cmd.prp1 & (page_bytes() - 1)))  // zero too, as QEMU
    return status_generic(sc::PRP_OFFSET_INVALID);
  if (cc::iocqes(cc_) != 4) return status_generic(sc::INVALID_FIELD);  // CQES = 0x44
  Cq& cq = cqs_[qid];
  cq = Cq{};
  cq.exists = true;
  cq.base = cmd.prp1;
  cq.size = entries;
  cq.ien = (cmd.cdw11 & create_queue::IEN) != 0;
  cq.vector = vector;
  return STATUS_SUCCESS;
}

uint16_t Controller::admin_create_sq(const SubmissionEntry& cmd) {
  const uint16_t qid = create_queue::qid(cmd.cdw10);
  const uint32_t entries = create_queue::entries(cmd.cdw10);
  const uint16_t cqid = create_queue::sq_cqid(cmd.cdw11);
  if (qid == 0 || qid > uint32_t(nsq_allocated_) + 1 || sqs_[qid].exists)
    return status_specific(sc_specific::INVALID_QUEUE_IDENTIFIER);
  if (cqid == 0 || cqid > config_.max_io_queues || !cqs_[cqid].exists)
    return status_specific(sc_specific::COMPLETION_QUEUE_INVALID);
  if (entries < 2 || entries > uint32_t(config_.mqes) + 1)
    return status_specific(sc_specific::INVALID_QUEUE_SIZE);
  if (!(cmd.cdw11 & create_queue::PC)) return status_generic(sc::INVALID_FIELD);
  if (cmd.prp1 == 0 || (cmd.prp1 & (page_bytes() - 1)))
    return status_generic(sc::PRP_OFFSET_INVALID);
  if (cc::iosqes(cc_) != 6) return status_generic(sc::INVALID_FIELD);  // SQES = 0x66
  if (slots_reserved_ + entries > TAG_SLOT_COUNT)
    return status_generic(sc::INTERNAL_ERROR);  // tags would not fit 24 bits
  Sq& sq = sqs_[qid];
  sq = Sq{};
  sq.exists = true;
  sq.base = cmd.prp1;
  sq.size = entries;
  sq.cqid = cqid;
  cqs_[cqid].attached_sqs++;
  // QPRIO (CDW11 bits 2:1), kept whatever the mechanism; the arbiter uses
  // it under Weighted Round Robin only.
  arbiter_.set_priority(qid, SqPriority(create_queue::sq_qprio(cmd.cdw11)));
  arbiter_.set_ready(qid, false);
  reserve_slots(entries);  // the only place the slot pool grows
  return STATUS_SUCCESS;
}

uint16_t Controller::admin_delete_sq(const SubmissionEntry& cmd) {
  const uint16_t qid = create_queue::qid(cmd.cdw10);
  if (qid == 0 || qid > config_.max_io_queues || !sqs_[qid].exists)
    return status_specific(sc_specific::INVALID_QUEUE_IDENTIFIER);
  abandon_sq_commands(qid);
  Sq& sq = sqs_[qid];
  if (cqs_[sq.cqid].attached_sqs > 0) cqs_[sq.cqid].attached_sqs--;
  slots_reserved_ -= sq.size;
  sq = Sq{};
  arbiter_.set_ready(qid, false);
  arbiter_.set_priority(qid, SqPriority::Urgent);
  return STATUS_SUCCESS;
}

uint16_t Controller::admin_delete_cq(const SubmissionEntry& cmd) {
  const uint16_t qid = create_queue::qid(cmd.cdw10);
  if (qid == 0 || qid > config_.max_io_queues || !cqs_[qid].exists)
    return status_specific(sc_specific::INVALID_QUEUE_IDENTIFIER);
  if (cqs_[qid].attached_sqs > 0) return status_specific(sc_specific::INVALID_QUEUE_DELETION);
  cqs_[qid] = Cq{};
  return STATUS_SUCCESS;
}

}  // namespace nvmesim::fw
