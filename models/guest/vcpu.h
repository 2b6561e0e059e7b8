// A vCPU: the CPU the guest's drivers and one fio job (models/guest/fio_job.h)
// run on. It gives their code time and its exits: guest work on a quantum
// keeper (syncing where shared memory ordering matters), MMIO accesses (each
// an exit through the hypervisor), the store buffer and barriers of the
// doorbell-buffer path, halting with KVM's halt polling, and interrupts:
// the MSI-X interrupt of its I/O CQ preempts whatever the guest is doing, as
// on real hardware, and runs the driver's completion pass (Linux
// drivers/nvme/host/pci.c nvme_irq) between its injection and its EOI. It
// is the drivers' fw::DriverEnv and fw::VirtioDriverEnv for its queue.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "nvmesim/firmware/guest/driver.h"
#include "nvmesim/firmware/guest/virtqueue_driver.h"
#include "nvmesim/models/guest/fio_job.h"
#include "nvmesim/models/guest/vcpu_params.h"
#include "nvmesim/models/guest/vcpu_stats.h"
#include "nvmesim/models/host/wakeup_distribution.h"
#include "nvmesim/models/hv/hypervisor.h"
#include "nvmesim/models/sim/lookahead.h"
#include "nvmesim/models/sim/quantum_keeper.h"

