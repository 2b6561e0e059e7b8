#include "nvmesim/platform/config/system_params.h"
#include "nvmesim/platform/config/sim_time_range.h"

#include <algorithm>
#include <string>

#include "nvmesim/firmware/nvme/eventidx.h"
#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/visitors.h"
#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform {

using models::NotifyMode;

// Jobs on the busiest virtqueue: job j submits on queue j % queues (Linux
// 6.1 blk_mq_map_queues), so ceil(numjobs / queues) of them share one.
static uint32_t jobs_per_virtqueue(const SystemParams& p) {
  const uint32_t queues = std::max<uint32_t>(p.virtio.firmware.num_queues, 1);
  return (p.numjobs() + queues - 1) / queues;
}

// NVMe commands an I/O of `bytes` becomes at MDTS `mdts` (2^mdts 4 KiB pages, 0 = no limit).
static uint64_t commands_per_io(uint64_t bytes, unsigned mdts) {
  if (!mdts) return 1;
  const uint64_t max = 4096ull << mdts;
  return (bytes + max - 1) / max;
}

SystemParams load_system_params(const Config& c, const std::vector<const Config*>& job_configs) {
  SystemParams p;
  // Each job's engine details are their own visit table (models/guest/vcpu_params.h IoEngineParams).
  auto workload = [](const Config& jc) {
    models::WorkloadParams w = load_params<models::WorkloadParams>(jc);
    w.engine = load_params<models::IoEngineParams>(jc);
    return w;
  };
  if (job_configs.empty()) p.jobs.assign(size_t(c.integer("numjobs")), workload(c));
  for (const Config* job : job_configs) p.jobs.push_back(workload(*job));
  for (const models::WorkloadParams& w : p.jobs) {
    p.iodepth = std::max(p.iodepth, w.iodepth);
    p.bs = std::max(p.bs, uint32_t(w.max_bs()));
  }
  p.sim = load_params<SimParams>(c);
  p.mem = load_params<models::GuestMemoryParams>(c);
  p.guest = load_params<models::GuestParams>(c);
  p.nvme = load_params<models::NvmeControllerModel::Params>(c);
  p.nvme.engine = load_params<models::NvmeHwEngineParams>(c);  // hv.passthrough's hardware engine
  p.pcie = load_params<models::PcieLinkParams>(c);
  p.hv = load_params<HvParams>(c);
  p.notifier = load_params<models::NotifierParams>(c);

  // The controller: its auto choices, and what the hypervisor decides for it.
  fw::ControllerConfig& fc = p.nvme.firmware;
  // A passed-through SSD is hardware: it offers no Doorbell Buffer Config
  // (Identify OACS bit 8 clear), so the driver never sets up shadows.
  if (p.hv.exits.passthrough) fc.dbbuf = fw::DbbufMode::Off;
  p.nvme.resolve_auto();
  fc.guest_memory_bytes = p.mem.size;
  // In the vCPU's exit there is no thread to defer to (check_system_params
  // refuses the modes that need one).
  // Passed through, a doorbell write wakes the device's own engine.
  p.nvme.notifier = p.notifier;
  p.nvme.notifier.mode = p.hv.exits.passthrough                   ? NotifyMode::Deferred
                         : p.hv.device_thread == DeviceThread::Vcpu ? NotifyMode::Sync
                                                                    : p.notifier.mode;
  p.nvme.msi = load_params<models::MsiParams>(c);  // QEMU's engine's MSIs (virtio-blk's are not costed)

  // The driver: one I/O queue pair per vCPU, tags and buffers for the
  // largest job, the controller's limits.
  fw::DriverConfig& dc = p.guest.driver;
  dc.io_queues = uint16_t(p.numjobs());
  dc.io_queue_entries = std::min<uint32_t>(dc.io_queue_entries, uint32_t(fc.mqes) + 1);
  // An I/O above MDTS x 4 KiB is split into commands of at most that
  // (models/guest/fio_job.cpp FioJob::issue), each with its own tag and
  // data buffer: tags for iodepth x parts, buffers of one part.
  const uint64_t mdts_bytes = fc.mdts ? (4096ull << fc.mdts) : ~0ull;
  dc.max_outstanding_per_queue = 0;
  for (const models::WorkloadParams& w : p.jobs)
    dc.max_outstanding_per_queue =
        std::max<uint32_t>(dc.max_outstanding_per_queue, w.iodepth * uint32_t(commands_per_io(w.max_bs(), fc.mdts)));
  dc.max_transfer_bytes = uint32_t(std::min<uint64_t>(p.bs, mdts_bytes));
  dc.use_dbbuf = fc.dbbuf != fw::DbbufMode::Off;
  dc.irq_coalescing_time_100us = uint8_t(p.guest.irq_coalescing_time_ns / 100000.0);
  dc.memory_base = 1u << 20;  // the first MiB stays the firmware's / kernel's
  dc.memory_bytes = p.mem.size - dc.memory_base;

  // device=virtio-blk: its own backend (virtio.backend*, virtio.capacity;
  // the old spellings nvme.* that apply: device_backend.h), the same
  // notification as the controller would have (hv.notify: each device's
  // engine its copy), its own request costs (virtio.req_cost,
  // virtio.done_cost); a virtqueue per job unless virtio.queues says.
  p.device = load_params<DeviceParams>(c);
  p.virtio = load_params<models::VirtioBlkModel::Params>(c);
  if (p.device.device == DeviceKind::VirtioBlk) {
    Config aliased = c;  // virtio.<field> holding the old spelling's value
    bool any = false;
    for (const char* f : kBackendFields) {
      const std::string from = backend_value_param(c, f), to = std::string("virtio.") + f;
      if (from != to) aliased.set(to, c.text(from)), any = true;
    }
    if (any) p.virtio.backend = load_params<models::VirtioBlkModel::Params>(aliased).backend;
  }
  fw::VirtioBlkDeviceConfig& vc = p.virtio.firmware;
  vc.num_queues = uint16_t(p.virtio.queues ? p.virtio.queues : p.numjobs());
  vc.capacity_sectors = p.virtio.backend.capacity / fw::virtio::BLK_SECTOR_BYTES;
  vc.seg_max = std::min<uint32_t>(vc.queue_size_max - 2u, 126u);
  p.virtio.notifier = p.nvme.notifier;
  vc.vhost_notify = p.virtio.busy_poll != sc_core::SC_ZERO_TIME;
  fw::VirtioBlkDriverConfig& vd = p.virtio_driver;
  vd.queues = uint16_t(p.numjobs());
  vd.queue_size = vc.queue_size_max;
  vd.event_idx = true;      // Linux accepts VIRTIO_RING_F_EVENT_IDX whenever it is offered,
  vd.indirect_desc = true;  // and VIRTIO_RING_F_INDIRECT_DESC (virtio_blk keeps both)
  // blk_mq_map_queues: job (vCPU) j submits on queue j % queues; a queue
  // holds the I/Os of every job mapped to it.
  vd.max_outstanding = p.iodepth * jobs_per_virtqueue(p);
  vd.max_transfer_bytes = p.bs;
  vd.memory_base = dc.memory_base;
  vd.memory_bytes = dc.memory_bytes;
  vd.ring_fault = p.guest.virtio_fault;
  vd.ring_fault_after = p.guest.virtio_fault_after;
  return p;
}

