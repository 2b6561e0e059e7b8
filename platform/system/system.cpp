#include "nvmesim/platform/system/system.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <systemc>

#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/models/sim/activations.h"
#include "nvmesim/models/guest/guest.h"
#include "nvmesim/models/mem/guest_memory.h"
#include "nvmesim/models/host/big_lock.h"
#include "nvmesim/models/host/host_cpus.h"
#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/hv/hypervisor.h"
#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/models/pcie/pcie_link.h"
#include "nvmesim/models/pcie/pcie_root_complex.h"
#include "nvmesim/models/guest/vcpu.h"
#include "nvmesim/models/virtio/virtio_blk_model.h"
#include "nvmesim/platform/config/system_params.h"
#include "nvmesim/platform/system/system_device.h"
#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/params.h"

using namespace sc_core;
using namespace nvmesim::models;

namespace nvmesim::platform {


// Progress watchdog: when I/Os are outstanding, no completion arrived for
// sim.stall_timeout and nothing is under way that could bring one (no
// component has work of its own that time will advance), the run stops and
// reports the stall. A run that is merely slow (a long backend latency, a
// costly submission, a narrow link) is not one.
struct System::Watchdog : sc_module {
  System& sys;
  sc_time period;
  uint64_t last_ios = UINT64_MAX;
  sc_event tick;
  SC_HAS_PROCESS(Watchdog);
  Watchdog(sc_module_name n, System& s, sc_time p) : sc_module(n), sys(s), period(p) {
    SC_METHOD(check);
    sensitive << tick;
  }
  void check() {
    activations::begin(activations::Watchdog);
    if (first) {  // initialisation run: arm the first period
      first = false;
      activations::notify(tick, period);
      return;
    }
    sys.watchdog();
  }
  bool first = true;
};

System::System(const Config& c, std::vector<const Config*> job_configs,
               const std::vector<std::vector<unsigned>>& vcpu_waits_for)
    : config_(c), job_configs_(std::move(job_configs)) {
  // sc_stop() ends every run; SystemC's note about it is noise in results.
  sc_report_handler::set_actions(SC_INFO, SC_DO_NOTHING);
  // One load per component (platform/config/system_params.cpp), then the
  // checks that need them all, before anything is built.
  const SystemParams p = load_system_params(c, job_configs_);
  check_system_params(p, c);
  const uint32_t numjobs = p.numjobs();
  const uint64_t seed = uint64_t(c.integer("seed"));

  link_ = std::make_unique<PcieLink>(p.pcie);
  memory_ = std::make_unique<GuestMemory>("memory", p.mem.size, p.mem.latency);
  root_complex_ = std::make_unique<PcieRootComplex>("root_complex", *link_);

  // Host threads: the main loop, and the iothreads the I/O queues are
  // spread over round robin.
  host_cpus_ = std::make_unique<HostCpus>(p.hv.host_cores, p.hv.host_wakeup_wait);
  HostThread::Params tp = p.hv.threads;
  tp.jitter_seed = seed + 1;
  tp.trace_id = 0;
  tp.poll_max = SC_ZERO_TIME;  // QEMU's iothreads busy-poll adaptively; the main loop does not
  // With several vCPUs their times often coincide (round guest costs) and
  // SystemC orders same-time events by its queue's history: keep every wait.
  tp.end_ahead = numjobs == 1;
  if (p.hv.bql) {
    bql_ = std::make_unique<BigLock>(p.hv.bql_handoff);
    bql_->set_one_waiter(numjobs == 1);
  }
  std::vector<uint8_t> queue_thread(size_t(p.nvme.firmware.max_io_queues) + 1, 0);
  // hv.passthrough: a real SSD has a hardware controller. It runs on the
  // controller model's hardware engine (models/nvme/nvme_hw_engine.h: its
  // own process, nvme.clock and the stage cycles), so no host thread is
  // built: no host core, dispatch or lock (hv.bql: only trapped accesses
  // take it, in the hypervisor).
  if (!p.hv.exits.passthrough) {
    tp.bql = bql_.get();
    host_threads_.push_back(std::make_unique<HostThread>("mainloop", tp, host_cpus_.get()));
    tp = p.hv.threads;
    tp.end_ahead = numjobs == 1;
    tp.bql = nullptr;  // iothreads run outside the global lock
    if (p.hv.device_thread == DeviceThread::Iothread) {
      const unsigned n = p.hv.iothreads;
      for (unsigned i = 0; i < n; ++i) {
        tp.trace_id = i + 1;
        tp.jitter_seed = (seed + 1) * 1000003u + i + 1;  // its own delays
        host_threads_.push_back(std::make_unique<HostThread>(("iothread" + std::to_string(i)).c_str(),
                                                             tp, host_cpus_.get()));
      }
      for (size_t q = 1; q < queue_thread.size(); ++q) queue_thread[q] = uint8_t(1 + (q - 1) % n);
    }
  }

  // The device: the NVMe controller, or the virtio-blk function.
  const bool virtio = p.device.device == DeviceKind::VirtioBlk;
  NvmeControllerModel::Params cp = p.nvme;
  cp.queue_thread = queue_thread;
  std::vector<HostThread*> threads;
  for (auto& t : host_threads_) threads.push_back(t.get());
  VirtioBlkModel* virtio_model = nullptr;  // for the busy poll's hook below
  NvmeControllerModel* nvme_model = nullptr;  // for nvme.sq_poll's hook below
  if (virtio) {
    VirtioBlkModel::Params vp = p.virtio;
    vp.queue_thread.clear();  // virtqueue q belongs to I/O queue pair q + 1's thread
    for (size_t q = 0; q < vp.firmware.num_queues; ++q)
      vp.queue_thread.push_back(q + 1 < queue_thread.size() ? queue_thread[q + 1] : 0);
    auto model = std::make_unique<VirtioBlkModel>("virtio_blk", vp, threads, *link_);
    virtio_model = model.get();
    device_ = system_device(std::move(model));
  } else {
    // No threads (hv.passthrough): the controller's hardware engine.
    auto model = std::make_unique<NvmeControllerModel>("nvme", cp, threads, *link_);
    nvme_model = model.get();
    device_ = system_device(std::move(model));
  }

  // Hypervisor.
  Hypervisor::Params hp = p.hv.exits;
  hp.wakeup = p.hv.threads.wakeup;  // one hv.wakeup for host threads and vCPUs
  hp.bql = bql_.get();
  hypervisor_ = std::make_unique<Hypervisor>("hv", hp, numjobs, host_cpus_.get());
  if (virtio) hypervisor_->set_doorbell_offset(fw::VirtioBlkDevice::NOTIFY_OFFSET);
  if (!virtio) set_passthrough_traps(p);
  if (cp.notifier.mode == NotifyMode::Ioeventfd) {
    hypervisor_->set_ioeventfd(
        [this](uint32_t offset, const sc_time& delay) { return device_->ioeventfd_notify(offset, delay); });
  }

  // Guest driver.
  const fw::DriverConfig& dc = p.guest.driver;
  guest_ = std::make_unique<Guest>("guest", dc, *memory_, *hypervisor_);
  guest_->set_doorbell_stride(cp.firmware.dstrd);
  if (!virtio && cp.msix_table == MsixPlacement::Bar0)
    guest_->set_msix_table_address(kBar0Base + NvmeControllerModel::kBar0MsixTableOffset);
  if (virtio) guest_->use_virtio_blk(p.virtio_driver);
  // Busy polling (virtio.busy_poll), or an iothread's AioContext polling
  // (hv.poll_max), reads the avail rings between kicks.
  const bool aio_poll = p.hv.device_thread == DeviceThread::Iothread && p.hv.threads.poll_max != SC_ZERO_TIME;
  if (!virtio && aio_poll && cp.sq_poll && nvme_model)
    guest_->watch_avail([nvme_model](uint16_t q, const sc_time& delay) { nvme_model->sq_tail_published(q, delay); });
  if (virtio && (p.virtio.busy_poll != SC_ZERO_TIME || aio_poll))
    guest_->watch_avail(
        [virtio_model](uint16_t q, const sc_time& delay) { virtio_model->avail_published(q, delay); });

  for (uint32_t j = 0; j < numjobs; ++j) {
    Vcpu::Params vp;
    static_cast<WorkloadParams&>(vp) = p.jobs[j];
    static_cast<GuestCpuCosts&>(vp) = p.guest.cpu;
    vp.index = j;
    vp.qid = uint16_t(j + 1);
    vp.poll_completions = !dc.interrupts;
    // fio: an unset (or smaller) maximum is the minimum (init.c fixup_options).
    vp.batch_complete_max = std::max(vp.batch_complete_min, vp.batch_complete_max);
    vp.job.job_index = j;
    vp.cpus = host_cpus_.get();
    vp.admin_vector = 0x40u;
    vp.io_vector = 0x40u + vp.qid;
    vcpus_.push_back(std::make_unique<Vcpu>(("vcpu" + std::to_string(j)).c_str(), vp, *guest_));
    guest_->add_vcpu(*vcpus_.back());
    hypervisor_->attach_vcpu(j, *vcpus_.back());
  }

  for (size_t v = 0; v < vcpu_waits_for.size() && v < vcpus_.size(); ++v) {
    std::vector<const Vcpu*> waits;
    for (unsigned w : vcpu_waits_for[v])
      if (w < vcpus_.size()) waits.push_back(vcpus_[w].get());
    vcpus_[v]->wait_for_jobs(std::move(waits));
  }

  // Wiring: vCPU MMIO -> hypervisor -> root complex -> controller BARs;
  // controller DMA -> root complex -> memory; MSI -> hypervisor -> vCPU.
  for (auto& v : vcpus_) v->mmio_socket.bind(hypervisor_->guest_mmio);
  hypervisor_->rc_initiator.bind(root_complex_->cpu_target);
  PcieEndpoint& endpoint = device_->endpoint();
  root_complex_->bar0_initiator.bind(device_->bar0());
  root_complex_->msix_bar_initiator.bind(endpoint.msix_target);
  root_complex_->config_initiator.bind(endpoint.config_target);
  root_complex_->mem_initiator.bind(memory_->socket);
  endpoint.dma_initiator.bind(root_complex_->dma_target);
  root_complex_->bind_msi_sink(*hypervisor_);

  tlm::tlm_global_quantum::instance().set(p.sim.quantum);
  link_stats();
  guest_->on_measure_start([this] { start_measurement(); });
  watchdog_ = std::make_unique<Watchdog>("watchdog", *this, p.sim.stall_timeout);
}

System::~System() = default;

NvmeControllerModel& System::controller() { return *device_->nvme(); }
VirtioBlkModel* System::virtio() { return device_->virtio_blk(); }

size_t System::host_thread_count() const { return host_threads_.size() + device_->own_tracks(); }

// hv.passthrough: what the host cannot map traps (VFIO's MSI-X pages,
// firmware/pcie/msix_page.h); everything else reaches the device without an exit.
void System::set_passthrough_traps(const SystemParams& p) {
  const NvmeControllerModel::Params& cp = p.nvme;
  const fw::vfio::MsixLayout layout = cp.msix_layout();
  if (cp.msix_table == MsixPlacement::Bar0) hypervisor_->set_doorbell_end(NvmeControllerModel::kBar0MsixTableOffset);
  const Hypervisor::Params& hp = hypervisor_->params();
  if (!hp.passthrough) return;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const fw::vfio::BarRange& r : fw::vfio::trapped_ranges(layout, hp.page_bytes, hp.msix_bar_mmap)) {
    const uint64_t base = r.bar == 0 ? kBar0Base : kBar2Base;
    ranges.emplace_back(base + r.offset, base + r.offset + r.bytes);
  }
  hypervisor_->set_trapped_ranges(std::move(ranges));
}

