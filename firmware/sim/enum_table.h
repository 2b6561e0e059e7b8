// One table per enum that a configuration names: each value with its text.
// The table gives to_string, the parse (enum_find), and the list of choices
// (--list-params shows them in table order), so a choice's names are written
// once, e.g.
//   inline constexpr EnumEntry<DbbufMode> dbbuf_modes[] = {
//       {DbbufMode::Off, "off"}, {DbbufMode::Spec, "spec"}, {DbbufMode::Vendor, "vendor"}};
// Plain C++ (firmware/ and models/ use it); platform/config/enum_choice.h
// turns a failed lookup into the user's one-line ConfigError.
#pragma once

#include <cstddef>
#include <string>

namespace nvmesim::fw {

template <class E>
struct EnumEntry {
  E value;
  const char* name;
};

// The name of `value` ("?" when the table lacks it, a programming error).
template <class E, size_t N>
constexpr const char* enum_name(const EnumEntry<E> (&table)[N], const E& value) {
  for (const EnumEntry<E>& e : table)
    if (e.value == value) return e.name;
  return "?";
}

// The entry named `name` (case-sensitive, as every choice), or nullptr.
template <class E, size_t N>
const EnumEntry<E>* enum_find(const EnumEntry<E> (&table)[N], const std::string& name) {
  for (const EnumEntry<E>& e : table)
    if (name == e.name) return &e;
  return nullptr;
}

// "a, b, c": the allowed names, for messages.
template <class E, size_t N>
std::string enum_names(const EnumEntry<E> (&table)[N], const char* separator = ", ") {
  std::string out;
  for (size_t i = 0; i < N; ++i) out += (i ? separator : "") + std::string(table[i].name);
  return out;
}

}  // namespace nvmesim::fw
