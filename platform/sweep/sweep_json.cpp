#include "nvmesim/platform/sweep/sweep_json.h"

#include <nlohmann/json.hpp>

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

// nlohmann/json's SAX parser builds the tree: it reports every float with
// its literal text, and an integer's text is its decimal value (JSON allows
// no other spelling but "-0", read as 0), so numbers keep their text.
class TreeBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  Json root;

  bool null() override { return put(Json()); }
  bool boolean(bool b) override {
    Json j;
    j.kind = Json::Bool;
    j.boolean = b;
    return put(std::move(j));
  }
  bool number_integer(number_integer_t v) override { return put(Json::number(std::to_string(v))); }
  bool number_unsigned(number_unsigned_t v) override { return put(Json::number(std::to_string(v))); }
  bool number_float(number_float_t, const string_t& literal) override { return put(Json::number(literal)); }
  bool string(string_t& s) override { return put(Json::string(s)); }
  bool binary(binary_t&) override { return false; }  // not in JSON text
  bool start_object(std::size_t) override {
    stack_.push_back(place(Json::object()));
    return true;
  }
  bool key(string_t& k) override {
    stack_.back()->fields.emplace_back(k, Json());
    return true;
  }
  bool end_object() override { return pop(); }
  bool start_array(std::size_t) override {
    Json a;
    a.kind = Json::Array;
    stack_.push_back(place(std::move(a)));
    return true;
  }
  bool end_array() override { return pop(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    // ex.what(): "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
    std::string what = ex.what();
    if (const size_t colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
    throw JsonError("offset " + std::to_string(position ? position - 1 : 0) + ": " + what);
  }

 private:
  // Where the next value goes: the root, the open array's next item, or the
  // open object's last key.
  Json* place(Json v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Json& top = *stack_.back();
    if (top.kind == Json::Array) {
      top.items.push_back(std::move(v));
      return &top.items.back();
    }
    top.fields.back().second = std::move(v);
    return &top.fields.back().second;
  }
  bool put(Json v) {
    place(std::move(v));
    return true;
  }
  bool pop() {
    stack_.pop_back();
    return true;
  }
  // Pointers into the tree stay valid: a container's children are only
  // appended while it is the innermost open one.
  std::vector<Json*> stack_;
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

Json parse_json(const std::string& text) {
  TreeBuilder builder;
  nlohmann::json::sax_parse(text, &builder);
  return std::move(builder.root);
}

std::string json_quote(const std::string& s) {
  // Bytes that are not UTF-8 (a path or message as the system gave it)
  // become U+FFFD: JSON text is UTF-8.
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
