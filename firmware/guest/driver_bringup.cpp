// Guest driver: controller bring-up and reset, in Linux's order
// (nvme_reset_work: nvme_pci_configure_admin_queue, identify,
// nvme_setup_io_queues / nvme_create_queue, nvme_dbbuf_set), with admin
// commands submitted one at a time and their completions polled.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "nvmesim/firmware/guest/driver.h"

namespace nvmesim::fw {

namespace {

constexpr uint32_t CC_SHN_MASK = 3u << 14;

uint64_t load_le(const uint8_t* p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

std::string status_error(const std::string& what, uint16_t status) {
  char buf[96];
  std::snprintf(buf, sizeof buf, " failed: status 0x%04x (SCT %u, SC 0x%02x)", status,
                unsigned(nvme::status_sct(status)), unsigned(nvme::status_sc(status)));
  return what + buf;
}

}  // namespace

BringUpResult Driver::fail(std::string message) {
  error_ = std::move(message);
  result_.ok = false;
  result_.error = error_.c_str();
  return result_;
}

void Driver::reset_state() {
  dbbuf_active_ = false;  // first: nothing may use the shadow from here on
  queues_.clear();
  layout_ = Layout{};
  io_queues_ = 0;
  io_entries_ = 0;
  io_cq_entries_ = 0;
  tags_per_queue_ = 0;
  lba_bytes_ = 0;
  admin_cid_ = 0;
  result_ = BringUpResult{};
  error_.clear();
  submit_error_ = "";
}

bool Driver::wait_ready(bool ready) {
  const uint64_t timeout =
      std::min<uint64_t>(nvme::cap::to(cap_) * 500'000'000ull, config_.bringup_timeout_ns);
  const uint64_t poll = std::max<uint64_t>(1, config_.bringup_poll_ns);
  for (uint64_t waited = 0;; waited += poll) {
    const uint32_t csts = cpu(0).mmio_read32(nvme::reg::CSTS);
    if (csts == 0xFFFFFFFFu) {
      error_ = "CSTS reads all ones: controller not responding";
      return false;
    }
    if (ready && (csts & nvme::csts::CFS)) {
      error_ = "controller fatal status (CSTS.CFS) while waiting for CSTS.RDY=1";
      return false;
    }
    if (bool(csts & nvme::csts::RDY) == ready) return true;
    if (waited >= timeout) {
      error_ = ready ? "timeout waiting for CSTS.RDY=1 after CC.EN=1"
                     : "timeout waiting for CSTS.RDY=0 after CC.EN=0";
      return false;
    }
    cpu(0).wait_ns(poll);
  }
}

bool Driver::admin_command(nvme::SubmissionEntry cmd, const char* name, uint16_t* status,
                           uint32_t* dw0) {
  Queue& a = queues_[0];
  cmd.cid = admin_cid_++;
  std::memcpy(mem(a.sq_gpa + uint64_t(a.sq_tail) * nvme::SQE_SIZE, nvme::SQE_SIZE), &cmd,
              sizeof cmd);
  a.sq_tail = uint16_t(Ring{a.entries}.advance(a.sq_tail));
  publish(0, true);

  const uint64_t cqe = a.cq_gpa + uint64_t(a.cq_head) * nvme::CQE_SIZE;
  const uint64_t poll = std::max<uint64_t>(1, config_.bringup_poll_ns);
  uint16_t st = 0;
  for (uint64_t waited = 0;; waited += poll) {
    st = uint16_t(load_le(mem(cqe + 14, 2), 2));  // phase first: the CQE may be in flight
    if (bool(st & 1) == a.cq_phase) break;
    if (waited >= config_.bringup_timeout_ns) {
      error_ = std::string(name) + " timed out (no admin completion)";
      return false;
    }
    cpu(0).wait_ns(poll);
  }
  const uint8_t* e = mem(cqe, 14);
  const uint16_t sqhd = uint16_t(load_le(e + 8, 2));
  const uint16_t cid = uint16_t(load_le(e + 12, 2));
  if (sqhd < a.entries) a.sq_head = sqhd;
  a.cq_head = uint16_t(Ring{a.cq_entries}.advance(a.cq_head));
  if (a.cq_head == 0) a.cq_phase = !a.cq_phase;
  publish(0, false);
  if (cid != cmd.cid) {
    error_ = std::string(name) + ": completion carries CID " + std::to_string(cid) +
             ", expected " + std::to_string(cmd.cid);
    return false;
  }
  *status = uint16_t(st >> 1);
  *dw0 = uint32_t(load_le(e, 4));
  return true;
}

bool Driver::configure_dbbuf(BringUpResult& r) {
  if (!config_.use_dbbuf) return true;
  uint8_t op = 0;
  if (r.vendor_id == config_.vendor_id_for_vendor_dbbuf)
    op = nvme::admin::VENDOR_DOORBELL_BUFFER_CONFIG;
  else if (r.oacs & nvme::id_ctrl::OACS_DOORBELL_BUFFER_CONFIG)
    op = nvme::admin::DOORBELL_BUFFER_CONFIG;
  if (!op) return true;
  r.dbbuf_opcode = op;
  // Stale tails or EventIdx values from an earlier bring-up must not reach
  // the device (Linux clears the buffers on reset for the same reason). The
  // first configuration gets freshly zeroed buffers, as from dma_alloc_coherent.
  if (config_.zero_dbbuf_on_reset || !dbbuf_configured_once_) {
    const uint32_t bytes = uint32_t(layout_.dbbuf_bytes);
    std::memset(mem(layout_.shadow, bytes), 0, bytes);
    std::memset(mem(layout_.eventidx, bytes), 0, bytes);
  }
  dbbuf_configured_once_ = true;
  nvme::SubmissionEntry c{};
  c.opcode = op;
  c.prp1 = layout_.shadow;
  c.prp2 = layout_.eventidx;
  switch (config_.dbbuf_config_fault) {
    case DbbufConfigFault::None: break;
    case DbbufConfigFault::Misaligned: c.prp1 += 8; break;
    case DbbufConfigFault::Zero: c.prp2 = 0; break;
    case DbbufConfigFault::Same: c.prp2 = c.prp1; break;
    case DbbufConfigFault::Outside:
      c.prp2 = (config_.memory_base + config_.memory_bytes + PAGE - 1) / PAGE * PAGE;
      break;
  }
  uint16_t st = 0;
  uint32_t dw0 = 0;
  if (!admin_command(c, "Doorbell Buffer Config", &st, &dw0)) return false;
  r.dbbuf_status = st;
  // Any error: like Linux, drop the buffer and use MMIO doorbells everywhere.
  dbbuf_active_ = st == nvme::STATUS_SUCCESS;
  r.dbbuf_active = dbbuf_active_;
  return true;
}

bool Driver::create_io_queue(uint16_t qid) {
  Queue& q = queues_[qid];
  stats_.add_group("sq" + std::to_string(qid), *q.sq_counters);
  stats_.add_group("cq" + std::to_string(qid), *q.cq_counters);
  q.sq_gpa = layout_.io_sq[qid - 1];
  q.cq_gpa = layout_.io_cq[qid - 1];
  q.entries = io_entries_;
  q.cq_entries = io_cq_entries_;
  // Stale phase tags from a previous life would read as completions.
  std::memset(mem(q.cq_gpa, q.cq_entries * nvme::CQE_SIZE), 0, q.cq_entries * nvme::CQE_SIZE);

  uint16_t st = 0;
  uint32_t dw0 = 0;
  nvme::SubmissionEntry c{};
  c.opcode = nvme::admin::CREATE_IO_CQ;
  c.prp1 = q.cq_gpa;
  c.cdw10 = nvme::create_queue::cdw10(qid, q.cq_entries);
  // Vector 0 belongs to the admin queue; a polled CQ (IEN=0) gets 0 like Linux.
  c.cdw11 = nvme::create_queue::cq_cdw11(config_.interrupts ? qid : 0, config_.interrupts);
  const std::string cq_name = "Create I/O CQ " + std::to_string(qid);
  if (!admin_command(c, cq_name.c_str(), &st, &dw0)) return false;
  if (st) {
    error_ = status_error(cq_name, st);
    return false;
  }
  c = nvme::SubmissionEntry{};
  c.opcode = nvme::admin::CREATE_IO_SQ;
  c.prp1 = q.sq_gpa;
  c.cdw10 = nvme::create_queue::cdw10(qid, q.entries);
  c.cdw11 = nvme::create_queue::sq_cdw11(qid);
  const std::string sq_name = "Create I/O SQ " + std::to_string(qid);
  if (!admin_command(c, sq_name.c_str(), &st, &dw0)) return false;
  if (st) {
    error_ = status_error(sq_name, st);
    return false;
  }
  q.free_tags.resize(tags_per_queue_);
  for (uint32_t i = 0; i < tags_per_queue_; ++i) q.free_tags[i] = tags_per_queue_ - 1 - i;
  q.tag_busy.assign(tags_per_queue_, 0);
  return true;
}

BringUpResult Driver::bring_up() {
  reset_state();
  cap_ = cpu(0).mmio_read64(nvme::reg::CAP);
  dstrd_ = uint32_t(nvme::cap::dstrd(cap_));
  if (nvme::cap::mpsmin(cap_) > 0)
    return fail("CAP.MPSMIN: the controller's smallest page is larger than the driver's 4 KiB");
  io_entries_ = std::min<uint32_t>(config_.io_queue_entries, uint32_t(nvme::cap::mqes(cap_)) + 1);
  tags_per_queue_ =
      std::min<uint32_t>(config_.max_outstanding_per_queue, io_entries_ ? io_entries_ - 1 : 0);
  io_cq_entries_ = io_cq_entries_for(config_, io_entries_, uint16_t(nvme::cap::mqes(cap_)));
  // Carve everything before touching the controller: a bad region fails cleanly.
  if (!plan_layout(config_, io_entries_, io_cq_entries_, tags_per_queue_, dstrd_, layout_,
                   &error_))
    return fail(error_);
  result_.tags_per_queue = tags_per_queue_;
  result_.io_queue_entries = io_entries_;

  // nvme_disable_ctrl: CC.EN=0, wait for CSTS.RDY=0.
  cpu(0).mmio_write32(nvme::reg::CC, cc_ & ~(nvme::cc::EN | CC_SHN_MASK));
  if (!wait_ready(false)) return fail(error_);

  queues_.resize(1);
  stats_.add_group("sq0", *queues_[0].sq_counters);
  stats_.add_group("cq0", *queues_[0].cq_counters);
  Queue& a = queues_[0];
  a.sq_gpa = layout_.admin_sq;
  a.cq_gpa = layout_.admin_cq;
  a.entries = config_.admin_queue_entries;
  a.cq_entries = a.entries;
  std::memset(mem(a.cq_gpa, a.entries * nvme::CQE_SIZE), 0, a.entries * nvme::CQE_SIZE);
  cpu(0).mmio_write32(nvme::reg::AQA, nvme::aqa::make(a.entries, a.entries));
  cpu(0).mmio_write64(nvme::reg::ASQ, a.sq_gpa);
  cpu(0).mmio_write64(nvme::reg::ACQ, a.cq_gpa);
  cc_ = nvme::cc::make(true, 0, 6, 4);  // 4 KiB pages, 64 B SQEs, 16 B CQEs, NVM command set
  cpu(0).mmio_write32(nvme::reg::CC, cc_);
  if (!wait_ready(true)) return fail(error_);

  uint16_t st = 0;
  uint32_t dw0 = 0;
  nvme::SubmissionEntry c{};
  // Identify Controller (CNS 1).
  std::memset(mem(layout_.identify, PAGE), 0, PAGE);
  c.opcode = nvme::admin::IDENTIFY;
  c.prp1 = layout_.identify;
  c.cdw10 = nvme::cns::CONTROLLER;
  if (!admin_command(c, "Identify Controller", &st, &dw0)) return fail(error_);
  if (st) return fail(status_error("Identify Controller", st));
  {
    const uint8_t* id = mem(layout_.identify, PAGE);
    result_.vendor_id = uint16_t(load_le(id + nvme::id_ctrl::VID, 2));
    result_.oacs = uint16_t(load_le(id + nvme::id_ctrl::OACS, 2));
    result_.mdts = id[nvme::id_ctrl::MDTS];
    result_.nn = uint32_t(load_le(id + nvme::id_ctrl::NN, 4));
  }
  if (result_.mdts != 0 && result_.mdts < 32 &&
      config_.max_transfer_bytes > (uint64_t(PAGE) << result_.mdts))
    return fail("max_transfer_bytes (" + std::to_string(config_.max_transfer_bytes) +
                ") exceeds the controller's MDTS (" +
                std::to_string(uint64_t(PAGE) << result_.mdts) + " bytes)");

  // Identify Namespace 1 (CNS 0).
  std::memset(mem(layout_.identify, PAGE), 0, PAGE);
  c = nvme::SubmissionEntry{};
  c.opcode = nvme::admin::IDENTIFY;
  c.nsid = 1;
  c.prp1 = layout_.identify;
  c.cdw10 = nvme::cns::NAMESPACE;
  if (!admin_command(c, "Identify Namespace 1", &st, &dw0)) return fail(error_);
  if (st) return fail(status_error("Identify Namespace 1", st));
  {
    const uint8_t* id = mem(layout_.identify, PAGE);
    result_.namespace_lbas = load_le(id + nvme::id_ns::NSZE, 8);
    const unsigned format = id[nvme::id_ns::FLBAS] & 0xF;
    const uint32_t lbaf = uint32_t(load_le(id + nvme::id_ns::LBAF0 + 4 * format, 4));
    const unsigned lbads = (lbaf >> 16) & 0xFF;
    if (lbads < 9 || lbads > 16)
      return fail("Identify Namespace 1: unsupported LBA data size 2^" + std::to_string(lbads));
    lba_bytes_ = 1u << lbads;
    result_.lba_bytes = lba_bytes_;
  }
  if (result_.namespace_lbas == 0) return fail("Identify Namespace 1: NSZE is 0");

  // Set Features, Number of Queues (0's based both ways).
  c = nvme::SubmissionEntry{};
  c.opcode = nvme::admin::SET_FEATURES;
  c.cdw10 = nvme::feature::NUMBER_OF_QUEUES;
  const uint32_t want = config_.io_queues - 1u;
  c.cdw11 = want | (want << 16);
  if (!admin_command(c, "Set Features (Number of Queues)", &st, &dw0)) return fail(error_);
  if (st) return fail(status_error("Set Features (Number of Queues)", st));
  const uint32_t granted = std::min<uint32_t>(
      {uint32_t(config_.io_queues), (dw0 & 0xFFFF) + 1u, (dw0 >> 16) + 1u});

  if (config_.irq_coalescing_threshold || config_.irq_coalescing_time_100us) {
    c = nvme::SubmissionEntry{};
    c.opcode = nvme::admin::SET_FEATURES;
    c.cdw10 = nvme::feature::INTERRUPT_COALESCING;
    const uint32_t thr = config_.irq_coalescing_threshold ? config_.irq_coalescing_threshold - 1u : 0;
    c.cdw11 = (thr & 0xFF) | (uint32_t(config_.irq_coalescing_time_100us) << 8);
    if (!admin_command(c, "Set Features (Interrupt Coalescing)", &st, &dw0)) return fail(error_);
    if (st) return fail(status_error("Set Features (Interrupt Coalescing)", st));
  }

  if (!config_.dbbuf_config_after_queues && !configure_dbbuf(result_)) return fail(error_);
  queues_.resize(granted + 1);
  for (uint16_t qid = 1; qid <= granted; ++qid)
    if (!create_io_queue(qid)) return fail(error_);
  io_queues_ = uint16_t(granted);
  if (config_.dbbuf_config_after_queues && !configure_dbbuf(result_)) {
    io_queues_ = 0;
    return fail(error_);
  }
  result_.io_queues = io_queues_;
  result_.ok = true;
  result_.error = "";
  return result_;
}

BringUpResult Driver::reset_and_bring_up() {
  dbbuf_active_ = false;
  cpu(0).mmio_write32(nvme::reg::CC, cc_ & ~(nvme::cc::EN | CC_SHN_MASK));
  if (!wait_ready(false)) {
    std::string why = "reset: " + error_;
    reset_state();
    return fail(why);
  }
  reset_state();
  return bring_up();
}

}  // namespace nvmesim::fw
