// Virtio 1.x structures and constants the split virtqueue and virtio-blk use
// (OASIS "Virtual I/O Device (VIRTIO) Version 1.1": section 2.1 device
// status, 2.7 split virtqueues, 4.1.4 PCI capabilities, 5.2 block device,
// 6 reserved feature bits). All fields are little-endian in guest memory.
#pragma once

#include <cstdint>
#include <cstring>

namespace nvmesim::fw::virtio {

// Device status (section 2.1).
constexpr uint8_t STATUS_ACKNOWLEDGE = 1;
constexpr uint8_t STATUS_DRIVER = 2;
constexpr uint8_t STATUS_DRIVER_OK = 4;
constexpr uint8_t STATUS_FEATURES_OK = 8;
constexpr uint8_t STATUS_DEVICE_NEEDS_RESET = 64;
constexpr uint8_t STATUS_FAILED = 128;

// Feature bit numbers (sections 5.2.3 and 6).
constexpr unsigned BLK_F_SEG_MAX = 2;
constexpr unsigned BLK_F_BLK_SIZE = 6;
constexpr unsigned BLK_F_FLUSH = 9;
constexpr unsigned BLK_F_MQ = 12;
constexpr unsigned F_RING_INDIRECT_DESC = 28;
constexpr unsigned F_RING_EVENT_IDX = 29;
constexpr unsigned F_VERSION_1 = 32;
constexpr uint64_t bit(unsigned feature) { return uint64_t(1) << feature; }

// Descriptor and ring flags (section 2.7.5, 2.7.6, 2.7.8).
constexpr uint16_t DESC_F_NEXT = 1;
constexpr uint16_t DESC_F_WRITE = 2;
constexpr uint16_t DESC_F_INDIRECT = 4;
constexpr uint16_t AVAIL_F_NO_INTERRUPT = 1;
constexpr uint16_t USED_F_NO_NOTIFY = 1;

// Split virtqueue limits (section 2.7: Queue Size is a power of 2, at most 32768).
constexpr uint32_t MAX_QUEUE_SIZE = 32768;
constexpr bool valid_queue_size(uint32_t n) { return n >= 1 && n <= MAX_QUEUE_SIZE && (n & (n - 1)) == 0; }

// struct virtq_desc (section 2.7.5).
struct Desc {
  uint64_t addr;
  uint32_t len;
  uint16_t flags;
  uint16_t next;
};
static_assert(sizeof(Desc) == 16, "virtq_desc is 16 bytes");

// struct virtq_used_elem (section 2.7.8).
struct UsedElem {
  uint32_t id;
  uint32_t len;
};
static_assert(sizeof(UsedElem) == 8, "virtq_used_elem is 8 bytes");

// Where each part of a split virtqueue of `num` entries lives, given the three
// addresses the driver programs (queue_desc, queue_driver, queue_device).
// Sizes and alignment from section 2.7 ("Virtqueue Part" table): descriptor
// table 16*num (align 16), available ring 6+2*num (align 2), used ring 6+8*num
// (align 4). used_event follows avail->ring[num], avail_event used->ring[num]
// (section 2.7.10).
struct SplitRing {
  uint32_t num = 0;
  uint64_t desc = 0, avail = 0, used = 0;

  static constexpr uint64_t desc_bytes(uint32_t n) { return 16ull * n; }
  static constexpr uint64_t avail_bytes(uint32_t n) { return 6ull + 2ull * n; }
  static constexpr uint64_t used_bytes(uint32_t n) { return 6ull + 8ull * n; }
  static constexpr uint32_t DESC_ALIGN = 16, AVAIL_ALIGN = 2, USED_ALIGN = 4;

