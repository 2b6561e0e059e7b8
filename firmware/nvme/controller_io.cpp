// Submission-queue processing (QEMU nvme_process_sq), the NVM I/O command
// checks, and completion posting (QEMU nvme_post_cqes).
#include "nvmesim/firmware/nvme/controller.h"

#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/firmware/nvme/prp.h"

namespace nvmesim::fw {

using namespace nvme;

unsigned Controller::process_sq(uint16_t sqid, unsigned budget) {
  if (!enabled() || fatal() || sqid >= sqs_.size() || !sqs_[sqid].exists) return 0;
  const bool admin = sqid == 0;
  Sq& sq = sqs_[sqid];  // sqs_ never reallocates; an SQ is only deleted from the admin SQ
  if (admin) in_admin_burst_ = true;
  bool enqueued = false;
  unsigned consumed = 0;
  // The steps `nvmesim verify` explores: the shadow tail, then per command
  // the fetch and config_.dbbuf_order.sq (EventIdx, barrier, shadow re-read).
  for (auto pass = DbbufDevicePass::sq_pass(dbbuf_covers(sqid), config_.dbbuf_order); !pass.done();
       pass.advance(dbbuf_covers(sqid))) {
    switch (pass.step()) {
      case DbbufDeviceStep::LoadShadow: shadow_read_sq_tail(sqid); break;
      case DbbufDeviceStep::StoreEventIdx:
        if (!sq.suppress_eventidx) apply_sq_eventidx(sqid);  // polled: left where poll begin put it
        break;
      case DbbufDeviceStep::Barrier: env_.device_barrier(); break;
      case DbbufDeviceStep::FetchSqe:
        if (!(consumed < budget && sq.head != sq.tail && sq.in_use < sq.size && !fatal() &&
              fetch_command(sqid, consumed, enqueued)))
          pass.finish();
        break;
      default: pass.finish(); break;  // no posting step in an SQ pass
    }
  }
  if (admin) in_admin_burst_ = false;
  // This burst's own completions (admin commands, failed I/O commands) are
  // posted here; the backend's wait for post_completions().
  if (admin ? cq_has_pending(0) : enqueued) post_completions(sq.cqid);
  return consumed;
}

// Fetches SQ `sqid`'s head entry (counted in `consumed`) and executes it.
// False when that set CSTS.CFS (the queue memory unreadable): the pass ends.
bool Controller::fetch_command(uint16_t sqid, unsigned& consumed, bool& enqueued) {
  Sq& sq = sqs_[sqid];
  SubmissionEntry cmd;  // little-endian host assumed, as the SQE layout
  if (!env_.dma_read(DmaPurpose::SqeFetch, sq.base + uint64_t(sq.head) * SQE_SIZE, &cmd, SQE_SIZE)) {
    set_fatal();
    return false;
  }
  counters_.commands_fetched++;
  env_.on_command_fetched();
  sq.head = Ring{sq.size}.advance(sq.head);
  consumed++;
  const uint32_t slot = alloc_slot(sqid, cmd.cid);
  if (slot == NO_SLOT) {  // cannot happen: the pool covers every SQ's size
    set_fatal();
    return false;
  }
  uint16_t st = 0;
  uint32_t dw0 = 0;
  bool handed_on = false;  // held (an AER) or with the backend: no completion yet
  if (sqid == 0) {
    counters_.admin_commands++;
    st = execute_admin(cmd, slot, dw0, handed_on);
  } else {
    counters_.io_commands++;
    st = execute_io(cmd, sqid, slot, handed_on);
  }
  if (!handed_on) {
    enqueue_completion(slot, st, dw0);
    enqueued = true;
  }
  return true;
}

uint16_t Controller::execute_io(const SubmissionEntry& cmd, uint16_t sqid, uint32_t slot,
                                bool& submitted) {
  submitted = false;
  const uint8_t op = cmd.opcode;
  if (op != io::READ && op != io::WRITE && op != io::FLUSH)
    return status_generic(sc::INVALID_OPCODE);
  if (!plain_prp_command(cmd)) return status_generic(sc::INVALID_FIELD);
  IoRequest& r = req_;
  r.tag = make_tag(slots_[slot].gen, slot);
  r.sqid = sqid;
  r.cid = cmd.cid;
  r.opcode = op;
  r.nsid = cmd.nsid;
  r.slba = 0;
  r.nlb = 0;
  r.bytes = 0;
  r.segment_count = 0;
  r.segments.clear();
  if (op == io::FLUSH) {
    if (cmd.nsid != 1 && cmd.nsid != 0xFFFFFFFFu) return status_generic(sc::INVALID_NAMESPACE);
  } else {
    if (cmd.nsid != 1) return status_generic(sc::INVALID_NAMESPACE);
    const uint64_t slba = uint64_t(cmd.cdw10) | (uint64_t(cmd.cdw11) << 32);
    const uint32_t nlb = (cmd.cdw12 & 0xFFFF) + 1;
    const uint64_t bytes = uint64_t(nlb) * config_.lba_bytes;
    if (config_.mdts != 0 && config_.mdts < 32) {
      const uint64_t limit = (uint64_t(1) << config_.mdts) * (uint64_t(4096) << config_.mpsmin);
      if (bytes > limit) return status_generic(sc::INVALID_FIELD);
    }
    if (bytes > 0xFFFFFFFFull) return status_generic(sc::INVALID_FIELD);
    if (slba >= config_.namespace_lbas || nlb > config_.namespace_lbas - slba)
      return status_generic(sc::LBA_OUT_OF_RANGE);
    const uint16_t st = map_prp(env_, cmd.prp1, cmd.prp2, uint32_t(bytes), page_bytes(), r.segments);
    if (st != STATUS_SUCCESS) return st;
    r.segment_count = uint32_t(r.segments.size());
    // Data outside guest memory: refused before the backend (as QEMU's
    // mapping), whatever the backend would do with it.
    for (uint32_t i = 0; i < r.segment_count; ++i)
      if (!inside_guest_memory(r.segments[i].addr, r.segments[i].len))
        return status_generic(sc::DATA_TRANSFER_ERROR);
    r.slba = slba;
    r.nlb = nlb;
    r.bytes = uint32_t(bytes);
  }
  slots_[slot].state = SlotState::Backend;
  outstanding_io_++;
  submitted = true;
  env_.backend_submit(r);  // may call complete_io() at once: that only enqueues
  return STATUS_SUCCESS;
}

unsigned Controller::post_completions(uint16_t cqid) {
  if (!enabled() || fatal() || cqid >= cqs_.size() || !cqs_[cqid].exists) return 0;
  Cq& cq = cqs_[cqid];
  if (cq.posting) return 0;  // re-entered (an async event while posting): the outer loop posts
  cq.posting = true;
  unsigned posted = 0;
  // The steps `nvmesim verify` explores: per CQE config_.dbbuf_order.cq
  // (EventIdx, barrier, shadow head re-read), then the room check and the CQE.
  for (auto pass = DbbufDevicePass::cq_post(config_.dbbuf_order); !pass.done(); pass.advance(dbbuf_covers(cqid))) {
    switch (pass.step()) {
      case DbbufDeviceStep::CqePending:
        if (cq.pending == 0) pass.finish();
        break;
      case DbbufDeviceStep::StoreEventIdx: apply_cq_eventidx(cqid); break;
      case DbbufDeviceStep::Barrier: env_.device_barrier(); break;
      case DbbufDeviceStep::LoadShadow: shadow_read_cq_head(cqid); break;
      case DbbufDeviceStep::WriteCqe:
        if (write_cqe(cq)) posted++;
        else pass.finish();
        break;
      default: pass.finish(); break;  // no fetch in posting
    }
  }
  cq.posting = false;
  if (posted > 0 && cq.ien) raise_interrupt(cq.vector);
  return posted;
}

// Writes the CQE of the oldest pending completion and frees its slot. False
// when the CQ is full (counted once per wait) or its memory unwritable.
bool Controller::write_cqe(Cq& cq) {
  const Ring ring{cq.size};
  if (ring.full(cq.head, cq.tail)) {
    if (!cq.stalled) counters_.cq_full_waits++;
    cq.stalled = true;
    return false;
  }
  const uint32_t i = cq.pend_first;
  const Slot& s = slots_[i];
  CompletionEntry e{};
  e.dw0 = s.dw0;
  e.sq_head = uint16_t(sqs_[s.sqid].head);
  e.sq_id = s.sqid;
  e.cid = s.cid;
  e.status = cqe_status_word(s.status, cq.phase);
  env_.on_completion_posting();
  if (!env_.dma_write(DmaPurpose::CqeWrite, cq.base + uint64_t(cq.tail) * CQE_SIZE, &e, CQE_SIZE)) {
    set_fatal();
    return false;
  }
  cq.tail = ring.advance(cq.tail);
  if (cq.tail == 0) cq.phase = !cq.phase;
  cq.pend_first = s.next;
  if (cq.pend_first == NO_SLOT) cq.pend_last = NO_SLOT;
  cq.pending--;
  cq.stalled = false;
  release_slot(i);
  counters_.completions_posted++;
  return true;
}

}  // namespace nvmesim::fw
