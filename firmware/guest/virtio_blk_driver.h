// The guest's virtio-blk driver (Linux drivers/block/virtio_blk.c over
// drivers/virtio/virtio_pci_modern.c and virtio_ring.c), with no notion of
// time: bring-up through the common config, one virtqueue per vCPU (or
// fewer, each CPU on queue cpu % queues as blk_mq_map_queues maps them), a
// request as header + data + status descriptors, one kick per batch
// (virtio_queue_rq: kick_prepare on the batch's last request), and
// virtblk_done's completion loop with callbacks suppressed through used_event.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvmesim/firmware/guest/driver.h"
#include "nvmesim/firmware/sim/enum_table.h"
#include "nvmesim/firmware/guest/virtqueue_driver.h"

namespace nvmesim::fw {

// Fault injection: one request the guest publishes malformed, each form
// caught by one of QEMU's checks in hw/virtio/virtio.c virtqueue_split_pop
// (its virtio_error() message in brackets).
enum class VirtioRingFault : uint8_t {
  None,
  DescLoop,             // the status descriptor chains to itself ("Looped descriptor")
  HeadOutOfRange,       // the avail ring names descriptor num ("Guest says index %u is available")
  NextOutOfRange,       // the header's next is num ("Desc next is %u")
  BufferOutsideMemory,  // the header's address is past guest memory ("virtio: bogus descriptor ...")
  ZeroLength,           // the header's length is 0 ("virtio: zero sized buffers are not allowed")
  IndirectBadLength,    // the indirect table's length is 40 ("Invalid size for indirect buffer table")
  IndirectNested,       // the table's data entry names a table ("Nested indirect descriptor")
};
inline constexpr EnumEntry<VirtioRingFault> virtio_ring_faults[] = {
    {VirtioRingFault::None, "none"},
    {VirtioRingFault::DescLoop, "desc_loop"},
    {VirtioRingFault::HeadOutOfRange, "head_out_of_range"},
    {VirtioRingFault::NextOutOfRange, "next_out_of_range"},
    {VirtioRingFault::BufferOutsideMemory, "buffer_outside_memory"},
    {VirtioRingFault::ZeroLength, "zero_length"},
    {VirtioRingFault::IndirectBadLength, "indirect_bad_length"},
    {VirtioRingFault::IndirectNested, "indirect_nested"}};
// A guest-physical address no guest memory reaches (BufferOutsideMemory).
constexpr uint64_t kOutsideGuestMemory = uint64_t(1) << 52;

struct VirtioBlkDriverConfig {
  uint16_t queues = 1;            // virtqueues wished (one per vCPU)
  uint16_t queue_size = 256;      // entries wished per virtqueue (the device may offer fewer)
  bool event_idx = true;          // accept VIRTIO_RING_F_EVENT_IDX when offered
  bool indirect_desc = true;      // accept VIRTIO_RING_F_INDIRECT_DESC when offered
  // Requests a queue can have in flight at most (0: its depth): the tags
  // that get a header, data buffer and indirect table (Linux's request
  // buffers are the application's; the model keeps one per tag it can use).
  uint32_t max_outstanding = 0;
  uint32_t max_transfer_bytes = 131072;
  uint64_t memory_base = 0;       // guest memory for rings, headers and data buffers
  uint64_t memory_bytes = 0;
  uint32_t msix_vector_base = 1;  // queue q uses vector base + q; the config change vector 0
  VirtioRingFault ring_fault = VirtioRingFault::None;
  uint64_t ring_fault_after = 0;  // requests on queue 0 published well before the malformed one
};

// One virtqueue's kicks, in the doorbell counters' terms (docs/metrics.md):
// a kick is an SQ doorbell update, written (mmio) or suppressed.
struct VirtqueueDriverCounters : stats::Group {
  using Scalar = stats::Scalar;
  Scalar updates{*this, "updates", stats::Unit::Count, "kick decisions (virtqueue_kick_prepare after a batch)"};
  Scalar mmio{*this, "mmio", stats::Unit::Count, "kicks that wrote the queue's notify address"};
  Scalar suppressed{*this, "suppressed", stats::Unit::Count,
                    "kicks avail_event (or the device's NO_NOTIFY flag) showed were not needed"};
  Scalar updates_with_dbbuf{*this, "updates_with_dbbuf", stats::Unit::Count,
                            "kick decisions made with VIRTIO_RING_F_EVENT_IDX negotiated"};
  Scalar completions{*this, "completions", stats::Unit::Count, "used entries the driver consumed"};
  Scalar interrupts{*this, "interrupts", stats::Unit::Count, "queue interrupts with used entries to process"};
  Scalar spurious_interrupts{*this, "spurious_interrupts", stats::Unit::Count,
                             "queue interrupts that found no new used entry (IRQ_NONE)"};
};

struct VirtioBlkBringUp {
  bool ok = false;
  std::string error;
  uint64_t features = 0;  // negotiated
  uint16_t queues = 0;
  uint32_t queue_size = 0;
  uint32_t queue_depth = 0;  // requests per queue (virtblk_probe: num_free, halved without indirect descriptors)
  uint64_t capacity_sectors = 0;
  uint32_t blk_size = 512;
};

class VirtioBlkDriver {
 public:
  // Bring-up and every queue on `env` (one CPU, or a harness).
  VirtioBlkDriver(const VirtioBlkDriverConfig& config, VirtioDriverEnv& env);
  // Queue q's work (add, kick, interrupt) runs on `cpu` unless a call names
  // the CPU it runs on: queue q's interrupt goes to CPU q, the first CPU
  // blk_mq_map_queues maps to it.
  void attach_cpu(uint16_t q, VirtioDriverEnv& cpu);
  // Linux 6.1 block/blk-mq-cpumap.c blk_mq_map_queues without SMT siblings
  // (blk_mq_virtio_map_queues falls back to it when the vectors carry no
  // affinity): CPU c submits on queue c % queues.
  static uint16_t queue_of_cpu(unsigned cpu, uint16_t queues) { return uint16_t(cpu % queues); }

