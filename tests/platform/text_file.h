// Reading a whole file, or a text's lines, in the platform tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace nvmesim::test {

// The file's bytes; "<missing PATH>" when it cannot be opened, so a content
// check fails with the path in its message.
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<missing " + path + ">";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

}  // namespace nvmesim::test
