// virtio.busy_poll: the timing of vhost-style busy polling on a virtio-blk
// device's host threads (the decisions are firmware/virtio/virtqueue_busy_poll's).
// A window runs inside the thread's work, so the thread stays occupied (and
// on its host core) for it, as vhost's worker spins with preemption
// disabled; the thread books it as its polling (HostThread::poll_time).
#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/sim/kernel_time.h"
#include "nvmesim/models/virtio/virtio_blk_model.h"
#include "nvmesim/traces/tracer.h"

using namespace sc_core;

namespace nvmesim::models {

// One window over the thread's polled queues (each drained, notifications
// off): spin until the guest publishes on one of them, other work reaches
// the thread, or the window runs out.
void VirtioBlkModel::busy_poll(Context& ctx, unsigned index) {
  using Step = fw::VirtqueueBusyPoll::Step;
  HostThread& thread = *engine_->host_thread(index);
  engine_->pass_time();  // the window opens once the handler's work is done
  const sc_time start = kernel_now();
  if (auto* t = traces::active())
    t->thread_state(thread.params().trace_id, start.value(), traces::ThreadState::Polling);
  const sc_time deadline = sc_time::from_value(ctx.poll.open(start.value()));
  auto avail_found = [&] {
    for (const uint16_t q : ctx.poll.polled())
      if (!firmware_->avail_empty(q)) return true;  // vhost_vq_avail_empty: a read of avail->idx
    return false;
  };
  Step step;
  for (;;) {
    ctx.avail_published = false;
    step = ctx.poll.step(kernel_now().value(), !ctx.done.empty() || engine_->sqs_marked(index), avail_found);
    if (step != Step::Spin) break;
    engine_->pass_time();  // the reads took their time
    // Anything that came meanwhile is looked at before spinning on.
    if (ctx.avail_published || !ctx.done.empty() || engine_->sqs_marked(index) || kernel_now() >= deadline)
      continue;
    DeviceEngine::KeepRunning keep(*engine_);  // another thread's emulation may run meanwhile
    activations::wait(deadline - kernel_now(), *ctx.poll_wake);
  }
  engine_->pass_time();
  const sc_time window = kernel_now() - start;
  thread.account_busy(window);  // the thread was occupied: its polling
  if (auto* t = traces::active())
    t->thread_state(thread.params().trace_id, kernel_now().value(), traces::ThreadState::Working);
  BusyPollCounters& k = busy_poll_counters_;
  k.poll_time += window;
  ++k.windows;
  switch (step) {
    case Step::Found:
      ++k.windows_found;
      for (const uint16_t q : ctx.poll.polled())
        if (!firmware_->avail_empty(q)) handle_found(ctx, q);
      break;
    case Step::Interrupted:
      ++k.windows_interrupted;  // the passes do the work; the next window starts afresh
      break;
    case Step::Expired:
      ++k.windows_expired;
      // vhost_enable_notify on each, then one more look: entries slipped in
      // are handled (notifications off again, the queue polled on).
      ctx.expiring = ctx.poll.polled();
      for (const uint16_t q : ctx.expiring) {
        if (firmware_->reenable(q))
          handle_found(ctx, q);
        else
          ctx.poll.drop(q);
      }
      break;
    case Step::Spin:
      break;
  }
}

// Requests the poll found on queue q: popped without a kick.
void VirtioBlkModel::handle_found(Context& ctx, uint16_t q) {
  const uint64_t before = firmware_->counters().requests;
  firmware_->handle_polled(q, ctx.popped);
  busy_poll_counters_.requests_found += firmware_->counters().requests - before;
  for (auto& r : ctx.popped) start_request(ctx, std::move(r));
}

// The thread started polling: its queues' notifications go off (only once
// the device is live: QEMU attaches the handlers when the dataplane starts).
void VirtioBlkModel::aio_poll_begin(Context& ctx) {
  if (!(firmware_->status() & fw::virtio::STATUS_DRIVER_OK)) return;
  ctx.aio_poll_started = true;
  for (const uint16_t q : ctx.queues) firmware_->poll_begin(q);
}

// The thread stops polling to sleep: notifications back on, then the last
// look at each avail ring; a queue with entries is served at once.
bool VirtioBlkModel::aio_poll_end(Context& ctx) {
  if (!ctx.aio_poll_started) return false;
  ctx.aio_poll_started = false;
  bool found = false;
  for (const uint16_t q : ctx.queues) {
    if (firmware_->poll_end(q)) {
      engine_->mark_sq(q);  // aio_add_poll_ready_handler: its handler runs in this iteration
      found = true;
    }
  }
  return found;
}

void VirtioBlkModel::avail_published(uint16_t q, const sc_time& delay) {
  if (q >= params_.firmware.num_queues) return;
  Context& c = ctx_[engine_->context_of(q)];
  if (c.aio_poll_started) {
    // run_poll_handlers: the polling thread reads avail->idx and finds the
    // entries without a kick (virtio_queue_host_notifier_aio_poll, then
    // _poll_ready runs the queue's handler); a busy thread looks after its work.
    engine_->mark_sq(q);
    engine_->host_thread(engine_->context_of(q))->kick(delay);
    return;
  }
  if (!c.poll_wake || !c.poll.polled(q)) return;
  c.avail_published = true;
  c.poll_wake->notify(delay);
}

// A kick while the thread spins is other work for it (vhost_has_work).
void VirtioBlkModel::wake_poller(uint16_t q, const sc_time& delay) {
  if (q >= params_.firmware.num_queues) return;
  Context& c = ctx_[engine_->context_of(q)];
  if (c.poll_wake && !c.poll.polled().empty()) c.poll_wake->notify(delay);
}

}  // namespace nvmesim::models
