#include "nvmesim/platform/config/user_text.h"

#include <cstdio>

namespace nvmesim::platform {

std::string shown(const std::string& text) {
  size_t cut = text.size();
  if (cut > kShownMax) {
    cut = kShownMax;
    // Back up to the first byte of a UTF-8 character (not 10xxxxxx).
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  }
  std::string out;
  out.reserve(cut + 16);
  for (size_t i = 0; i < cut; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    } else {
      out += char(c);
    }
  }
  if (cut < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string quoted(const std::string& text) { return "'" + shown(text) + "'"; }

}  // namespace nvmesim::platform
