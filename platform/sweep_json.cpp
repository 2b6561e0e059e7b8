#include "platform/sweep_json.h"

#include <cstdio>
#include <cstring>

namespace nvmesim::platform::sweep {

Json Json::string(std::string s) {
  Json j;
  j.kind = String;
  j.text = std::move(s);
  return j;
}

Json Json::number(std::string literal) {
  Json j;
  j.kind = Number;
  j.text = std::move(literal);
  return j;
}

const Json* Json::find(const std::string& key) const {
  for (const auto& f : fields)
    if (f.first == key) return &f.second;
  return nullptr;
}

namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  Json document() {
    Json v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw JsonError("offset " + std::to_string(pos_) + ": " + what);
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n'))
      ++pos_;
  }
  bool eat(char c) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool literal(const char* word) {
    const size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  Json value(int depth) {
    if (depth > 200) fail("nested too deeply");
    skip_ws();
    if (pos_ >= s_.size()) fail("unexpected end of text");
    Json v;
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = Json::Object;
      if (eat('}')) return v;
      do {
        skip_ws();
        if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key");
        std::string key = string_body();
        expect(':');
        v.fields.emplace_back(std::move(key), value(depth + 1));
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++pos_;
      v.kind = Json::Array;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Json::String;
      v.text = string_body();
    } else if (literal("true")) {
      v.kind = Json::Bool;
      v.boolean = true;
    } else if (literal("false")) {
      v.kind = Json::Bool;
    } else if (literal("null")) {
      v.kind = Json::Null;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::Number;
      v.text = number_text();
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    return v;
  }

  // RFC 8259 number grammar; the literal is kept as text.
  std::string number_text() {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      if (pos_ == d) fail("bad number");
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0')
      ++pos_;
    else
      digits();
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      digits();
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      digits();
    }
    return s_.substr(start, pos_ - start);
  }

  unsigned hex4() {
    if (pos_ + 4 > s_.size()) fail("short \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[pos_++];
      v <<= 4;
      if (h >= '0' && h <= '9') v |= unsigned(h - '0');
      else if (h >= 'a' && h <= 'f') v |= unsigned(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= unsigned(h - 'A' + 10);
      else fail("bad \\u escape");
    }
    return v;
  }

  static void utf8(std::string& o, unsigned cp) {
    if (cp < 0x80) {
      o += char(cp);
    } else if (cp < 0x800) {
      o += char(0xC0 | (cp >> 6));
      o += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      o += char(0xE0 | (cp >> 12));
      o += char(0x80 | ((cp >> 6) & 0x3F));
      o += char(0x80 | (cp & 0x3F));
    } else {
      o += char(0xF0 | (cp >> 18));
      o += char(0x80 | ((cp >> 12) & 0x3F));
      o += char(0x80 | ((cp >> 6) & 0x3F));
      o += char(0x80 | (cp & 0x3F));
    }
  }

  std::string string_body() {
    ++pos_;  // opening quote
    std::string o;
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return o;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        o += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': o += '"'; break;
        case '\\': o += '\\'; break;
        case '/': o += '/'; break;
        case 'b': o += '\b'; break;
        case 'f': o += '\f'; break;
        case 'n': o += '\n'; break;
        case 'r': o += '\r'; break;
        case 't': o += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
            pos_ += 2;
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(o, cp);
          break;
        }
        default: fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

void write(const Json& v, std::string& o) {
  switch (v.kind) {
    case Json::Null: o += "null"; break;
    case Json::Bool: o += v.boolean ? "true" : "false"; break;
    case Json::Number: o += v.text; break;
    case Json::String: o += json_quote(v.text); break;
    case Json::Array:
      o += '[';
      for (size_t k = 0; k < v.items.size(); ++k) {
        if (k) o += ',';
        write(v.items[k], o);
      }
      o += ']';
      break;
    case Json::Object:
      o += '{';
      for (size_t k = 0; k < v.fields.size(); ++k) {
        if (k) o += ',';
        o += json_quote(v.fields[k].first);
        o += ':';
        write(v.fields[k].second, o);
      }
      o += '}';
      break;
  }
}

}  // namespace

Json parse_json(const std::string& text) { return Parser(text).document(); }

std::string json_quote(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    switch (ch) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(ch));
          o += buf;
        } else {
          o += ch;
        }
    }
  }
  return o + "\"";
}

std::string to_json(const Json& value) {
  std::string o;
  write(value, o);
  return o;
}

void flatten(const Json& v, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  auto join = [&](const std::string& key) { return prefix.empty() ? key : prefix + "." + key; };
  switch (v.kind) {
    case Json::Null: out.emplace_back(prefix, ""); break;
    case Json::Bool: out.emplace_back(prefix, v.boolean ? "true" : "false"); break;
    case Json::Number:
    case Json::String: out.emplace_back(prefix, v.text); break;
    case Json::Array:
      for (size_t k = 0; k < v.items.size(); ++k) flatten(v.items[k], join(std::to_string(k)), out);
      break;
    case Json::Object:
      for (const auto& f : v.fields) flatten(f.second, join(f.first), out);
      break;
  }
}

}  // namespace nvmesim::platform::sweep