  VirtioBlkBringUp bring_up();
  // Builds the request on queue q (virtblk_add_req); no kick. Returns the
  // tag, or -1 when the queue has no free tag or too few descriptors.
  // `on`: the CPU running it (nullptr: the queue's attached CPU).
  int32_t submit(uint16_t q, const IoSpec& io, VirtioDriverEnv* on = nullptr);
  // virtqueue_kick_prepare, then the notify write when it says so.
  DoorbellUpdate kick(uint16_t q, VirtioDriverEnv* on = nullptr);
  // A request the device has used, with the CPU that submitted it, read at
  // virtqueue_get_buf as virtblk_done takes the request from the token. Its
  // descriptors are free from then on; its tag (and so its header and data
  // buffer) stays the request's until end_request.
  struct UsedRequest : Completion {
    VirtioDriverEnv* submitter = nullptr;
  };
  // The queue's interrupt (vring_interrupt + virtblk_done): consumes every
  // used entry into `used` (cleared first; the caller's buffer keeps its
  // capacity, so no allocation per interrupt), callbacks off while it does,
  // on again (re-checked) after. The caller completes each request and then
  // calls end_request for it.
  void interrupt(uint16_t q, std::vector<UsedRequest>& used, VirtioDriverEnv* on = nullptr);
  // blk_mq_end_request -> blk_mq_free_request: the request has completed
  // (its owner has read its status, data and the job's record of it), so its
  // tag is free. Linux frees a tag only here, never at virtqueue_get_buf: a
  // CPU sharing the queue must not reuse a tag whose request is still being
  // completed (its data buffer and its job's per-tag state are still read).
  void end_request(uint16_t q, uint32_t tag);
  const VirtioBlkBringUp& last_bring_up() const { return result_; }
  bool event_idx() const { return (result_.features & virtio::bit(virtio::F_RING_EVENT_IDX)) != 0; }
  bool indirect_desc() const { return (result_.features & virtio::bit(virtio::F_RING_INDIRECT_DESC)) != 0; }
  VirtqueueDriver& vq(uint16_t q) { return queues_[q].vq; }
  const VirtqueueDriverCounters& counters(uint16_t q) const { return *queues_[q].counters; }
  uint32_t outstanding(uint16_t q) const { return queues_[q].outstanding; }
  uint64_t data_buffer(uint16_t q, uint32_t tag) const;
  uint64_t header_addr(uint16_t q, uint32_t tag) const;
  uint64_t indirect_table(uint16_t q, uint32_t tag) const;  // the tag's indirect descriptor table
  stats::Group& stats() { return stats_; }
  // Guest memory bring_up() carves for `config`.
  static uint64_t memory_needed(const VirtioBlkDriverConfig& config);

 private:
  static constexpr uint32_t PAGE = 4096;
  static constexpr uint8_t TAG_FREE = 0, TAG_IN_FLIGHT = 1, TAG_USED = 2;
  struct Queue {
    VirtqueueDriver vq;
    uint16_t notify_off = 0;
    uint64_t headers = 0, data = 0;  // per tag: 16-byte header + status (32 bytes), data buffer
    uint64_t tables = 0;             // per tag: an indirect table of up to 4 descriptors (64 bytes)
    std::vector<uint32_t> free_tags;
    // Per tag: TAG_FREE, TAG_IN_FLIGHT (on the ring), or TAG_USED (taken
    // from the used ring, its completion under way until end_request).
    std::vector<uint8_t> tag_busy;
    std::vector<uint8_t> tag_opcode;
    std::vector<VirtioDriverEnv*> tag_cpu;  // who submitted each tag
    uint32_t outstanding = 0;
    std::unique_ptr<VirtqueueDriverCounters> counters = std::make_unique<VirtqueueDriverCounters>();
  };
  VirtioBlkBringUp fail(std::string message);
  // Damages the chain at `head` just published on queue q (before any kick).
  void inject_ring_fault(VirtioDriverEnv& c, uint16_t q, uint16_t head);
  uint32_t common_read(uint32_t off, unsigned size);
  void common_write(uint32_t off, unsigned size, uint32_t value);

  VirtioBlkDriverConfig config_;
  VirtioDriverEnv& cpu(uint16_t q) const { return q < cpus_.size() && cpus_[q] ? *cpus_[q] : env_; }
  // The CPU a call runs on; the queue's ring accesses go through it.
  VirtioDriverEnv& running(uint16_t q, VirtioDriverEnv* on) {
    VirtioDriverEnv& c = on ? *on : cpu(q);
    queues_[q].vq.set_env(c);
    return c;
  }

  VirtioDriverEnv& env_;
  std::vector<VirtioDriverEnv*> cpus_;  // by queue
  stats::Group stats_;  // "virtio_driver": vqN per queue
  std::vector<Queue> queues_;
  VirtioBlkBringUp result_;
  uint64_t queue0_requests_ = 0;  // requests published on queue 0 (ring_fault_after)
};

}  // namespace nvmesim::fw