  constexpr uint64_t desc_at(uint32_t i) const { return desc + 16ull * i; }
  constexpr uint64_t avail_flags() const { return avail; }
  constexpr uint64_t avail_idx() const { return avail + 2; }
  constexpr uint64_t avail_ring(uint32_t slot) const { return avail + 4 + 2ull * slot; }
  constexpr uint64_t used_event() const { return avail + 4 + 2ull * num; }
  constexpr uint64_t used_flags() const { return used; }
  constexpr uint64_t used_idx() const { return used + 2; }
  constexpr uint64_t used_ring(uint32_t slot) const { return used + 4 + 8ull * slot; }
  constexpr uint64_t avail_event() const { return used + 4 + 8ull * num; }
  // Ring slot of a free-running 16-bit index (num is a power of 2).
  constexpr uint32_t slot(uint16_t idx) const { return idx & (num - 1); }
};

// Virtio-blk request (section 5.2.6): a 16-byte header the device reads, the
// data, and one status byte the device writes.
constexpr uint32_t BLK_T_IN = 0;
constexpr uint32_t BLK_T_OUT = 1;
constexpr uint32_t BLK_T_FLUSH = 4;
constexpr uint32_t BLK_T_GET_ID = 8;
constexpr uint8_t BLK_S_OK = 0;
constexpr uint8_t BLK_S_IOERR = 1;
constexpr uint8_t BLK_S_UNSUPP = 2;
constexpr uint32_t BLK_SECTOR_BYTES = 512;  // sector is always in 512-byte units
struct BlkReqHeader {
  uint32_t type;
  uint32_t reserved;
  uint64_t sector;
};
static_assert(sizeof(BlkReqHeader) == 16, "virtio_blk_outhdr is 16 bytes");

// struct virtio_pci_common_cfg field offsets (section 4.1.4.3).
namespace common_cfg {
constexpr uint32_t DEVICE_FEATURE_SELECT = 0x00;  // le32
constexpr uint32_t DEVICE_FEATURE = 0x04;         // le32, RO
constexpr uint32_t DRIVER_FEATURE_SELECT = 0x08;  // le32
constexpr uint32_t DRIVER_FEATURE = 0x0C;         // le32
constexpr uint32_t MSIX_CONFIG = 0x10;            // le16
constexpr uint32_t NUM_QUEUES = 0x12;             // le16, RO
constexpr uint32_t DEVICE_STATUS = 0x14;          // u8
constexpr uint32_t CONFIG_GENERATION = 0x15;      // u8, RO
constexpr uint32_t QUEUE_SELECT = 0x16;           // le16
constexpr uint32_t QUEUE_SIZE = 0x18;             // le16
constexpr uint32_t QUEUE_MSIX_VECTOR = 0x1A;      // le16
constexpr uint32_t QUEUE_ENABLE = 0x1C;           // le16
constexpr uint32_t QUEUE_NOTIFY_OFF = 0x1E;       // le16, RO
constexpr uint32_t QUEUE_DESC = 0x20;             // le64
constexpr uint32_t QUEUE_DRIVER = 0x28;           // le64
constexpr uint32_t QUEUE_DEVICE = 0x30;           // le64
constexpr uint32_t BYTES = 0x38;
}  // namespace common_cfg
constexpr uint16_t NO_VECTOR = 0xFFFF;  // VIRTIO_MSI_NO_VECTOR (section 4.1.4.3)

// Little-endian loads and stores on guest memory bytes.
inline uint16_t ld16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t ld32(const uint8_t* p) { return uint32_t(ld16(p)) | (uint32_t(ld16(p + 2)) << 16); }
inline uint64_t ld64(const uint8_t* p) { return uint64_t(ld32(p)) | (uint64_t(ld32(p + 4)) << 32); }
inline void st16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }
inline void st32(uint8_t* p, uint32_t v) { st16(p, uint16_t(v)); st16(p + 2, uint16_t(v >> 16)); }
inline void st64(uint8_t* p, uint64_t v) { st32(p, uint32_t(v)); st32(p + 4, uint32_t(v >> 32)); }

inline Desc load_desc(const uint8_t* p) { return Desc{ld64(p), ld32(p + 8), ld16(p + 12), ld16(p + 14)}; }
inline void store_desc(uint8_t* p, const Desc& d) {
  st64(p, d.addr);
  st32(p + 8, d.len);
  st16(p + 12, d.flags);
  st16(p + 14, d.next);
}

}  // namespace nvmesim::fw::virtio
