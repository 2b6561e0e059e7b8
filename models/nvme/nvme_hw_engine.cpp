#include "nvmesim/models/nvme/nvme_hw_engine.h"

#include <algorithm>
#include <stdexcept>

#include "nvmesim/firmware/nvme/controller_tag.h"
#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

NvmeHwEngine::NvmeHwEngine(sc_module_name name, const NvmeHwEngineParams& params, QueueDevice& device,
                           fw::Controller& controller, DmaTiming& dma, unsigned sq_budget)
    : sc_module(name), DeviceEngine(device), params_(params), controller_(controller), dma_(dma),
      sq_budget_(sq_budget) {
  if (!(params_.clock_ghz > 0)) throw std::invalid_argument("nvme.clock: must be above 0 GHz");
  cycle_ = sc_time(1.0 / params_.clock_ghz, SC_NS);
  // Each stage's time worked out once: no conversion per command.
  doorbell_time_ = cycles(params_.doorbell_decode);
  stage_time_[unsigned(EngineOp::Command)] = cycles(params_.sqe_fetch + params_.command_parse);
  stage_time_[unsigned(EngineOp::BackendHandoff)] = cycles(params_.backend_handoff);
  stage_time_[unsigned(EngineOp::Completion)] = cycles(params_.cqe_post);
  stage_time_[unsigned(EngineOp::Msix)] = cycles(params_.msix);
  // A backend completion's handling is the CQE stage's (cqe_post_cycles).
  costed_[unsigned(EngineOp::BackendCompletion)] = false;
  const size_t queues = controller_.config().max_io_queues + 1u;
  held_back_.reserve(queues);
  sqe_bursts_.assign(queues, SqeBurst{});
  fetches_in_bursts_ = true;
  SC_HAS_PROCESS(NvmeHwEngine);
  SC_THREAD(run);
}

void NvmeHwEngine::kick(const sc_time& delay) {
  const sc_time at = kernel_now() + delay;
  if (!has_request_ || at < request_time_) {
    has_request_ = true;
    request_time_ = at;
    activations::notify(kick_event_, delay);
  }
}

void NvmeHwEngine::doorbell_written(uint16_t, bool, sc_time& delay) {
  ++doorbells_;
  kick(delay + doorbell_time_);
}

// Each stage counted whether or not a pass's time is running.
void NvmeHwEngine::charge_op(EngineOp op, sc_time* offset) {
  ++*stage_count_[unsigned(op)];
  if (offset) *offset += stage_time_[unsigned(op)];
}

// The queues go; new ones may reuse the memory.
void NvmeHwEngine::reset() { std::fill(sqe_bursts_.begin(), sqe_bursts_.end(), SqeBurst{}); }

// Requests live in variables, not only in the event, so one made while the
// work runs (or while its time passes) is not lost.
void NvmeHwEngine::run() {
  activations::begin(activations::ControllerMethod);
  for (;;) {
    while (!has_request_ || request_time_ > kernel_now()) {
      if (has_request_)
        activations::wait(request_time_ - kernel_now(), kick_event_);
      else
        activations::wait(kick_event_);
    }
    has_request_ = false;
    busy_ = true;
    ++runs_;
    const sc_time start = kernel_now();
    if (auto* t = traces::active()) t->thread_state(kTraceId, start.value(), traces::ThreadState::Working);
    sc_time local = SC_ZERO_TIME;
    run_work(context_, local);
    if (local != SC_ZERO_TIME) activations::wait(local);
    busy_time_ += kernel_now() - start;
    busy_ = false;
    if (auto* t = traces::active()) t->thread_state(kTraceId, kernel_now().value(), traces::ThreadState::Sleeping);
  }
}

// The SQ phase of a pass: turns by the firmware's arbiter (NVMe 1.4
// section 4.13: CC.AMS, the Arbitration feature, each SQ's QPRIO), each
// fetching up to its burst. A pass takes no further turn once it has
// fetched nvme.sq_budget commands for each SQ ready when it starts (what
// QEMU's engine's visit of the rung SQs fetches at most; a turn with no
// Arbitration Burst limit, AB 111b, may take all of an SQ's commands), then
// posts completions; the arbiter's rotation and round carry over to the
// next pass. An SQ that gives fewer commands than its turn allowed, or has
// none left, leaves the arbitration; one that stopped with commands left
// (all its command slots held) comes back for the next pass.
unsigned NvmeHwEngine::serve_sqs(Context&) {
  fw::Arbiter& arb = controller_.arbiter();
  const uint64_t budget = uint64_t(sq_budget_) * std::max(1u, arb.ready_count());
  uint64_t fetched = 0;
  held_back_.clear();
  while (fetched < budget) {
    const fw::Arbiter::Grant g = arb.next();
    if (!g) break;
    fetching_sq_ = g.sqid;
    const unsigned n = device_.serve_sq(g.sqid, g.commands);
    fetching_sq_ = -1;
    // Admin commands may delete and create SQs (in the same memory).
    if (g.sqid == 0) std::fill(sqe_bursts_.begin(), sqe_bursts_.end(), SqeBurst{});
    arb.consumed(g, n);
    fetched += n;
    const bool left = device_.sq_has_work(g.sqid);
    if (n < g.commands || !left) {
      arb.set_ready(g.sqid, false);
      if (left) held_back_.push_back(g.sqid);
    }
  }
  for (const uint16_t q : held_back_)
    if (device_.sq_exists(q)) arb.set_ready(q, true);  // an admin turn may have deleted it
  return unsigned(fetched);
}

// SQEs come in bursts (nvme.sqe_burst): a fetch at an SQ's head reads the
// entries published from there in one read, to the ring's end; the
// fetches of the others find theirs arrived with it (in that SQ's burst,
// kept for its next turn when this one ends first). Published entries do
// not change before they are consumed, so the burst's data is what memory
// holds now.
sc_time NvmeHwEngine::sq_fetch_arrival(uint64_t addr, uint32_t len) {
  const sc_time* local = offset();
  const sc_time at = local ? *local : SC_ZERO_TIME;
  const bool turn = fetching_sq_ >= 0 && size_t(fetching_sq_) < sqe_bursts_.size();
  if (turn) {
    const SqeBurst& burst = sqe_bursts_[size_t(fetching_sq_)];
    if (addr >= burst.begin && addr + len <= burst.end) return burst.arrival;
  }
  uint32_t entries = 1;
  if (turn) {
    const fw::Controller::SqState sq = controller_.sq_state(uint16_t(fetching_sq_));
    if (sq.exists && sq.size && addr == sq.base + uint64_t(sq.head) * len) {
      const uint32_t published = (sq.tail + sq.size - sq.head) % sq.size;
      entries = std::max(1u, std::min({published, sq.size - sq.head, params_.sqe_burst}));
    }
  }
  const uint32_t bytes = entries * len;
  const sc_time arrival =
      kernel_now() + at + dma_.time(true, unsigned(fw::DmaPurpose::SqeFetch), addr, bytes, at);
  if (turn) sqe_bursts_[size_t(fetching_sq_)] = {addr, addr + bytes, arrival};
  return arrival;
}

}  // namespace nvmesim::models
