// The NVMe controller's hardware engine (a DeviceEngine,
// models/engine/device_engine.h): the controller's own SC_THREAD, woken by
// doorbell writes and backend completions, that runs the firmware's queue
// processing with every stage costed in cycles of the controller clock. It
// is the engine of a controller built without host threads
// (NvmeControllerModel's constructors without them): a platform of one's
// own, and the application's passed-through SSD (hv.passthrough=on); the
// other engine, QEMU's emulation on HostThreads with its notify modes
// (models/engine/emulation_engine.h), is the application's for emulated
// devices. The arbiter's turns and the SQE bursts are this engine's; the
// queue work of a turn is the controller's (QueueDevice::serve_sq).
//
// Stages and where they are charged (each on top of the DMA time the link
// model gives the transfer itself):
//   doorbell decode  BAR0 doorbell write -> engine wake-up (added to the write's delay)
//   SQE fetch        per command, after its 64-byte read
//   command parse    per command, after the fetch
//   backend hand-off per I/O command passed to the backend
//   CQE post         per completion, before its 16-byte write
//   MSI-X            per message, before the write leaves
// A pass starts when the engine wakes; it takes the turns the firmware's
// arbiter gives (firmware/nvme/arbitration.h, NVMe 1.4 section 4.13: Round
// Robin or Weighted Round Robin with Urgent Priority Class by CC.AMS, each
// turn up to the Arbitration Burst) among the SQs that were rung or still
// hold commands, taking no further turn once it has fetched nvme.sq_budget
// commands for each SQ ready when it started (a turn with no burst limit
// may take all of an SQ's), then posts the CQs with completions, and
// repeats until a pass finds nothing. The arbiter's rotation and round go on across passes.
//
// SQE fetch: one read fetches the SQEs published from an SQ's head, up to
// nvme.sqe_burst of them and the ring's end (8 x 64 = 512 bytes, the default
// MRRS: one read request); the fetches of the others take no link time but
// wait for that read's completions. A controller that fetched one SQE a
// round trip (nvme.sqe_burst=1) would be bound by pcie.read_rtt per command.
//
// Shadow doorbells (doorbell buffer active): the engine reads an SQ's
// shadow tail by DMA when the SQ's turn in a pass starts, and again after
// each command, right after writing the SQ EventIdx (the firmware's
// nvme.sq_eventidx policy); it reads a CQ's shadow head before posting to a
// CQ the driver rang and when the CQ looks full. A guest that skips the
// MMIO doorbell because the EventIdx says the device is still working is
// thus seen by the re-read after the command in flight; one that publishes
// after the engine went idle rings the doorbell (the EventIdx equals the
// tail the engine consumed), which wakes it.
//
// The costs are assumptions (no public per-stage figures of an NVMe
// controller): a 1 GHz controller clock and tens of cycles per stage, the
// order of a simple embedded pipeline. Their sensitivity is linear: each
// command costs fetch + parse + hand-off + CQE post cycles of engine time,
// and the doorbell decode and MSI-X cycles add to its latency.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "nvmesim/firmware/nvme/controller.h"
#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/engine/device_engine.h"
#include "nvmesim/models/engine/dma_timing.h"
#include "nvmesim/models/sim/param_defaults.h"
#include "nvmesim/models/sim/param_visit.h"
#include "nvmesim/models/sim/stat_time.h"

namespace nvmesim::models {

// nvme.clock and the stage costs: in the application's parameter list
// (--list-params, config files, --nvme.clock=...), where they time the
// passed-through SSD (hv.passthrough=on); an emulated controller runs on
// QEMU's engine, so there they do nothing and are warned about
// (platform/config/param_requires.cpp).
struct NvmeHwEngineParams {
  double clock_ghz{};
  uint32_t doorbell_decode{}, sqe_fetch{}, command_parse{}, backend_handoff{}, cqe_post{}, msix{};
  uint32_t sqe_burst{};  // SQEs one read fetches, at most

  NvmeHwEngineParams() { set_param_defaults(*this); }  // the visit lines' defaults

  static constexpr const char* param_prefix = "nvme";
  template <class V>
  void visit(V& v) {
    v.real(clock_ghz, "clock", "1", "GHz", 0.001, 100,
           "controller clock of the hardware engine (a passed-through SSD's, hv.passthrough=on)");
    v.integer(doorbell_decode, "doorbell_decode_cycles", "8", "cycles", 0, 1e6,
              "BAR0 doorbell write decoded to the engine's wake-up");
    v.integer(sqe_fetch, "sqe_fetch_cycles", "16", "cycles", 0, 1e6,
              "per command: the SQE read's handling (besides its DMA time)");
    v.integer(command_parse, "command_parse_cycles", "32", "cycles", 0, 1e6,
              "per command: opcode, namespace, LBA range and PRP checks");
    v.integer(backend_handoff, "backend_handoff_cycles", "16", "cycles", 0, 1e6,
              "per I/O command handed to the backend");
    v.integer(cqe_post, "cqe_post_cycles", "16", "cycles", 0, 1e6,
              "per completion: building the CQE (besides its DMA time)");
    v.integer(msix, "msix_cycles", "8", "cycles", 0, 1e6, "per MSI-X message sent");
    v.integer(sqe_burst, "sqe_burst", "8", "entries", 1, 64,
              "SQEs the engine fetches with one read: those published from the head, to the ring's end (8: "
              "512 bytes, the default MRRS)");
  }
};

class NvmeHwEngine : public sc_core::sc_module, public DeviceEngine {
 public:
  // `controller`: the firmware whose arbiter chooses the turns and whose SQs
  // the bursts read; `dma`: the device's DMA timing (SQE bursts);
  // `sq_budget`: nvme.sq_budget (a pass's commands per ready SQ).
  NvmeHwEngine(sc_core::sc_module_name name, const NvmeHwEngineParams& params, QueueDevice& device,
               fw::Controller& controller, DmaTiming& dma, unsigned sq_budget);