static void check_hv_params(const SystemParams& p, const Config& c) {
  if (p.hv.device_thread == DeviceThread::Vcpu &&
      (p.notifier.mode == NotifyMode::Ioeventfd || p.notifier.mode == NotifyMode::Timer))
    throw ConfigError("--hv.notify: " + std::string(models::to_string(p.notifier.mode)) +
                      " needs a host thread (hv.device_thread mainloop or iothread, not vcpu)");
  if (p.notifier.eventfd_fault == models::EventfdFault::Spin && c.time_ns("hv.dispatch_cost") <= 0)
    throw ConfigError("--hv.fault: eventfd_spin needs hv.dispatch_cost > 0 (each spin of the loop costs a dispatch)");
  if (p.hv.threads.dispatch_stall_share > 0 && c.time_ns("hv.dispatch_stall_max") <= 0)
    throw ConfigError("--hv.dispatch_stall_share: " + c.text("hv.dispatch_stall_share") +
                      " needs hv.dispatch_stall_max > 0 (how long a stall can last)");
  const double t100 = p.guest.irq_coalescing_time_ns / 100000.0;
  if (t100 != double(uint64_t(t100)) || t100 > 255)
    throw ConfigError("--guest.irq_coalescing_time: " + c.text("guest.irq_coalescing_time") +
                      " is not a multiple of 100us in 0..25.5ms");
}

