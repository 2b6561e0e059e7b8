#include "platform/config/input_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>


namespace nvmesim::platform {

std::string strip_bom(const std::string& text) {
  return text.rfind("\xEF\xBB\xBF", 0) == 0 ? text.substr(3) : text;
}

void check_line_lengths(const std::string& text, const std::string& what) {
  size_t begin = 0, line = 1;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (end - begin > kInputLineMax)
      throw InputFileError(what + " line " + std::to_string(line) + ": longer than " +
                           std::to_string(kInputLineMax) + " bytes");
    begin = end + 1;
    ++line;
  }
}

std::string read_input_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputFileError(what + ": is a directory");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    const int e = errno;
    throw InputFileError(what + ": cannot open (" + (e ? std::strerror(e) : "unknown error") + ")");
  }
  std::string text;
  char buf[65536];
  size_t n;
  // Read at most one byte past the limit: enough to know it is too long.
  while (text.size() <= kInputFileMax &&
         (n = std::fread(buf, 1, std::min(sizeof buf, kInputFileMax + 1 - text.size()), f)) > 0)
    text.append(buf, n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) throw InputFileError(what + ": read error");
  if (text.size() > kInputFileMax)
    throw InputFileError(what + ": longer than " + std::to_string(kInputFileMax) + " bytes");
  text = strip_bom(text);
  check_line_lengths(text, what);
  return text;
}

}  // namespace nvmesim::platform
