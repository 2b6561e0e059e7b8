// A choice parameter's text to its enum value, through the enum's table
// (firmware/sim/enum_table.h), with the user's one-line error.
#pragma once

#include <string>

#include "nvmesim/firmware/sim/enum_table.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform {

// The value named `text` for parameter `name`; otherwise ConfigError
// "--name: 'text' is not one of a, b, c" (as Config::set says it).
template <class E, size_t N>
E parse_choice(const fw::EnumEntry<E> (&table)[N], const std::string& name, const std::string& text) {
  if (const fw::EnumEntry<E>* e = fw::enum_find(table, text)) return e->value;
  throw ConfigError("--" + name + ": " + quoted(text) + " is not one of " + fw::enum_names(table));
}

}  // namespace nvmesim::platform