namespace nvmesim::models {

class Guest;

class Vcpu : public sc_core::sc_module,
             public InterruptTarget,
             public fw::DriverEnv,
             public fw::VirtioDriverEnv {
 public:
  using Params = VcpuParams;
  using Results = VcpuStats;
  using IoSample = FioJob::IoSample;

  tlm_utils::simple_initiator_socket<Vcpu> mmio_socket;

  Vcpu(sc_core::sc_module_name name, const Params& params, Guest& guest);

  void raise_interrupt(uint32_t vector, const sc_core::sc_time& delay) override;

  // ---- fw::DriverEnv: the driver code running on this vCPU
  // (models/guest/vcpu_memory.cpp).
  uint8_t* guest_memory(uint64_t gpa, uint32_t len) override;
  uint32_t mmio_read32(uint32_t offset) override;
  uint64_t mmio_read64(uint32_t offset) override;
  void mmio_write32(uint32_t offset, uint32_t value) override;
  void mmio_write64(uint32_t offset, uint64_t value) override;
  void write_barrier() override;
  void full_barrier() override;
  uint32_t load_shadow(uint64_t gpa) override;
  void store_shadow(uint64_t gpa, uint32_t value) override;
  uint32_t load_eventidx(uint64_t gpa) override;
  void wait_ns(uint64_t ns) override;
  // ---- fw::VirtioDriverEnv: the virtio-blk driver on this vCPU (guest
  // memory and barriers as above; virtio_rmb is a compiler barrier on x86).
  void read_barrier() override {}
  uint32_t mmio_read(uint32_t offset, unsigned size) override;
  void mmio_write(uint32_t offset, unsigned size, uint32_t value) override;
  void sync_shared_memory() { sync_local(); }  // let local time pass before touching shared state
  // The PCI core's MSI-X set-up: fills table entry `vector` (BAR2) and
  // unmasks it, untimed (enumeration's exits are not modelled).
  void program_msix_vector(uint16_t vector, uint64_t address, uint32_t data);

  // ---- What the job running on it asks of the CPU.
  // Its own present: global time plus its local offset (which can pass the
  // quantum by the last increment before it syncs).
  sc_core::sc_time current_time() const { return qk_.current_time(); }
  // Runs `t` of guest code (stretched when host cores are shared); the I/O
  // interrupt preempts it while the job runs.
  void guest_work(const sc_core::sc_time& t);
  void sync_local();  // let the local offset pass (its stores' drain armed)
  // io_getevents' sleep: takes the I/O interrupt once it is due, halting
  // until then, or returns when another vCPU completed one of this job's
  // I/Os (a shared virtqueue's interrupt ran there: complete_remote).
  void wait_for_io();
  void halt_for(const sc_core::sc_time& d);  // the job sleeps (usec_sleep): the vCPU halts
  // A poll of its CQ found a completion, or nothing: then the vCPU waits on
  // the device (no work of its own, for the stall watchdog).
  void polled(bool found) { waits_on_device_ = !found; }
  // KVM's halt-polling window (vcpu->halt_poll_ns) for its next halt.
  const sc_core::sc_time& halt_poll_window() const { return halt_poll_window_; }

  // ---- The job it runs (models/guest/fio_job.h).
  FioJob& job() { return job_; }
  // fio's stonewall / wait_for: the job starts once these vCPUs' jobs have
  // finished (set before the simulation starts).
  void wait_for_jobs(std::vector<const Vcpu*> vcpus) { waits_for_ = std::move(vcpus); }
  const sc_core::sc_event& finished_event() const { return finished_event_; }
  void on_io(std::function<void(const IoSample&)> sink) { job_.on_io(std::move(sink)); }
  uint32_t outstanding() const { return job_.outstanding(); }
  uint16_t virtqueue() const { return job_.virtqueue(); }
  // Another vCPU's virtblk_done completed this job's I/O at `at` (a virtqueue
  // shared by several vCPUs interrupts one of them): blk_mq_complete_request
  // ran there, the job's io_getevents sleeper is woken. True when the wake-up
  // needs an IPI (wake).
  bool complete_remote(const fw::Completion& c, const sc_core::sc_time& at);
  // Wakes the job's sleep (wait_for_io returns) at `at`: another vCPU's
  // handler completed one of its I/Os or freed a tag it waits for. True when
  // the job was asleep (this vCPU halted in wait_for_io) and not yet woken:
  // try_to_wake_up on a sleeping CPU sends it an IPI (send_ipi on the waker).
  bool wake(const sc_core::sc_time& at);
  // The interrupt handler on this vCPU woke a job sleeping on another:
  // the reschedule IPI (native_smp_send_reschedule), an x2APIC ICR write,
  // costs this vCPU an exit unless IPI virtualization is on (hv.ipiv).
  void send_ipi();

  // ---- Stall reports: its queue as the driver sees it, around the
  // device's descriptions of its SQ and CQ.
  uint16_t driver_sq_tail() const;
  std::string describe_queue(const std::string& device_sq, const std::string& device_cq) const;

  // ---- Results: the "vcpuN" statistics group.
  const Results& results() const { return results_; }
  stats::Group& stats() { return results_; }
  // The vCPU has something of its own to do as time passes (guest work, an
  // exit, an interrupt on its way, a store draining), as opposed to halting
  // for an interrupt nothing has sent or polling a CQ that stays empty.
  bool work_pending() const {
    return (!results_.finished || serving_queue_) && !waiting_for_jobs_ &&
           (!waits_on_device_ || store_head_ < store_buffer_.size());
  }
  const Params& params() const { return params_; }
  sc_core::sc_process_handle thread_handle() const { return thread_; }

 private:
  void run();  // SC_THREAD: bring-up (vCPU 0), the jobs it waits for, its job
  sc_core::sc_time now() const { return qk_.current_time(); }
  // A sync can be skipped when nothing else can run before the vCPU's
  // present (models/sim/lookahead.h) and no store of its own is still
  // buffered (its drain must reach the kernel, or a full barrier commit it).
  bool must_sync(const sc_core::sc_time& offset) const {
    return store_head_ < store_buffer_.size() || activity_due_within(offset);
  }
  void set_runnable(bool runnable);
  // After its job: the vCPU that takes a shared virtqueue's interrupt goes
  // on serving it while other jobs submit there.
  bool serves_shared_queue() const;
  void serve_queue();
  // ---- Interrupts and halts.
  bool io_interrupt_due() const { return irq_pending_ && irq_time_ <= now(); }
  void take_io_interrupt();  // injection, the driver's completion pass, EOI
  void take_admin_interrupts();
  void take_interrupt_lock();  // hv.bql_interrupts
  // Halts until the I/O interrupt is due (true) or another vCPU completed
  // one of this job's I/Os (false).
  bool wait_for_interrupt();
  void adjust_halt_poll(const sc_core::sc_time& blocked, const sc_core::sc_time& max);
  // ---- MMIO and the store buffer (models/guest/vcpu_memory.cpp).
  void mmio(tlm::tlm_command cmd, uint32_t offset, void* data, unsigned len);
  void commit_stores();
  void arm_store_drain();
  void store_buffer_drain();  // SC_METHOD: commit_stores at the stores' time

  Params params_;
  Guest& guest_;
  QuantumKeeper qk_;
  tlm::tlm_generic_payload mmio_payload_;  // reused: no allocation per access
  sc_core::sc_process_handle thread_;
  Results results_;
  FioJob job_;  // after params_ and results_: it keeps references to them
  unsigned cpu_id_ = 0;  // its thread among the shared host cores

  // Interrupts: the I/O CQ's (irq_*: due at irq_time_) and the admin CQ's.
  bool in_interrupt_ = false;  // the driver's interrupt handler runs: no nesting
  bool job_running_ = false;   // interrupts preempt guest work only in the job
  bool irq_pending_ = false;
  sc_core::sc_time irq_time_;
  sc_core::sc_event irq_event_;
  unsigned admin_irqs_pending_ = 0;
  bool woken_ = false;  // complete_remote: a wake-up at wake_time_
  bool asleep_ = false;  // halted in wait_for_interrupt with nothing due: a wake-up needs an IPI
  sc_core::sc_time wake_time_;
  sc_core::sc_time halt_poll_window_;  // KVM's vcpu->halt_poll_ns
  // hv.wakeup=measured: this vCPU's own draws of its wake-up after it
  // scheduled out (from the job's seed and the vCPU's index).
  UniformStream wakeup_stream_;
  bool waits_on_device_ = false;  // halted with no interrupt pending, or its last poll found nothing
  bool serving_queue_ = false;    // its job has finished; it takes its queue's interrupts (serve_queue)

  std::vector<const Vcpu*> waits_for_;
  bool waiting_for_jobs_ = false;  // its job waits for others (not work of its own)
  sc_core::sc_event finished_event_;

  // Store buffer for shadow-doorbell stores: in order, drained at its time
  // or by a full barrier.
  struct PendingStore { uint64_t gpa; uint32_t value; sc_core::sc_time visible_at; };
  std::vector<PendingStore> store_buffer_;
  size_t store_head_ = 0;
  // A store was buffered and the drain's event not yet notified: deferred
  // to the vCPU's next sync (a full barrier may commit it itself first).
  bool store_drain_owed_ = false;
  sc_core::sc_event store_event_;
};

}  // namespace nvmesim::models
