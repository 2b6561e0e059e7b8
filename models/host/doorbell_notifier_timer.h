// hv.notify=timer (QEMU 2.x hw/block/nvme.c): an I/O queue's doorbell write
// arms that queue's timer (timer_mod(now + timer_delay)); SQs are processed
// and CQs posted only when their timer has fired. Backend completions arm
// their CQ's timer; an SQ left with commands re-arms its own. Each host
// thread has one timer, set to the earliest deadline of its queues. The
// admin queue is processed at once.
#pragma once

#include <vector>

#include "nvmesim/models/host/doorbell_notifier.h"

namespace nvmesim::models {

class TimerNotifier : public DoorbellNotifier {
 public:
  TimerNotifier(NotifyTarget& target, uint16_t queues, const sc_core::sc_time& timer_delay);
  NotifyMode mode() const override { return NotifyMode::Timer; }
  void doorbell_written(uint16_t qid, bool sq, sc_core::sc_time& delay) override;
  void on_pass_start(unsigned index, uint16_t cq_limit) override;
  bool sq_due(uint16_t qid) override;
  bool cq_due(uint16_t cqid) override;
  void sq_work_left(uint16_t qid, const sc_core::sc_time& local) override;
  void completion_queued(uint16_t cqid, const sc_core::sc_time& local) override;
  void on_emulation_end(unsigned index) override;

  // Zero: not armed.
  sc_core::sc_time sq_deadline(uint16_t qid) const { return sq_deadline_.at(qid); }
  sc_core::sc_time cq_deadline(uint16_t qid) const { return cq_deadline_.at(qid); }

 private:
  void set_deadline(uint16_t qid, bool sq, const sc_core::sc_time& delay);
  void rearm_thread_timer(unsigned index, const sc_core::sc_time& notified = sc_core::SC_ZERO_TIME);
  bool due(std::vector<sc_core::sc_time>& deadline, uint16_t qid);

  NotifyTarget& target_;
  sc_core::sc_time timer_delay_;
  std::vector<sc_core::sc_time> sq_deadline_, cq_deadline_;
  std::vector<uint8_t> cq_fired_;  // CQ timers that expired before the current pass
};

}  // namespace nvmesim::models
