#include "nvmesim/platform/config/input_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "nvmesim/platform/cli/interrupt.h"


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

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string reason_for(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  const std::string kind = kind_of(mode);
  return kind == "not a regular file" ? "is " + kind : "is " + kind + ", not a regular file";
}

// The kernel's pseudo file systems: their files stat as regular files (size
// 0) but are made by the kernel as they are read, and some block until the
// kernel has something to say (/proc/kmsg) or never end (/sys trace pipes).
// An input file on one is refused by name rather than read.
const char* pseudo_file_system(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return nullptr;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC: return "proc";
    case SYSFS_MAGIC: return "sysfs";
    case DEBUGFS_MAGIC: return "debugfs";
    case TRACEFS_MAGIC: return "tracefs";
    case SECURITYFS_MAGIC: return "securityfs";
    case CGROUP_SUPER_MAGIC: return "cgroup";
    case CGROUP2_SUPER_MAGIC: return "cgroup2";
    case BPF_FS_MAGIC: return "bpf";
    case PSTOREFS_MAGIC: return "pstore";
    case EFIVARFS_MAGIC: return "efivarfs";
    case 0x62656570: return "configfs";  // CONFIGFS_MAGIC, not in every linux/magic.h
    case 0x65735543: return "fusectl";   // FUSE_CTL_SUPER_MAGIC
    default: return nullptr;
  }
}

// Reads an open regular file: at most max + 1 bytes (enough to know it is
// too long), the interrupt flag checked between reads.
std::string read_bounded(int fd, const std::string& what, size_t max) {
  std::string text;
  char buf[65536];
  while (text.size() <= max) {
    if (const int sig = interrupt::received())
      throw InputFileError(what + ": interrupted by " + interrupt::signal_name(sig));
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, max + 1 - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))  // kept non-blocking: a file that would block
      throw InputFileError(what + ": would block while read (not a regular file)");
    if (n < 0) throw InputFileError(what + ": read error (" + std::strerror(errno) + ")");
    if (n == 0) break;
    text.append(buf, size_t(n));
  }
  return text;
}

}  // namespace

std::string not_regular_reason(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  return reason_for(st.st_mode);
}

bool read_input_file_if_exists(const std::string& path, const std::string& what, std::string& text,
                               const InputLimits& limits) {
  if (const int sig = interrupt::received())
    throw InputFileError(what + ": interrupted by " + interrupt::signal_name(sig));
  // Non-blocking: opening a FIFO with no writer returns at once (and is
  // then refused as not a regular file) instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return false;
    if (e == EISDIR) throw InputFileError(what + ": is a directory");
    if (e == ENXIO) throw InputFileError(what + ": " + reason_for(S_IFSOCK));
    throw InputFileError(what + ": cannot open (" + std::strerror(e) + ")");
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputFileError(what + ": cannot open (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) throw InputFileError(what + ": " + reason_for(st.st_mode));
  if (const char* fs = pseudo_file_system(fd))
    throw InputFileError(what + ": is a file of the " + fs + " pseudo file system, not a regular file");
  const std::string too_long = what + ": longer than " + std::to_string(limits.max_bytes) + " bytes";
  if (uintmax_t(st.st_size) > limits.max_bytes) throw InputFileError(too_long);
  // Left non-blocking: a regular file's reads never wait, and anything that
  // would (a pseudo file the checks above missed) fails instead of hanging.
  text = read_bounded(fd, what, limits.max_bytes);
  if (text.size() > limits.max_bytes) throw InputFileError(too_long);  // it grew while read
  text = strip_bom(text);
  if (limits.check_lines) check_line_lengths(text, what);
  return true;
}

std::string read_input_file(const std::string& path, const std::string& what, const InputLimits& limits) {
  std::string text;
  if (!read_input_file_if_exists(path, what, text, limits))
    throw InputFileError(what + ": cannot open (" + std::strerror(ENOENT) + ")");
  return text;
}

}  // namespace nvmesim::platform