// The statistics tree, in the order of an I/O's path (ARCHITECTURE.md).
void System::link_stats() {
  for (unsigned j = 0; j < vcpus_.size(); ++j) {
    stats_.add_group(vcpus_[j]->basename(), vcpus_[j]->stats());
    vcpus_[j]->stats().merge(hypervisor_->exit_counters(j));
  }
  if (guest_->virtio())
    stats_.add_group("virtio_driver", guest_->virtio()->stats());
  else
    stats_.add_group("driver", guest_->driver().stats());
  stats_.add_group("hv", hypervisor_->stats());
  if (bql_) stats_.add_group("bql", *bql_);
  stats_.add_group("root_complex", root_complex_->counters());
  stats_.add_group("memory", memory_->counters());
  device_->link_stats(stats_);
  for (auto& t : host_threads_) stats_.add_group(t->basename(), t->stats());
  stats_.add_group("host", *host_cpus_);
}

// Bring-up is reported apart: its statistics are kept (its exits are the
// JSON's bringup.exits), then every statistic starts from zero for the
// measured phase.
void System::start_measurement() {
  bringup_stats_ = stats_.values();
  stats_.reset();
  activations::reset();
}

namespace {

std::string us_text(const sc_time& t) {
  char b[48];
  std::snprintf(b, sizeof b, "%.3f us", double(t.value()) / 1e6);
  return b;
}

// Where a stalled run stands, queue by queue: each vCPU's queue as its
// driver sees it, around the device's view of the SQ and CQ.
std::string describe_stall(System& sys, const std::string& headline) {
  return headline + sys.device().describe_stall(sys.vcpus());
}

// The figures every stall headline carries.
void stall_figures(System& sys, uint64_t& ios, uint64_t& outstanding, sc_time& last) {
  ios = outstanding = 0;
  last = SC_ZERO_TIME;
  for (auto& v : sys.vcpus()) {
    ios += v->results().ios;
    outstanding += v->outstanding();
    if (v->results().end > last) last = v->results().end;
  }
}

}  // namespace

