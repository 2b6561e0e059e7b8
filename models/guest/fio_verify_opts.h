// fio's verify options as the configuration holds them: the mode (fio's
// verify=), and verify_pattern's text parsed as fio parses it (lib/pattern.c
// parse_and_fill_pattern, the forms nvmesim takes: 0x hex bytes, a decimal
// number, a "quoted string"). Plain C++, header-only: the configuration
// checks the text with the code the job runs.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace nvmesim::models {

// fio verify.h's modes nvmesim runs. Pattern is nvmesim's own per-block
// pattern (no header) unless verify_pattern is given; the others write fio's
// verify_header and their checksum at the head of every verify_interval.
enum class VerifyMode : uint8_t { Off, Pattern, Crc32c, Crc32, Md5, Sha256, Meta };

namespace fio_opt {

// fio's verify_type numbers (verify.h's enum), stored in each header.
inline uint8_t verify_type_number(VerifyMode m) {
  switch (m) {
    case VerifyMode::Meta: return 1;    // VERIFY_HDR_ONLY
    case VerifyMode::Md5: return 2;     // VERIFY_MD5
    case VerifyMode::Crc32: return 4;   // VERIFY_CRC32
    case VerifyMode::Crc32c: return 5;  // VERIFY_CRC32C
    case VerifyMode::Sha256: return 9;  // VERIFY_SHA256
    default: return 0;
  }
}
// verify.c __hdr_size: sizeof(struct verify_header) (48) plus the mode's
// checksum header (vhdr_crc32: 4, vhdr_md5: 16, vhdr_sha256: 64); 0 without a header.
inline uint32_t verify_header_bytes(VerifyMode m) {
  switch (m) {
    case VerifyMode::Meta: return 48;
    case VerifyMode::Crc32c:
    case VerifyMode::Crc32: return 48 + 4;
    case VerifyMode::Md5: return 48 + 16;
    case VerifyMode::Sha256: return 48 + 64;
    default: return 0;
  }
}

// verify_pattern: "0x..." bytes in the order written (an odd digit count
// gets a leading 0), a decimal number (its bytes little-endian, as many as
// it needs), or a "quoted string". Returns "" or what is wrong.
inline std::string parse_verify_pattern(const std::string& text, std::vector<uint8_t>& out) {
  out.clear();
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  if (s.empty()) return "";
  if (s.size() >= 2 && s[0] == '"' && s.back() == '"') {
    if (s.size() == 2) return "an empty string";
    out.assign(text.begin() + long(text.find('"')) + 1, text.begin() + long(text.rfind('"')));
    return "";
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    std::string h = s.substr(2);
    if (h.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return "'" + s + "' is not hex";
    if (h.size() % 2) h = "0" + h;
    if (h.size() / 2 > 512) return "longer than 512 bytes (fio's MAX_PATTERN_SIZE)";
    for (size_t i = 0; i < h.size(); i += 2) out.push_back(uint8_t(std::stoul(h.substr(i, 2), nullptr, 16)));
    return "";
  }
  if (s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19)
    return "'" + s + "' is not 0x hex, a number or a \"string\" (fio's %o format is not modelled)";
  uint64_t v = std::stoull(s);
  do {
    out.push_back(uint8_t(v));
    v >>= 8;
  } while (v);
  return "";
}
inline std::string check_verify_pattern(const std::string& t) {
  std::vector<uint8_t> p;
  return parse_verify_pattern(t, p);
}

}  // namespace fio_opt
}  // namespace nvmesim::models
