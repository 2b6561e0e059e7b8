// Guest driver: the I/O path. submit() builds commands, ring_sq() and
// reap() publish tails and heads through nvme_dbbuf_update_and_check_event's
// sequence when the doorbell buffer is active, else through BAR0.
#include <cstring>

#include "nvmesim/firmware/nvme/dbbuf_policy.h"
#include "nvmesim/firmware/guest/dbbuf_publish.h"
#include "nvmesim/firmware/guest/driver.h"

namespace nvmesim::fw {

namespace {

uint64_t load_le(const uint8_t* p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

void store_le64(uint8_t* p, uint64_t v) {
  for (unsigned i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}

}  // namespace

Driver::Queue* Driver::io_queue(uint16_t qid) {
  if (qid == 0 || qid > io_queues_) return nullptr;
  return &queues_[qid];
}

bool Driver::uses_shadow(uint16_t qid) const {
  return driver_uses_shadow(dbbuf_active_, config_.admin_shadow, qid);
}

DoorbellUpdate Driver::publish(uint16_t qid, bool sq) {
  Queue& q = queues_[qid];
  DoorbellUpdate u;
  const uint16_t value = sq ? q.sq_tail : q.cq_head;
  uint16_t& published = sq ? q.sq_tail_published : q.cq_head_published;
  if (value == published) return u;
  DriverEnv& env = cpu(qid);  // the CPU that drives this queue
  u.updated = true;
  u.new_value = value;
  QueueDoorbellCounters& n = sq ? *q.sq_counters : *q.cq_counters;
  ++n.updates;
  const uint32_t doorbell =
      sq ? nvme::sq_tail_doorbell(qid, dstrd_) : nvme::cq_head_doorbell(qid, dstrd_);
  bool ring = true;
  if (uses_shadow(qid)) {
    const uint32_t off = sq ? dbbuf_sq_offset(qid, dstrd_) : dbbuf_cq_offset(qid, dstrd_);
    u.via_shadow = true;
    ++n.updates_with_dbbuf;
    DbbufPublish p(value, config_.dbbuf_full_barrier, config_.need_event_form);
    while (p.step() != DbbufPublish::Step::Decided) {
      switch (p.step()) {
        case DbbufPublish::Step::WriteBarrier: env.write_barrier(); p.advance(); break;
        case DbbufPublish::Step::LoadShadow: p.advance(env.load_shadow(layout_.shadow + off)); break;
        case DbbufPublish::Step::StoreShadow:
          env.store_shadow(layout_.shadow + off, value);
          p.advance();
          break;
        case DbbufPublish::Step::FullBarrier: env.full_barrier(); p.advance(); break;
        case DbbufPublish::Step::LoadEventIdx:
          p.advance(env.load_eventidx(layout_.eventidx + off));
          break;
        case DbbufPublish::Step::Decided: break;
      }
    }
    u.old_value = p.old_value();
    u.eventidx = p.eventidx();
    ring = p.ring();
  } else {
    u.old_value = published;
  }
  if (ring) {
    env.mmio_write32(doorbell, value);
    u.mmio = true;
    ++n.mmio;
  } else {
    u.suppressed = true;
    ++n.suppressed;
  }
  published = value;
  return u;
}

int32_t Driver::submit(uint16_t qid, const IoSpec& io) {
  submit_error_ = "";
  Queue* q = io_queue(qid);
  if (!q) {
    submit_error_ = "qid is not a live I/O queue";
    return -1;
  }
  uint64_t bytes = 0;
  switch (io.opcode) {
    case nvme::io::READ:
    case nvme::io::WRITE:
      if (io.nlb == 0 || io.nlb > 65536) {
        submit_error_ = "nlb must be 1..65536";
        return -1;
      }
      bytes = uint64_t(io.nlb) * lba_bytes_;
      if (bytes > config_.max_transfer_bytes) {
        submit_error_ = "transfer larger than max_transfer_bytes";
        return -1;
      }
      break;
    case nvme::io::FLUSH:
      break;
    default:
      submit_error_ = "opcode not supported by the driver (READ, WRITE, FLUSH)";
      return -1;
  }
  const Ring ring{q->entries};
  if (ring.full(q->sq_head, q->sq_tail) || q->free_tags.empty()) return -1;
  const uint32_t tag = q->free_tags.back();
  q->free_tags.pop_back();
  q->tag_busy[tag] = 1;

  nvme::SubmissionEntry c{};
  c.opcode = io.opcode;
  c.cid = uint16_t(tag);
  c.nsid = 1;
  if (bytes) {
    const uint64_t data = data_buffer(qid, tag);  // page aligned: PRP1 offset 0
    const uint32_t pages = uint32_t((bytes + PAGE - 1) / PAGE);
    c.prp1 = data;
    if (pages == 2) {
      c.prp2 = data + PAGE;
    } else if (pages > 2) {
      // PRP1 covers page 0; the tag's list pages hold pages 1..n-1. A full
      // list page's last entry points to the next list page when more
      // entries follow (NVMe 1.3 section 4.3), as Linux's nvme_pci_setup_prps.
      constexpr uint32_t per_page = PAGE / 8;
      uint64_t list = layout_.prp[qid - 1] + uint64_t(tag) * PAGE * prp_list_pages(config_);
      c.prp2 = list;
      uint32_t slot = 0;
      for (uint32_t i = 1; i < pages; ++i) {
        if (slot == per_page - 1 && i + 1 < pages) {  // one entry left here, two or more to go
          store_le64(mem(list + uint64_t(slot) * 8, 8), list + PAGE);
          list += PAGE;
          slot = 0;
        }
        store_le64(mem(list + uint64_t(slot) * 8, 8), data + uint64_t(i) * PAGE);
        ++slot;
      }
    }
    if (config_.io_prp1_misaligned) c.prp1 += 2;
    c.cdw10 = uint32_t(io.slba);
    c.cdw11 = uint32_t(io.slba >> 32);
    c.cdw12 = (io.nlb - 1) & 0xFFFF;
  }
  std::memcpy(mem(q->sq_gpa + uint64_t(q->sq_tail) * nvme::SQE_SIZE, nvme::SQE_SIZE), &c,
              sizeof c);
  q->sq_tail = uint16_t(ring.advance(q->sq_tail));
  return int32_t(tag);
}

DoorbellUpdate Driver::ring_sq(uint16_t qid) {
  if (!io_queue(qid)) return DoorbellUpdate{};
  return publish(qid, true);
}

unsigned Driver::reap(uint16_t qid, Completion* out, unsigned max, DoorbellUpdate* cq_update) {
  const unsigned reported = consume_completions(qid, out, max);
  const DoorbellUpdate u = update_cq_head(qid);
  if (cq_update) *cq_update = u;
  return reported;
}

DoorbellUpdate Driver::update_cq_head(uint16_t qid) {
  if (!io_queue(qid)) return DoorbellUpdate{};
  return publish(qid, false);  // nothing to publish when no CQE was consumed
}

unsigned Driver::consume_completions(uint16_t qid, Completion* out, unsigned max) {
  Queue* q = io_queue(qid);
  if (!q) return 0;
  const Ring ring{q->cq_entries};
  unsigned reported = 0;
  while (reported < max) {
    const uint64_t cqe = q->cq_gpa + uint64_t(q->cq_head) * nvme::CQE_SIZE;
    // Phase first; the rest only once it matches (the device may be writing it).
    const uint16_t st = uint16_t(load_le(mem(cqe + 14, 2), 2));
    if (bool(st & 1) != q->cq_phase) break;
    const uint8_t* e = mem(cqe, 14);
    const uint16_t sqhd = uint16_t(load_le(e + 8, 2));
    const uint16_t cid = uint16_t(load_le(e + 12, 2));
    if (sqhd < q->entries) q->sq_head = sqhd;  // frees SQ slots
    q->cq_head = uint16_t(ring.advance(q->cq_head));
    if (q->cq_head == 0) q->cq_phase = !q->cq_phase;
    ++q->cq_counters->completions;
    if (cid < q->tag_busy.size() && q->tag_busy[cid]) {
      q->tag_busy[cid] = 0;
      q->free_tags.push_back(cid);
      out[reported++] = Completion{cid, uint16_t(st >> 1), qid};
    } else {
      ++q->cq_counters->invalid_completions;  // Linux: "invalid id %d completed on queue %d"
    }
  }
  return reported;
}

bool Driver::completion_ready(uint16_t qid) const {
  if (qid == 0 || qid > io_queues_) return false;
  const Queue& q = queues_[qid];
  const uint64_t cqe = q.cq_gpa + uint64_t(q.cq_head) * nvme::CQE_SIZE;
  return bool(load_le(mem(cqe + 14, 2), 2) & 1) == q.cq_phase;
}

}  // namespace nvmesim::fw
