// User input echoed in error messages.
//
// Every error that shows a value, name or line the user gave goes through
// quoted()/shown(): the text is cut at kShownMax bytes (at a UTF-8 character
// boundary; "..." and the full length follow) and control bytes are escaped
// as \xNN, so a 1 MB value prints one short line and an ANSI escape sequence
// in a config file cannot repaint the terminal.
#pragma once

#include <cstddef>
#include <string>

namespace nvmesim::platform {

constexpr size_t kShownMax = 80;

// The text made safe to print: control bytes (below 0x20, 0x7f) as \xNN,
// cut after kShownMax bytes of input with "... (N bytes)" appended.
std::string shown(const std::string& text);
// shown(text) in single quotes.
std::string quoted(const std::string& text);

}  // namespace nvmesim::platform
