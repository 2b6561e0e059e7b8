#include "nvmesim/platform/report/json_out.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace nvmesim::platform::report {

namespace {

constexpr std::uint8_t RAW_SUBTYPE = 0x52;  // 'R'

bool is_raw(const Json& v) {
  return v.is_binary() && v.get_binary().has_subtype() && v.get_binary().subtype() == RAW_SUBTYPE;
}

// A raw value spanning lines (an embedded document) is not.
bool is_scalar(const Json& v) {
  if (is_raw(v)) {
    const auto& bytes = v.get_binary();
    return std::find(bytes.begin(), bytes.end(), '\n') == bytes.end();
  }
  return v.is_primitive();
}

bool fits_one_line(const Json& v, const JsonStyle& style) {
  if (!style.inline_max || v.empty() || v.size() > style.inline_max) return false;
  for (const auto& item : v)
    if (!is_scalar(item)) return false;
  return true;
}

void write(const Json& v, const JsonStyle& style, unsigned level, std::string& out) {
  if (is_raw(v)) {
    const auto& bytes = v.get_binary();
    out.append(bytes.begin(), bytes.end());
    return;
  }
  switch (v.type()) {
    case Json::value_t::object:
    case Json::value_t::array: {
      const bool object = v.is_object();
      out += object ? '{' : '[';
      if (v.empty()) {
        out += object ? '}' : ']';
        return;
      }
      const bool one_line = fits_one_line(v, style);
      const std::string pad(size_t(style.indent) * (level + 1), ' ');
      bool first = true;
      auto item = [&](const std::string* key, const Json& value) {
        out += first ? "" : ",";
        if (one_line) {
          if (!first) out += ' ';
        } else {
          out += '\n';
          out += pad;
        }
        first = false;
        if (key) {
          out += quoted(*key);
          out += style.key_separator;
        }
        write(value, style, level + 1, out);
      };
      if (object)
        for (const auto& [key, value] : v.items()) item(&key, value);
      else
        for (const auto& value : v) item(nullptr, value);
      if (!one_line) {
        out += '\n';
        out += std::string(size_t(style.indent) * level, ' ');
      }
      out += object ? '}' : ']';
      return;
    }
    case Json::value_t::string: out += quoted(v.get_ref<const std::string&>()); return;
    case Json::value_t::number_unsigned: out += std::to_string(v.get<uint64_t>()); return;
    case Json::value_t::number_integer: out += std::to_string(v.get<int64_t>()); return;
    default: out += v.dump(); return;  // null, booleans, doubles (shortest form)
  }
}

}  // namespace

Json raw(const std::string& json_text) {
  return Json::binary(Json::binary_t::container_type(json_text.begin(), json_text.end()), RAW_SUBTYPE);
}

Json fixed(double v, int decimals) {
  if (!std::isfinite(v)) return nullptr;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return raw(buf);
}

Json rate(double v) {
  if (!std::isfinite(v)) return nullptr;
  int decimals = 3;
  if (v != 0) decimals = std::max(3, 9 - int(std::floor(std::log10(std::fabs(v)))));
  return fixed(v, std::min(decimals, 30));
}

Json ns_from_ps(uint64_t ps) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03u", ps / 1000, unsigned(ps % 1000));
  return raw(buf);
}

std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(ch)));
      o += buf;
      continue;
    }
    o += ch;
  }
  return o + "\"";
}

std::string dump(const Json& value, const JsonStyle& style, unsigned level) {
  std::string out;
  write(value, style, level, out);
  return out;
}

Json stats_json(const stats::GroupValues& tree) {
  Json out = Json::object();
  auto value = [](stats::Unit unit, uint64_t v) {
    return unit == stats::Unit::Time ? ns_from_ps(v) : Json(v);
  };
  for (const stats::StatValue& s : tree.stats) {
    if (s.entries.size() == 1 && s.entries[0].first.empty()) {
      out[s.name] = value(s.unit, s.entries[0].second);
      continue;
    }
    Json entries = Json::object();
    for (const auto& [sub, v] : s.entries) entries[sub] = value(s.unit, v);
    out[s.name] = std::move(entries);
  }
  for (const stats::GroupValues& g : tree.groups) out[g.name] = stats_json(g);
  return out;
}

}  // namespace nvmesim::platform::report
