#include "nvmesim/firmware/pcie/tlp.h"

#include <algorithm>

namespace nvmesim::fw::pcie {

namespace {

// Whole DWs of [addr, addr + len).
uint64_t dw_payload(uint64_t addr, uint64_t len) { return ((addr + len + 3) / 4 - addr / 4) * 4; }

// Cuts [addr, addr + len) into pieces whose whole DWs come to at most `max`
// bytes (a TLP's Length counts DWs: a piece starting inside a DW carries
// that DW whole) and that do not cross a 4 KiB boundary, each as large as
// allowed.
template <class Each>
void cut(uint64_t addr, uint64_t len, uint64_t max, Each each) {
  while (len) {
    const uint64_t to_boundary = TlpRules::kBoundary - addr % TlpRules::kBoundary;
    const uint64_t n = std::min({len, max - addr % 4, to_boundary});
    each(addr, n);
    addr += n;
    len -= n;
  }
}

}  // namespace

const char* tlp_kind_name(TlpKind kind) {
  switch (kind) {
    case TlpKind::MemoryRead: return "mrd";
    case TlpKind::Completion: return "cpld";
    case TlpKind::PostedWrite: return "mwr";
  }
  return "?";
}

TlpSplit posted_write_split(const TlpRules& rules, uint64_t addr, uint64_t len) {
  TlpSplit s;
  cut(addr, len, rules.max_payload, [&](uint64_t a, uint64_t n) {
    ++s.tlps;
    s.payload += dw_payload(a, n);
  });
  return s;
}

TlpSplit read_request_split(const TlpRules& rules, uint64_t addr, uint64_t len) {
  TlpSplit s;
  cut(addr, len, rules.max_read_request, [&](uint64_t, uint64_t) { ++s.tlps; });
  return s;
}

TlpSplit read_completion_split(const TlpRules& rules, uint64_t addr, uint64_t len) {
  TlpSplit s;
  const uint64_t rcb = rules.read_completion_boundary;
  cut(addr, len, rules.max_read_request, [&](uint64_t a, uint64_t n) {
    const uint64_t end = a + n;
    while (a < end) {
      uint64_t stop = end;
      if (dw_payload(a, end - a) > rules.max_payload)
        stop = (a + rules.max_payload) / rcb * rcb;  // not the last: ends on an RCB
      if (stop <= a) stop = std::min(end, a + rules.max_payload);  // MPS below the RCB (not a legal setting)
      ++s.tlps;
      s.payload += dw_payload(a, stop - a);
      a = stop;
    }
  });
  return s;
}

std::vector<std::string> TlpTally::subnames(const std::vector<std::string>& purposes) {
  std::vector<std::string> out;
  for (const auto& p : purposes)
    for (unsigned k = 0; k < kTlpKinds; ++k) out.push_back(p + "_" + tlp_kind_name(TlpKind(k)));
  return out;
}

TlpTally::TlpTally(const TlpRules& rules, const std::vector<std::string>& purposes)
    : rules_(rules),
      purposes_(unsigned(purposes.size())),
      tlps_(*this, "tlps", stats::Unit::Count, "TLPs by purpose and kind (mrd: read request, cpld: completion with data, mwr: posted write)", subnames(purposes)),
      payload_(*this, "payload_bytes", stats::Unit::Bytes, "payload bytes (whole DWs) by purpose and kind", subnames(purposes)),
      wire_(*this, "wire_bytes", stats::Unit::Bytes, "bytes on the link (payload + pcie.tlp_overhead a TLP) by purpose and kind", subnames(purposes)) {}

void TlpTally::add(unsigned purpose, TlpKind kind, const TlpSplit& s) {
  const size_t i = index(purpose, kind);
  tlps_[i] += s.tlps;
  payload_[i] += s.payload;
  wire_[i] += s.wire_bytes(rules_);
}

TlpSplit TlpTally::posted_write(unsigned purpose, uint64_t addr, uint64_t len) {
  const TlpSplit s = posted_write_split(rules_, addr, len);
  add(purpose, TlpKind::PostedWrite, s);
  return s;
}

TlpTally::ReadSplit TlpTally::read(unsigned purpose, uint64_t addr, uint64_t len) {
  ReadSplit r{read_request_split(rules_, addr, len), read_completion_split(rules_, addr, len)};
  add(purpose, TlpKind::MemoryRead, r.requests);
  add(purpose, TlpKind::Completion, r.completions);
  return r;
}

}  // namespace nvmesim::fw::pcie
