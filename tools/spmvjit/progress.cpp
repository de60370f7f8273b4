// The progress line: '\r' + text, at most every 100 ms; erased with spaces (any terminal).
#include "tools/spmvjit/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace spmvjit::cli {
namespace {

constexpr auto kInterval = std::chrono::milliseconds(100);

bool stderr_is_terminal() {
  static const bool tty = ::isatty(STDERR_FILENO) == 1;
  return tty;
}

// The terminal's width, 0 when stderr is not one (or it does not say).
size_t terminal_columns() {
  if (!stderr_is_terminal()) return 0;
  struct winsize w {};
  return ::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 ? size_t(w.ws_col) : 0;
}

void write_stderr(const std::string& s) {
  std::fputs(s.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

bool progress_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("SPMVJIT_PROGRESS");
    if (e && !std::strcmp(e, "1")) return true;
    if (e && !std::strcmp(e, "0")) return false;
    return stderr_is_terminal();
  }();
  return on;
}

void Progress::update(const std::string& text) {
  if (!on_) return;
  std::unique_lock lock(mu_);
  if (finished_) return;
  text_ = text;
  if (shown_.empty() || Clock::now() - last_ >= kInterval) {
    draw(lock);
  } else if (!ticker_.joinable()) {
    ticker_ = std::thread([this] { tick(); });
  }
}

void Progress::draw(std::unique_lock<std::mutex>&) {
  // A line wider than the terminal would wrap, and '\r' returns to the start of its last row only:
  // cut at the front, since the counts are at the end.
  std::string text = text_;
  if (const size_t cols = terminal_columns(); cols > 8 && text.size() >= cols)
    text = "..." + text.substr(text.size() - (cols - 4));
  if (text == shown_) return;
  // '\r' first; spaces over what a longer line left, then the text again.
  std::string line = "\r" + text;
  if (text.size() < shown_.size()) line += std::string(shown_.size() - text.size(), ' ') + "\r" + text;
  write_stderr(line);
  shown_ = text;
  last_ = Clock::now();
}

void Progress::tick() {
  std::unique_lock lock(mu_);
  while (!finished_) {
    wake_.wait_for(lock, kInterval / 2);
    if (!finished_ && !text_.empty() && text_ != shown_ && Clock::now() - last_ >= kInterval) draw(lock);
  }
}

void Progress::end_line() {
  if (shown_.empty()) return;
  // A terminal gets the line erased; a file or pipe (SPMVJIT_PROGRESS=1) keeps it, ended.
  write_stderr(stderr_is_terminal() ? "\r" + std::string(shown_.size(), ' ') + "\r" : "\n");
  shown_.clear();
}

void Progress::clear() {
  if (!on_) return;
  std::lock_guard lock(mu_);
  end_line();
  text_.clear();
}

void Progress::done() {
  if (!on_) return;
  {
    std::unique_lock lock(mu_);
    if (finished_) return;
    finished_ = true;
    if (!stderr_is_terminal() && !text_.empty()) draw(lock);  // the last state, for the log
    end_line();
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

std::string progress_bytes(uint64_t done, uint64_t total) {
  // One unit for both numbers, chosen by the total.
  const bool mb = total >= 1000000;
  const double unit = mb ? 1e6 : 1e3;
  char buf[64];
  std::snprintf(buf, sizeof buf, mb ? "%.1f / %.1f MB" : "%.0f / %.0f KB", double(done) / unit,
                double(total) / unit);
  return buf;
}

std::string bench_step(size_t matrix, size_t matrices, const std::string& name, size_t format, size_t formats,
                       const std::string& what) {
  std::string s =
      "bench: matrix " + std::to_string(matrix + 1) + "/" + std::to_string(matrices) + " " + name + ", ";
  if (formats > 0) s += "format " + std::to_string(format + 1) + "/" + std::to_string(formats) + " ";
  return s + what;
}

}  // namespace spmvjit::cli