// nvme.msix_table=bar0: the doorbells end before the table, and the table
// and the PBA fit their 4 KiB pages.
static void check_msix_layout(const SystemParams& p, const Config& c) {
  if (p.nvme.msix_table != models::MsixPlacement::Bar0) return;
  const fw::vfio::MsixLayout l = p.nvme.msix_layout();
  const uint64_t doorbell_end = l.doorbells.offset + l.doorbells.bytes;
  const uint32_t stride = 8u << p.nvme.firmware.dstrd;
  const uint64_t max_by_doorbells = (models::NvmeControllerModel::kBar0MsixTableOffset - nvme::reg::DOORBELL_BASE) / stride - 1;
  const uint64_t max_by_table = 0x1000 / models::PcieEndpoint::kMsixEntryBytes - 1;
  if (doorbell_end > models::NvmeControllerModel::kBar0MsixTableOffset || l.table.bytes > 0x1000)
    throw ConfigError("--nvme.max_io_queues: " + c.text("nvme.max_io_queues") +
                      " queues' doorbells and MSI-X vectors do not fit BAR0 before and in the table at 0x2000 "
                      "with nvme.msix_table=bar0 (allowed 1.." + std::to_string(std::min(max_by_doorbells, max_by_table)) +
                      " at nvme.dstrd " + std::to_string(p.nvme.firmware.dstrd) + ")");
}

static void check_virtio_params(const SystemParams& p, const Config& c) {
  const uint32_t size = p.virtio.firmware.queue_size_max;
  if (!fw::virtio::valid_queue_size(size))
    throw ConfigError("--virtio.queue_size: " + c.text("virtio.queue_size") +
                      " is not a power of 2 (allowed 2, 4, ..., 32768)");
  // Without indirect descriptors a request takes three: header, data,
  // status; with them one (its table).
  const bool indirect = p.virtio.firmware.indirect_desc;
  // One job's depth must fit the queue. Jobs sharing a queue (virtio.queues
  // < numjobs) whose depths add up to more wait for free tags, as blk-mq's
  // blk_mq_get_tag sleeps (FioJob::wait_for_tag).
  const uint32_t fit = indirect ? size : size / 3;
  if (p.iodepth > fit)
    throw ConfigError("--iodepth: " + std::to_string(p.iodepth) + " does not fit a virtqueue of " +
                      std::to_string(size) + " descriptors, " + (indirect ? "1" : "3") + " per request" +
                      " (allowed 1.." + std::to_string(fit) + "; raise virtio.queue_size" +
                      (indirect ? "" : " or set virtio.indirect_desc=on") + ")");
  if (!indirect && (p.guest.virtio_fault == fw::VirtioRingFault::IndirectBadLength ||
                    p.guest.virtio_fault == fw::VirtioRingFault::IndirectNested))
    throw ConfigError("--guest.virtio_fault: " + c.text("guest.virtio_fault") +
                      " needs virtio.indirect_desc=on (allowed with it off: none, desc_loop, head_out_of_range, "
                      "next_out_of_range, buffer_outside_memory, zero_length)");
  if (!p.guest.driver.interrupts)
    throw ConfigError("--guest.completion: poll is not modelled for device virtio-blk (allowed irq)");
  // vhost spins in its own worker thread, woken by a kick.
  if (p.virtio.busy_poll != sc_core::SC_ZERO_TIME &&
      (p.virtio.notifier.mode == models::NotifyMode::Sync || p.virtio.notifier.mode == models::NotifyMode::Timer))
    throw ConfigError("--virtio.busy_poll: " + c.text("virtio.busy_poll") +
                      " needs a host thread woken by the kick (hv.device_thread mainloop or iothread, "
                      "hv.notify deferred or ioeventfd)");
  const uint64_t need = p.virtio_driver.memory_base + fw::VirtioBlkDriver::memory_needed(p.virtio_driver);
  if (need > p.mem.size)
    throw ConfigError("--mem.size: " + c.text("mem.size") + " is too small for the virtqueues and buffers (need " +
                      std::to_string((need + (1u << 20) - 1) >> 20) + "m)");
}

