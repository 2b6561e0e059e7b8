// Transaction Layer Packets of memory transactions: how many TLPs a
// transfer takes and how many bytes they put on the wire, by the PCI
// Express Base Specification's rules (4.0), and a tally of them by kind and
// by what they were for. Plain C++ (no SystemC); models/pcie/pcie_link_traffic
// gives them time.
//
// Rules:
//  - Memory requests (section 2.2.7): a write TLP carries at most
//    Max_Payload_Size (MPS) bytes; a read request asks for at most
//    Max_Read_Request_Size (MRRS) bytes; no request crosses a 4 KiB address
//    boundary. A transfer is cut greedily: each TLP as large as both allow.
//  - Completions (section 2.3.1.1, Data Return for Read Requests): the
//    completer may return a request's data in several Completions with Data,
//    each at most MPS bytes, every one but the last ending on a Read
//    Completion Boundary (RCB: a root complex's is 64 or 128 bytes, section
//    2.3.1.1; 64 here).
//    The count is the fewest the rules allow: each completion as large as MPS
//    lets it, cut at the last RCB-aligned address it reaches.
//  - Payloads are whole DWORDs (section 2.2.2): a transfer that starts or ends
//    inside a DW carries that DW, its unused bytes disabled by the byte enables.
//  - Every TLP also costs `overhead` bytes on the wire: framing, sequence
//    number, header and LCRC (pcie.tlp_overhead: 24 for a 4 DW header with a
//    64-bit address; one figure for every kind, a simplification: a
//    completion's header is 3 DW).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvmesim/firmware/sim/statistics.h"

namespace nvmesim::fw::pcie {

// MRd: memory read request; CplD: completion with data; MWr: posted memory write.
enum class TlpKind : uint8_t { MemoryRead, Completion, PostedWrite };
inline constexpr unsigned kTlpKinds = 3;
const char* tlp_kind_name(TlpKind kind);  // "mrd", "cpld", "mwr"

struct TlpRules {
  uint32_t max_payload = 256;               // MPS, bytes
  uint32_t max_read_request = 512;          // MRRS, bytes
  uint32_t read_completion_boundary = 64;   // RCB, bytes
  uint32_t overhead = 24;                   // wire bytes per TLP besides its payload
  static constexpr uint64_t kBoundary = 4096;  // no request crosses it
};

// TLPs of one transfer and the payload bytes they carry (whole DWs).
struct TlpSplit {
  uint64_t tlps = 0;
  uint64_t payload = 0;
  uint64_t wire_bytes(const TlpRules& rules) const { return payload + tlps * rules.overhead; }
};

// The posted writes of [addr, addr + len).
TlpSplit posted_write_split(const TlpRules& rules, uint64_t addr, uint64_t len);
// The read requests of [addr, addr + len) (no payload).
TlpSplit read_request_split(const TlpRules& rules, uint64_t addr, uint64_t len);
// The completions that answer those requests.
TlpSplit read_completion_split(const TlpRules& rules, uint64_t addr, uint64_t len);

// The TLPs a device and its host exchanged, by purpose (names the device
// gives: "sqe_fetch", "msix", ...) and kind: counts, payload bytes and wire
// bytes, as statistics named "<purpose>_<kind>" in three vectors.
class TlpTally : public stats::Group {
 public:
  TlpTally(const TlpRules& rules, const std::vector<std::string>& purposes);

  const TlpRules& rules() const { return rules_; }
  unsigned purposes() const { return purposes_; }

  // A write of [addr, addr + len) for `purpose`: its posted writes.
  TlpSplit posted_write(unsigned purpose, uint64_t addr, uint64_t len);
  // A read: its requests and their completions.
  struct ReadSplit {
    TlpSplit requests, completions;
  };
  ReadSplit read(unsigned purpose, uint64_t addr, uint64_t len);

  uint64_t tlps(unsigned purpose, TlpKind kind) const { return tlps_[index(purpose, kind)]; }
  uint64_t payload_bytes(unsigned purpose, TlpKind kind) const { return payload_[index(purpose, kind)]; }
  uint64_t wire_bytes(unsigned purpose, TlpKind kind) const { return wire_[index(purpose, kind)]; }

 private:
  static std::vector<std::string> subnames(const std::vector<std::string>& purposes);
  size_t index(unsigned purpose, TlpKind kind) const { return size_t(purpose) * kTlpKinds + unsigned(kind); }
  void add(unsigned purpose, TlpKind kind, const TlpSplit& s);

  TlpRules rules_;
  unsigned purposes_;
  stats::Vector tlps_, payload_, wire_;
};

}  // namespace nvmesim::fw::pcie
