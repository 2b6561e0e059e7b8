// Guest driver: construction, the guest-memory carve-out, introspection.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "nvmesim/firmware/guest/driver.h"

namespace nvmesim::fw {

namespace {
constexpr uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

Driver::Driver(const DriverConfig& config, DriverEnv& env)
    : config_(config), cpus_(size_t(config.io_queues) + 1, &env) {}

Driver::Driver(const DriverConfig& config)
    : config_(config), cpus_(size_t(config.io_queues) + 1, nullptr) {}

void Driver::attach_cpu(uint16_t qid, DriverEnv& cpu) { cpus_.at(qid) = &cpu; }

DriverEnv& Driver::cpu(uint16_t qid) const {
  DriverEnv* env = qid < cpus_.size() ? cpus_[qid] : nullptr;
  if (!env) throw std::logic_error("driver: no CPU attached to queue " + std::to_string(qid));
  return *env;
}

uint32_t Driver::data_buffer_stride(const DriverConfig& c) {
  return uint32_t(align_up(c.max_transfer_bytes, PAGE));
}

bool Driver::needs_prp_list(const DriverConfig& c) {
  return data_buffer_stride(c) / PAGE > 2;  // PRP1 + PRP2 cover two pages
}

uint32_t Driver::prp_list_pages(const DriverConfig& c) {
  if (!needs_prp_list(c)) return 0;
  const uint32_t entries = data_buffer_stride(c) / PAGE - 1;  // PRP1 covers page 0
  constexpr uint32_t per_page = PAGE / 8;
  return entries <= per_page ? 1 : (entries - 1 + per_page - 2) / (per_page - 1);
}

uint32_t Driver::io_cq_entries_for(const DriverConfig& c, uint32_t io_entries, uint16_t mqes) {
  return c.io_cq_entries ? std::min<uint32_t>(c.io_cq_entries, uint32_t(mqes) + 1) : io_entries;
}

bool Driver::plan_layout(const DriverConfig& c, uint32_t io_entries, uint32_t cq_entries,
                         uint32_t tags, uint32_t dstrd, Layout& out, std::string* error) {
  auto bad = [&](const std::string& m) {
    if (error) *error = m;
    return false;
  };
  if (c.admin_queue_entries < 2 || c.admin_queue_entries > 4096)
    return bad("admin_queue_entries must be 2..4096 (AQA holds 12 bits)");
  if (c.io_queues == 0) return bad("io_queues must be at least 1");
  if (io_entries < 2) return bad("I/O queue entries must be at least 2");
  if (cq_entries < 2) return bad("io_cq_entries must be 0 (as the SQ) or at least 2");
  if (tags == 0) return bad("max_outstanding_per_queue must be at least 1");
  if (c.max_transfer_bytes == 0) return bad("max_transfer_bytes must be at least 1");

  Layout l;
  uint64_t cur = align_up(c.memory_base, PAGE);
  auto carve = [&](uint64_t bytes) {
    uint64_t at = cur;
    cur += align_up(bytes, PAGE);
    return at;
  };
  l.admin_sq = carve(uint64_t(c.admin_queue_entries) * nvme::SQE_SIZE);
  l.admin_cq = carve(uint64_t(c.admin_queue_entries) * nvme::CQE_SIZE);
  l.identify = carve(nvme::id_ctrl::SIZE);
  l.dbbuf_bytes = align_up(dbbuf_bytes_needed(c.io_queues, dstrd), PAGE);
  l.shadow = carve(l.dbbuf_bytes);
  l.eventidx = carve(l.dbbuf_bytes);
  const uint64_t stride = data_buffer_stride(c);
  for (uint16_t q = 1; q <= c.io_queues; ++q) {
    l.io_sq.push_back(carve(uint64_t(io_entries) * nvme::SQE_SIZE));
    l.io_cq.push_back(carve(uint64_t(cq_entries) * nvme::CQE_SIZE));
    l.data.push_back(carve(stride * tags));
    l.prp.push_back(needs_prp_list(c) ? carve(uint64_t(PAGE) * prp_list_pages(c) * tags) : 0);
  }
  l.end = cur;
  if (l.end - c.memory_base > c.memory_bytes)
    return bad("guest memory region too small for the driver: need " +
               std::to_string(l.end - c.memory_base) + " bytes from memory_base, have " +
               std::to_string(c.memory_bytes));
  out = std::move(l);
  return true;
}

uint64_t Driver::memory_needed(const DriverConfig& config, uint16_t mqes, uint32_t dstrd) {
  DriverConfig c = config;
  c.memory_base = 0;
  c.memory_bytes = ~uint64_t(0);
  uint32_t entries = std::min<uint32_t>(c.io_queue_entries, uint32_t(mqes) + 1);
  uint32_t tags = std::min<uint32_t>(c.max_outstanding_per_queue, entries ? entries - 1 : 0);
  Layout l;
  if (!plan_layout(c, entries, io_cq_entries_for(c, entries, mqes), tags, dstrd, l, nullptr))
    return 0;
  return l.end;
}

const Driver::Queue* Driver::queue(uint16_t qid) const {
  return qid < queues_.size() ? &queues_[qid] : nullptr;
}

uint32_t Driver::outstanding(uint16_t qid) const {
  if (qid == 0 || qid > io_queues_) return 0;
  const Queue& q = queues_[qid];
  return uint32_t(q.tag_busy.size() - q.free_tags.size());
}

uint32_t Driver::queue_entries() const { return io_entries_; }
uint32_t Driver::cq_entries() const { return io_cq_entries_; }
bool Driver::dbbuf_active() const { return dbbuf_active_; }
uint64_t Driver::shadow_buffer_addr() const { return layout_.shadow; }
uint64_t Driver::eventidx_buffer_addr() const { return layout_.eventidx; }

const QueueDoorbellCounters& Driver::sq_counters(uint16_t qid) const {
  static const QueueDoorbellCounters none;
  const Queue* q = queue(qid);
  return q ? *q->sq_counters : none;
}

const QueueDoorbellCounters& Driver::cq_counters(uint16_t qid) const {
  static const QueueDoorbellCounters none;
  const Queue* q = queue(qid);
  return q ? *q->cq_counters : none;
}

uint16_t Driver::sq_tail(uint16_t qid) const {
  const Queue* q = queue(qid);
  return q ? q->sq_tail : 0;
}

uint16_t Driver::cq_head(uint16_t qid) const {
  const Queue* q = queue(qid);
  return q ? q->cq_head : 0;
}

uint64_t Driver::invalid_completions(uint16_t qid) const {
  const Queue* q = queue(qid);
  return q ? uint64_t(q->cq_counters->invalid_completions) : 0;
}

uint64_t Driver::data_buffer(uint16_t qid, uint32_t tag) const {
  if (qid == 0 || qid > layout_.data.size() || tag >= tags_per_queue_) return 0;
  return layout_.data[qid - 1] + uint64_t(tag) * data_buffer_stride(config_);
}

}  // namespace nvmesim::fw