// fio's blockalign: offsets whole LBAs (fio's interval 512); verify's
// per-block pattern needs blocks that do not overlap (ba = bs).
static void check_blockalign(const SystemParams& p, uint64_t lba, const char* lba_param) {
  for (const models::WorkloadParams& w : p.jobs) {
    const uint64_t ba = w.job.blockalign;
    if (!ba) continue;
    if (ba % lba)
      throw ConfigError("--blockalign: " + std::to_string(ba) + " bytes is not a multiple of " + lba_param + " (" +
                        std::to_string(lba) + "; allowed 0 or a multiple up to 1m)");
    if (ba > w.job.size)
      throw ConfigError("--blockalign: " + std::to_string(ba) + " bytes is larger than size (" +
                        std::to_string(w.job.size) + ")");
    if (w.verify != models::VerifyMode::Off && ba != w.job.bs)
      throw ConfigError("--blockalign: " + std::to_string(ba) + " with verify=pattern must be 0 or bs (" +
                        std::to_string(w.job.bs) + "): the pattern's blocks must not overlap");
  }
}

// fio's verify_interval: whole intervals in a block (verify.c fills one
// header per interval), each larger than its header (fio refuses a header
// that does not fit); an I/O split at MDTS carries whole intervals per command.
static void check_verify_interval(const SystemParams& p, uint64_t max_command) {
  for (const models::WorkloadParams& w : p.jobs) {
    if (w.verify == models::VerifyMode::Off) continue;
    const uint64_t iv = w.verify_interval ? w.verify_interval : w.job.bs;
    const uint32_t hdr = models::fio_opt::verify_header_bytes(w.verify);
    if (w.job.bs % iv || iv % 8 || iv <= hdr)
      throw ConfigError("--verify_interval: " + std::to_string(iv) + " must divide bs (" + std::to_string(w.job.bs) +
                        "), be a multiple of 8 and exceed verify=" + std::string(hdr ? "its header (" : "pattern's (") +
                        std::to_string(hdr) + " bytes)");
    if (hdr && max_command && w.job.bs > max_command && max_command % iv)
      throw ConfigError("--verify_interval: " + std::to_string(iv) + " must divide the largest command (" +
                        std::to_string(max_command) + " bytes, nvme.mdts) that splits bs: give a verify_interval dividing it");
  }
}

// fio's ioengine=io_uring_cmd (cmd_type=nvme) on the NVMe generic char
// device: the command goes to the namespace's queue as one request
// (drivers/nvme/host/ioctl.c nvme_uring_cmd_io -> nvme_map_user_request ->
// blk_rq_map_user_io), which no block layer splits: a transfer above the
// queue's max_hw_sectors (MDTS, drivers/nvme/host/core.c
// nvme_set_queue_limits) fails there with EINVAL (block/blk-map.c
// bio_map_user_iov / blk_rq_append_bio), so the job could do no I/O: refused here.
static void check_uring_cmd(const SystemParams& p) {
  for (const models::WorkloadParams& w : p.jobs) {
    if (!w.engine.uring_cmd) continue;
    if (p.device.device == DeviceKind::VirtioBlk)
      throw ConfigError("--uring_cmd: on (ioengine=io_uring_cmd) needs device=nvme: /dev/ngXnY is the NVMe "
                        "namespace's generic char device");
    const unsigned mdts = p.nvme.firmware.mdts;
    if (mdts && w.max_bs() > (uint64_t(4096) << mdts))
      throw ConfigError("--uring_cmd: on (ioengine=io_uring_cmd): bs " + std::to_string(w.max_bs()) +
                        " bytes is above the largest passthrough transfer (" +
                        std::to_string(uint64_t(4096) << mdts) +
                        " bytes, nvme.mdts): the kernel refuses it (EINVAL), passthrough has no split");
  }
}