bool System::work_under_way() const {
  // The device's own work, or a spinning thread's next pass (eventfd_spin).
  if (device_->work_under_way(vcpus_)) return true;
  for (const auto& t : host_threads_)
    if (t->work_pending()) return true;
  for (const auto& v : vcpus_)
    if (v->work_pending()) return true;
  return false;
}

void System::watchdog() {
  uint64_t ios = 0, outstanding = 0;
  sc_time last;
  stall_figures(*this, ios, outstanding, last);
  if (guest_->ready() && outstanding && ios == watchdog_->last_ios && !work_under_way()) {
    std::ostringstream h;
    h << "stall detected at " << us_text(sc_time_stamp()) << " by the watchdog: no I/O completed for "
      << config_.text("sim.stall_timeout") << " (sim.stall_timeout, last completion at "
      << us_text(last) << ") and nothing under way could complete one, " << outstanding
      << " I/Os outstanding";
    stall_ = true;
    stall_report_ = describe_stall(*this, h.str());
    sc_stop();
    return;
  }
  watchdog_->last_ios = ios;
  if (progress_) progress_(ios);
  activations::notify(watchdog_->tick, next_watchdog_tick(outstanding));
}

// Every sim.stall_timeout, except while no I/O is outstanding (a
// thinktime, a rate's gap): no stall can be found then, and until the next
// event nothing runs, so each tick before it would find the same state and
// do nothing. The watchdog sleeps to the last tick of its period's grid at
// or before that event: an idle simulated hour costs one activation, not
// 3600 s / sim.stall_timeout, and every later tick (and a stall's detection
// time) falls where it did.
sc_time System::next_watchdog_tick(uint64_t outstanding) const {
  const sc_time period = watchdog_->period;
  if (outstanding || !sc_pending_activity_at_future_time()) return period;
  const sc_time idle = sc_time_to_pending_activity();
  const uint64_t periods = idle.value() / period.value();
  return periods > 1 ? sc_time::from_value(period.value() * periods) : period;
}

}  // namespace nvmesim::platform

