#include "nvmesim/models/host/doorbell_notifier_timer.h"

#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/sim/kernel_time.h"

using namespace sc_core;

namespace nvmesim::models {

TimerNotifier::TimerNotifier(NotifyTarget& target, uint16_t queues, const sc_time& timer_delay)
    : target_(target),
      timer_delay_(timer_delay),
      sq_deadline_(queues, SC_ZERO_TIME),
      cq_deadline_(queues, SC_ZERO_TIME),
      cq_fired_(queues, 0) {}

void TimerNotifier::doorbell_written(uint16_t qid, bool sq, sc_time& delay) {
  if (qid == 0) {
    target_.thread(target_.thread_of(qid)).kick(delay);
    return;
  }
  set_deadline(qid, sq, delay + timer_delay_);
  rearm_thread_timer(target_.thread_of(qid), delay);
}

// QEMU's timer_mod: each arming replaces the deadline, even with a later one.
void TimerNotifier::set_deadline(uint16_t qid, bool sq, const sc_time& delay) {
  (sq ? sq_deadline_ : cq_deadline_)[qid] = kernel_now() + delay;
}

// The thread's single timer wakes it at the earliest deadline of its queues.
void TimerNotifier::rearm_thread_timer(unsigned index, const sc_time& notified) {
  bool any = false;
  sc_time earliest;
  for (uint16_t q = 1; q < sq_deadline_.size(); ++q) {
    if (target_.thread_of(q) != index) continue;
    for (const sc_time& d : {sq_deadline_[q], cq_deadline_[q]})
      if (d != SC_ZERO_TIME && (!any || d < earliest)) {
        earliest = d;
        any = true;
      }
  }
  HostThread& thread = target_.thread(index);
  if (any)
    thread.arm_timer(earliest > kernel_now() ? earliest - kernel_now() : SC_ZERO_TIME, notified);
  else
    thread.cancel_timer();  // every deadline was served: no empty wake-up
}

bool TimerNotifier::due(std::vector<sc_time>& deadline, uint16_t qid) {
  if (qid == 0) return true;
  if (deadline[qid] == SC_ZERO_TIME || deadline[qid] > kernel_now()) return false;
  deadline[qid] = SC_ZERO_TIME;
  return true;
}

// Timers fire in deadline order: a CQ timer that expired before this pass
// posts even if this pass's completions re-arm it.
void TimerNotifier::on_pass_start(unsigned index, uint16_t cq_limit) {
  for (uint16_t cqid = 1; cqid < cq_limit; ++cqid)
    if (target_.thread_of(cqid) == index && due(cq_deadline_, cqid)) cq_fired_[cqid] = 1;
}

bool TimerNotifier::sq_due(uint16_t qid) { return due(sq_deadline_, qid); }

bool TimerNotifier::cq_due(uint16_t cqid) {
  if (cqid == 0) return true;
  if (!cq_fired_[cqid]) return false;
  cq_fired_[cqid] = 0;
  return true;
}

void TimerNotifier::sq_work_left(uint16_t qid, const sc_time& local) {
  if (sq_deadline_[qid] == SC_ZERO_TIME) set_deadline(qid, true, local + timer_delay_);
}

// QEMU 2.x posts completions from the CQ's own timer.
void TimerNotifier::completion_queued(uint16_t cqid, const sc_time& local) {
  set_deadline(cqid, false, local + timer_delay_);
}

void TimerNotifier::on_emulation_end(unsigned index) {
  rearm_thread_timer(index);  // once, for every deadline this pass set
}

}  // namespace nvmesim::models
