#include "nvmesim/platform/report/pending_file.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "nvmesim/platform/config/user_text.h"

namespace nvmesim::platform {

namespace {

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The name a chain of symbolic links ends at, followed even when the last
// one dangles (its target does not exist yet): the file that will be written.
std::string follow_links(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    char target[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
    if (n <= 0) return path;
    target[n] = '\0';
    path = target[0] == '/' ? std::string(target) : folder_of(path) + "/" + target;
  }
  return path;
}

// The file a name designates: the real path of its folder plus its last
// component (which need not exist yet), following symbolic links (a
// dangling one too).
std::string resolved_name(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;  // exists
  const std::string target = follow_links(path);
  if (::realpath(folder_of(target).c_str(), buf)) return std::string(buf) + "/" + base_of(target);
  return target;
}

}  // namespace

PendingFile::~PendingFile() {
  if (!temp_.empty() && !committed_ && !direct_) ::unlink(temp_.c_str());
}

std::string PendingFile::create(const std::string& path) {
  struct stat st {};
  path_ = path;
  bool exists = false;
  if (::stat(path.c_str(), &st) != 0 && errno == ELOOP) return std::strerror(ELOOP);
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "is a directory";
    // /dev/null, /dev/stdout, a FIFO: written in place (renaming over one
    // would replace the device with a regular file).
    if (!S_ISREG(st.st_mode)) {
      direct_ = true;
      temp_ = path;
      return "";
    }
    // A symbolic link stays one: the file it names is replaced.
    char real[PATH_MAX];
    if (::realpath(path.c_str(), real)) path_ = real;
    // A file the user may not write is not replaced either (open(2) would
    // refuse it; rename(2) would not ask).
    if (::access(path.c_str(), W_OK) != 0) return std::strerror(errno);
    exists = true;
  } else {
    // A dangling symbolic link stays one too: the file it names is created.
    path_ = follow_links(path);
  }
  std::string name = folder_of(path_) + "/." + base_of(path_) + ".XXXXXX";
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back('\0');
  const int fd = ::mkstemp(buf.data());
  if (fd < 0) return std::strerror(errno);
  // mkstemp makes the file 0600; give it the mode open(2) would have: the
  // replaced file's own mode (and owner, when allowed), else 0666 less the
  // umask.
  if (exists) {
    ::fchmod(fd, st.st_mode & 07777);
    if (::fchown(fd, st.st_uid, st.st_gid) != 0) {
      // Not allowed (another owner): the file becomes the user's, as a copy would.
    }
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
  }
  ::close(fd);
  temp_ = buf.data();
  return "";
}

std::string PendingFile::commit() {
  if (direct_) return "";
  if (::rename(temp_.c_str(), path_.c_str()) != 0) return std::strerror(errno);
  committed_ = true;
  return "";
}

std::string output_path_problem(const std::string& path) {
  struct stat st {};
  // A loop of symbolic links (or a chain longer than the kernel follows)
  // names no file: refused, not replaced by a regular file.
  if (::stat(path.c_str(), &st) != 0 && errno == ELOOP) return std::strerror(ELOOP);
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "is a directory";
    if (!S_ISREG(st.st_mode)) return "";
    if (::access(path.c_str(), W_OK) != 0) return std::strerror(errno);  // read-only: not replaced
  }
  // A new file (or the temporary file beside an existing one) goes in the
  // folder of the file a (possibly dangling) link names.
  std::string folder = folder_of(follow_links(path));
  char real[PATH_MAX];
  if (::stat(path.c_str(), &st) == 0 && ::realpath(path.c_str(), real)) folder = folder_of(real);
  if (::stat(folder.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return std::strerror(ENOTDIR);
  if (::access(folder.c_str(), W_OK | X_OK) != 0) return std::strerror(errno);
  return "";
}

std::string same_output_files(const std::vector<std::pair<std::string, std::string>>& outputs) {
  return clashing_files({}, outputs);
}

std::string clashing_files(const NamedFiles& inputs, const NamedFiles& outputs) {
  struct Seen {
    std::string option, name, resolved;
    bool exists, input;
    dev_t dev;
    ino_t ino;
  };
  std::vector<Seen> seen;
  auto clash = [](const Seen& o, const Seen& s) {
    return o.resolved == s.resolved || (o.exists && s.exists && o.dev == s.dev && o.ino == s.ino);
  };
  for (const bool input : {true, false})
    for (const auto& [option, name] : input ? inputs : outputs) {
      if (name.empty()) continue;
      Seen s{option, name, resolved_name(name), false, input, 0, 0};
      struct stat st {};
      if (::stat(name.c_str(), &st) == 0) {
        if (!input && S_ISCHR(st.st_mode)) continue;  // /dev/null twice is fine: nothing to mix up
        s.exists = true, s.dev = st.st_dev, s.ino = st.st_ino;
      }
      if (!input)
        for (const Seen& o : seen)
          if (clash(o, s))
            return o.option + " and " + s.option + ": " +
                   (o.name == s.name ? "both name " + quoted(o.name)
                                     : quoted(o.name) + " and " + quoted(s.name) + " are the same file") +
                   (o.input ? "; an output may not replace an input, give another file" : "; give two files");
      seen.push_back(s);
    }
  return "";
}

}  // namespace nvmesim::platform