void check_system_params(const SystemParams& p, const Config& c) {
  check_simulated_time_range(p, c);
  check_uring_cmd(p);
  check_verify_interval(p, p.device.device == DeviceKind::VirtioBlk || !p.nvme.firmware.mdts
                               ? 0 : uint64_t(4096) << p.nvme.firmware.mdts);
  if (p.device.device == DeviceKind::VirtioBlk) {
    check_virtio_params(p, c);
    check_blockalign(p, fw::virtio::BLK_SECTOR_BYTES, "virtio-blk's sector");
    check_hv_params(p, c);
    return;
  }
  const fw::ControllerConfig& fc = p.nvme.firmware;
  const fw::DriverConfig& dc = p.guest.driver;
  const uint32_t numjobs = p.numjobs(), iodepth = p.iodepth, bs = p.bs;
  // A job's depth above the I/O queue's tags (entries - 1), or its I/Os
  // split at MDTS into more commands than the tags, runs: its submissions
  // wait for free tags as blk_mq_get_tag sleeps (FioJob::issue_command_waiting).
  if (dc.io_cq_entries == 1)
    throw ConfigError("--guest.io_cq_entries: 1 is not a queue size (allowed 0 = as the SQ, or "
                      "2..65536)");
  if (numjobs > fc.max_io_queues)
    throw ConfigError("--numjobs: " + std::to_string(numjobs) +
                      " needs more I/O queues than nvme.max_io_queues (" +
                      std::to_string(fc.max_io_queues) + ")");
  // fio's bssplit / bsrange: every size a whole number of LBAs; verify's
  // per-block pattern needs one size.
  // (bs alone is Config::validate_all's.)
  for (const models::WorkloadParams& w : p.jobs) {
    if (w.job.bssplit_text.empty() && w.job.bsrange_text.empty()) continue;
    const uint64_t lba = fc.lba_bytes ? fc.lba_bytes : 512;
    for (unsigned d = 0; d < 2; ++d) {
      models::fio_opt::BsSplitList split[2];
      models::fio_opt::parse_bssplit(w.job.bssplit_text, split);
      std::vector<uint64_t> sizes{w.job.min_bs(d), w.job.max_bs(d)};
      for (const auto& e : split[d]) sizes.push_back(e.bs);
      for (uint64_t b : sizes)
        if (b % lba || b < 512 || b > (1u << 20))
          throw ConfigError(std::string(w.job.bssplit_text.empty() ? "--bsrange" : "--bssplit") + ": " +
                            std::to_string(b) + " bytes is not a multiple of nvme.lba_bytes (" +
                            std::to_string(lba) + ") in 512..1048576");
    }
    if (w.verify != models::VerifyMode::Off && (w.job.min_bs(0) != w.job.max_bs(0) || w.job.min_bs(1) != w.job.max_bs(1)))
      throw ConfigError("--verify: pattern needs one block size (not bssplit or bsrange)");
  }
  check_blockalign(p, fc.lba_bytes ? fc.lba_bytes : 512, "nvme.lba_bytes");
  // Each doorbell-buffer page holds an SQ tail and a CQ head per queue id.
  const uint32_t max_q = fc.max_io_queues, dstrd = fc.dstrd;
  if (fc.dbbuf != fw::DbbufMode::Off && fw::dbbuf_bytes_needed(uint16_t(max_q), dstrd) > 4096)
    throw ConfigError("--nvme.max_io_queues: " + std::to_string(max_q) + " queues do not fit " +
                      "one 4 KiB doorbell-buffer page at nvme.dstrd " + std::to_string(dstrd) +
                      " (allowed 1.." + std::to_string(4096 / (8 << dstrd) - 1) + " with nvme.dbbuf " +
                      fw::to_string(fc.dbbuf) + ")");
  check_hv_params(p, c);
  check_msix_layout(p, c);
  // The driver's queues and per-tag data buffers must fit guest RAM;
  // otherwise bring-up would fail in the middle of the run.
  const uint64_t need = dc.memory_base + fw::Driver::memory_needed(dc, fc.mqes, fc.dstrd);
  if (need > p.mem.size) {
    const uint64_t mib = (need + (1u << 20) - 1) >> 20;
    const std::string what = " is too small for the driver's queues and buffers (numjobs " +
                             std::to_string(numjobs) + ", iodepth " + std::to_string(iodepth) +
                             ", bs " + format_size(bs) + " need ";
    const double max_mem = c.registry().find("mem.size")->max;
    throw ConfigError("--mem.size: " + c.text("mem.size") + what + std::to_string(mib) + "m" +
                      (double(need) > max_mem ? "; more than mem.size allows, " +
                                                    format_size(uint64_t(max_mem)) +
                                                    ": lower numjobs, iodepth or bs)"
                                              : "; allowed " + std::to_string(mib) + "m.." +
                                                    format_size(uint64_t(max_mem)) + ")"));
  }
}

}  // namespace nvmesim::platform