namespace nvmesim::platform {

RunResults System::run() {
  sc_start();
  // SIGINT/SIGTERM (platform/cli/interrupt.h) stopped it: measured up to here.
  const bool interrupted = interrupt::SimulationStopper::stopped();
  // sc_start() also returns when no event is left: a vCPU waiting for an
  // interrupt that nothing will send is a stall too.
  if (!stall_ && !interrupted && guest_->vcpus_running() > 0) {
    uint64_t ios = 0, outstanding = 0;
    sc_time last;
    stall_figures(*this, ios, outstanding, last);
    std::ostringstream h;
    h << "stall at " << us_text(sc_time_stamp()) << ": the simulation ran out of events with "
      << guest_->vcpus_running() << " vCPU(s) not finished (last completion at " << us_text(last)
      << "), " << outstanding << " I/Os outstanding";
    stall_ = true;
    stall_report_ = describe_stall(*this, h.str());
  }
  RunResults r;
  r.config = config_.effective();
  r.backend = config_.text(backend_value_param(config_, "backend"));
  const fw::VirtioBlkDriver* vd = guest_->virtio();
  r.bringup_ok = guest_->bringup().ok;
  r.bringup_error = guest_->bringup().error ? guest_->bringup().error : "";
  r.bringup_ns = double(guest_->bringup_time().value()) / 1000.0;
  r.dbbuf_active = vd ? vd->event_idx() : guest_->driver().dbbuf_active();
  r.dbbuf_opcode = guest_->bringup().dbbuf_opcode;
  r.dbbuf_status = guest_->bringup().dbbuf_status;
  r.stalled = stall_;
  r.stall_report = stall_report_;
  for (const auto& v : vcpus_) r.unfinished_ios += v->outstanding();
  device_->report_outcome(r);
  r.interrupted = interrupted;

  const sc_time start = guest_->measure_start();
  // A stalled run's measured interval, for the run and for each job, lasts
  // until the stall was detected (or a vCPU's own time, which runs ahead by
  // its local offset): the time spent stalled counts in IOPS and utilisation.
  sc_time stall_end = SC_ZERO_TIME;
  const bool cut_short = stall_ || interrupted;  // an interrupted run the same way
  if (cut_short) {
    stall_end = std::max(sc_time_stamp(), start);
    for (const auto& v : vcpus_) stall_end = std::max(stall_end, v->current_time());
  }
  auto interval_ns = [&](const sc_time& job_end) {
    return double(((cut_short ? stall_end : std::max(job_end, start)) - start).value()) / 1000.0;
  };
  // The counts are the statistics tree's (reset when measurement started),
  // one snapshot of it, from which every figure is derived
  // (platform/report/derived_figures.h). What the tree does not hold is
  // gathered here: the jobs' times and the latency and depth distributions.
  r.stats = stats_.values();
  r.bringup_stats = bringup_stats_;
  sc_time end = start;
  bool failed = false;
  for (const auto& v : vcpus_) {
    const auto& vr = v->results();
    // A job its runtime ended is measured over its runtime, as fio measures
    // a job's elapsed time to its end (backend.c, thread_main: runtime is
    // the time the job ran, not the time to its last completion): a rate-
    // or think-limited job idle at the end still ran until then.
    sc_time job_end = vr.end;
    const sc_time runtime = v->params().runtime;
    if (runtime != SC_ZERO_TIME && vr.done >= vr.start + runtime) job_end = std::max(job_end, vr.start + runtime);
    if (job_end > end) end = job_end;
    if (!failed && vr.errors) r.first_error_status = vr.first_error_status;
    failed = failed || vr.errors;
    VcpuFigures f;
    DirectionLatency* dirs[2] = {&f.read, &f.write};
    for (unsigned d = 0; d < 2; ++d) {
      dirs[d]->slat = vr.slat[d];
      dirs[d]->clat = vr.clat[d];
      dirs[d]->lat = vr.lat[d];
      dirs[d]->driver_lat = vr.driver_lat[d];
      r.slat.merge(vr.slat[d].hist);
      r.clat.merge(vr.clat[d].hist);
      r.lat.merge(vr.lat[d].hist);
      r.driver_lat.merge(vr.driver_lat[d].hist);
    }
    f.depths = vr.depths;
    r.depths.merge(vr.depths);
    f.sim_time_ns = interval_ns(job_end);
    // A job that waited (stonewall, wait_for) is measured from its release.
    if (vr.released > start) {
      f.start_ns = double((vr.released - start).value()) / 1000.0;
      f.sim_time_ns = std::max(0.0, f.sim_time_ns - f.start_ns);
    }
    f.done_ns = double((std::max(vr.done, start) - start).value()) / 1000.0;
    r.read.merge(f.read);
    r.write.merge(f.write);
    r.vcpus.push_back(f);
  }
  r.sim_time_ns = interval_ns(end);
  // Busy time counts the exits after a vCPU's last completion (its CQ
  // doorbell and EOI exits); over the measured interval alone a 1 ms EOI
  // after the last I/O made a vCPU 101.4% busy. So utilisation runs to where
  // the vCPUs' work ended.
  r.utilization_span_ns = r.sim_time_ns;
  if (!cut_short)
    for (const auto& v : vcpus_)
      r.utilization_span_ns = std::max(r.utilization_span_ns,
                                       double((std::max(v->current_time(), start) - start).value()) / 1000.0);
  for (const auto& h : host_threads_) r.host_threads.push_back(h->basename());
  r.host_cores = host_cpus_->cores();
  r.pcie_link = link_->describe();
  return r;
}

}  // namespace nvmesim::platform