  // Run the work `delay` from now (requests coalesce to the earliest; one
  // made while the work runs makes it run again).
  void kick(const sc_core::sc_time& delay);
  // n cycles of the controller clock.
  sc_core::sc_time cycles(uint32_t n) const { return cycle_ * double(n); }
  const NvmeHwEngineParams& params() const { return params_; }
  bool busy() const { return busy_; }

  // DeviceEngine: the doorbell path is the engine's own (the arbiter keeps
  // the SQs that were rung; a write wakes the engine after its decode cycles).
  void mark_sq(uint16_t qid) override { controller_.arbiter().set_ready(qid, true); }
  void doorbell_written(uint16_t qid, bool sq, sc_core::sc_time& delay) override;
  void work_arrived(unsigned) override { kick(sc_core::SC_ZERO_TIME); }  // the backend's completion signal
  void reset() override;
  sc_core::sc_time sq_fetch_arrival(uint64_t addr, uint32_t len) override;
  unsigned context_count() const override { return 1; }
  unsigned context_of(uint16_t) const override { return 0; }
  unsigned trace_id(unsigned) const override { return kTraceId; }
  unsigned own_tracks() const override { return 1; }
  bool sqs_marked(unsigned) const override { return controller_.arbiter().any_ready(); }
  bool work_pending() const override { return has_request_ || busy_; }
  stats::Group* stats() override { return &stats_; }

  // Its trace track: the device track 0 (a trace's host0.state and
  // host0.burst; the application's passthrough builds no host thread).
  static constexpr unsigned kTraceId = 0;

  // The "engine" statistics group (nvme.engine in the application's tree).
  uint64_t runs() const { return runs_; }
  sc_core::sc_time busy_time() const { return busy_time_; }

 private:
  void run();
  unsigned serve_sqs(Context& c) override;
  void charge_op(EngineOp op, sc_core::sc_time* offset) override;

  NvmeHwEngineParams params_;
  fw::Controller& controller_;
  DmaTiming& dma_;
  unsigned sq_budget_;
  sc_core::sc_time cycle_;
  sc_core::sc_time stage_time_[kEngineOps];  // by EngineOp
  sc_core::sc_time doorbell_time_;
  Context context_;  // every queue's
  sc_core::sc_event kick_event_;
  bool has_request_ = false, busy_ = false;
  sc_core::sc_time request_time_;  // absolute
  // SQs that stopped with commands left in a pass (ready again for the next).
  std::vector<uint16_t> held_back_;
  // The last SQE burst of each SQ: [begin, end) and when it arrived
  // (entries a turn did not consume wait for the SQ's next turn).
  struct SqeBurst {
    uint64_t begin = 0, end = 0;
    sc_core::sc_time arrival;
  };
  std::vector<SqeBurst> sqe_bursts_;
  int fetching_sq_ = -1;  // the SQ of the turn under way
  stats::Group stats_;
  stats::Scalar runs_{stats_, "runs", stats::Unit::Count, "times the engine woke and ran its passes"};
  TimeStat busy_time_{stats_, "busy_time", "time the engine was running"};
  stats::Scalar doorbells_{stats_, "doorbells", stats::Unit::Count,
                           "BAR0 doorbell writes that woke the engine (doorbell_decode_cycles)"};
  stats::Scalar commands_{stats_, "commands", stats::Unit::Count,
                          "SQEs fetched and parsed, admin and I/O (sqe_fetch_cycles + command_parse_cycles)"};
  stats::Scalar handoffs_{stats_, "backend_handoffs", stats::Unit::Count,
                          "I/O commands handed to the backend (backend_handoff_cycles)"};
  stats::Scalar cqes_{stats_, "cqes", stats::Unit::Count, "CQEs built and posted (cqe_post_cycles)"};
  stats::Scalar msix_{stats_, "msix", stats::Unit::Count, "MSI-X messages sent (msix_cycles)"};
  stats::Scalar* stage_count_[kEngineOps] = {&commands_, &handoffs_, &cqes_, &msix_, nullptr};  // by EngineOp
};

}  // namespace nvmesim::models
