#include "nvmesim/platform/sweep/sweep_runner.h"

#include "nvmesim/platform/cli/interrupt.h"

#include <cerrno>
#include <csignal>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

namespace nvmesim::platform::sweep {

namespace {

std::string point_file(const std::string& dir, size_t id, const char* ext) {
  return dir + "/points/" + std::to_string(id) + ext;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.1f s" : "%.0f s", s);
  return buf;
}

}  // namespace

std::vector<std::string> point_argv(const std::string& exe, const std::vector<std::string>& fixed,
                                    const Point& point) {
  std::vector<std::string> argv{exe};
  argv.insert(argv.end(), fixed.begin(), fixed.end());
  bool seed_axis = false;
  for (const auto& [name, value] : point.values) {
    argv.push_back("--" + name + "=" + value);
    seed_axis = seed_axis || name == "seed";
  }
  argv.push_back("--output-format=json");
  argv.push_back("--single-run");  // a point is one run, whether or not it sets nvme.dbbuf
  if (!seed_axis) argv.push_back("--seed=" + std::to_string(point.seed));
  return argv;
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(buf, size_t(n));
}

bool record_from_files(const std::string& dir, const Point& point, Record& record) {
  std::string rc, out, err;
  if (!read_file(point_file(dir, point.id, ".rc"), rc)) return false;
  read_file(point_file(dir, point.id, ".json"), out);
  read_file(point_file(dir, point.id, ".err"), err);
  int code = 1;
  try {
    code = std::stoi(rc);
  } catch (const std::exception&) {
  }
  record = make_record(point, out, err, code);
  return true;
}

void run_points(const std::vector<Point>& todo, const RunnerOptions& o, std::ostream& err,
                bool err_is_tty, const std::function<void(const Record&)>& done) {
  const auto t0 = std::chrono::steady_clock::now();
  const size_t already = o.total - todo.size();
  size_t next = 0, finished = 0, failed = 0;
  std::map<pid_t, std::pair<const Point*, std::chrono::steady_clock::time_point>> running;
  const unsigned jobs = o.jobs ? o.jobs : 1;

  auto start = [&](const Point& p) {
    const std::vector<std::string> args = point_argv(o.exe, o.fixed, p);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string out_path = point_file(o.dir, p.id, ".json");
    const std::string err_path = point_file(o.dir, p.id, ".err");
    std::remove(point_file(o.dir, p.id, ".rc").c_str());
    std::cout.flush();
    err.flush();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      const int in = ::open("/dev/null", O_RDONLY);
      const int fo = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int fe = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || fo < 0 || fe < 0) _exit(126);
      ::dup2(in, 0);
      ::dup2(fo, 1);
      ::dup2(fe, 2);
      ::execv(argv[0], argv.data());
      std::fprintf(stderr, "nvmesim sweep: cannot run %s: %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    interrupt::add_child(pid);
    running[pid] = {&p, std::chrono::steady_clock::now()};
  };

  while (next < todo.size() || !running.empty()) {
    // After SIGINT/SIGTERM/SIGHUP no point starts; the running ones got the signal.
    while (!interrupt::received() && next < todo.size() && running.size() < jobs) start(todo[next++]);
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const Point& p = *it->second.first;
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.second).count();
    running.erase(it);
    interrupt::remove_child(pid);
    // The shell's convention, so local and emitted runs record the same code.
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    // A point cut short by the signal is not a result: no record, no .rc
    // file, so --resume runs it again.
    if (interrupt::received() && (code == 128 + SIGINT || code == 128 + SIGTERM || code == 128 + SIGHUP)) continue;
    {
      FILE* rc = std::fopen(point_file(o.dir, p.id, ".rc").c_str(), "w");
      if (rc) {
        std::fprintf(rc, "%d\n", code);
        std::fclose(rc);
      }
    }
    Record r;
    if (!record_from_files(o.dir, p, r)) r = make_record(p, "", "cannot write the point's .rc file", code);
    ++finished;
    if (r.status != "ok") ++failed;
    done(r);

    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double left = elapsed / double(finished) * double(todo.size() - finished);
    const std::string counts = std::to_string(already + finished) + "/" + std::to_string(o.total) +
                               " done, " + std::to_string(failed) + " failed";
    const std::string eta = finished < todo.size() ? ", ~" + seconds(left) + " left" : "";
    if (err_is_tty) {
      if (r.status != "ok") err << "\r\033[K" << "sweep: " << point_label(p.values) << ": " << r.error << "\n";
      err << "\r\033[K" << "sweep: " << counts << eta << std::flush;
      if (finished == todo.size()) err << "\n";
    } else {
      err << "sweep: [" << counts << eta << "] " << point_label(p.values) << ": " << r.status
          << (r.status == "ok" ? "" : " (" + r.error + ")") << " in " << seconds(took) << "\n";
    }
  }
}

}  // namespace nvmesim::platform::sweep
