// Small helpers for writing JSON text by hand (deterministic formatting).
#pragma once

#include <cstdio>
#include <string>

namespace nvmesim::platform {

// A JSON string literal: quotes, backslashes and control characters escaped.
inline std::string json_quoted(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      o += buf;
      continue;
    }
    o += ch;
  }
  return o + "\"";
}

}  // namespace nvmesim::platform
