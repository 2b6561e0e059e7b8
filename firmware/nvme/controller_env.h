// What the controller needs from the world around it (ControllerEnv: DMA,
// the device's barrier, MSI-X, the backend), and what it hands the backend.
#pragma once

#include <cstdint>
#include <vector>

namespace nvmesim::fw {

// One I/O command that passed the controller's checks, for the backend.
struct IoRequest {
  uint32_t tag = 0;     // controller's command slot; pass back to complete_io()
  uint16_t sqid = 0;
  uint16_t cid = 0;
  uint8_t opcode = 0;   // nvme::io::READ / WRITE / FLUSH
  uint32_t nsid = 0;
  uint64_t slba = 0;
  uint32_t nlb = 0;     // number of logical blocks (1-based)
  uint32_t bytes = 0;   // nlb * lba_bytes
  uint32_t segment_count = 0;  // == segments.size()
  struct Segment { uint64_t addr; uint32_t len; };
  // The data buffer, from PRP1/PRP2/PRP lists: one entry per memory page
  // (+1 for an unaligned PRP1), as many as MDTS allows. The controller keeps
  // one request and reuses its capacity: no allocation per I/O.
  std::vector<Segment> segments;
};

// What a DMA is for: a link model counts its TLPs by it
// (models/pcie/pcie_link_traffic.h).
enum class DmaPurpose : uint8_t {
  SqeFetch,       // a submission queue entry
  PrpList,        // a PRP list page's entries
  ShadowRead,     // a shadow doorbell (doorbell buffer)
  ShadowWrite,    // an MMIO doorbell value mirrored into the shadow buffer
  EventIdxWrite,  // an EventIdx entry
  CqeWrite,       // a completion queue entry
  Data,           // an I/O command's data
  AdminData,      // an admin command's data (Identify, Get Log Page, ...)
};
inline constexpr unsigned kDmaPurposes = 8;
const char* dma_purpose_name(DmaPurpose purpose);  // "sqe_fetch", "prp_list", ...

// What the controller needs from the world around it. Implemented by the
// SystemC model (with timing) and by test harnesses (without).
class ControllerEnv {
 public:
  virtual ~ControllerEnv() = default;
  // Device DMA to guest memory. False when the range is not backed by guest
  // memory: the controller turns that into Data Transfer Error (or CFS for
  // queue memory). `purpose`: what the transfer is for.
  virtual bool dma_read(DmaPurpose purpose, uint64_t addr, void* dst, uint32_t len) = 0;
  virtual bool dma_write(DmaPurpose purpose, uint64_t addr, const void* src, uint32_t len) = 0;
  // The device's own memory-ordering point: everything written before is
  // visible to the host before anything read after (used between an
  // EventIdx store and the shadow re-read).
  virtual void device_barrier() = 0;
  // Send the MSI-X message of `vector`.
  virtual void msix(uint16_t vector) = 0;
  // Hand a checked I/O command to the backend; it finishes later through
  // Controller::complete_io(req.tag, status).
  virtual void backend_submit(const IoRequest& req) = 0;
  // The device's own work, for a model to time it where it happens: one
  // command fetched (before it executes), one completion entry about to be
  // written.
  virtual void on_command_fetched() {}
  virtual void on_completion_posting() {}
};

}  // namespace nvmesim::fw
