// One progress line on stderr, rewritten in place: on when stderr is a terminal, off otherwise;
// $SPMVJIT_PROGRESS=1 forces it on, =0 off. When off nothing at all is written.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace spmvjit::cli {

// Whether progress lines are shown (decided once per process).
bool progress_enabled();

// Thread-safe: warmup's compile threads report through one. The line is drawn at most every
// 100 ms; a text given sooner is drawn by a helper thread when its turn comes, so the line never
// shows a stale step for long.
class Progress {
 public:
  Progress() : on_(progress_enabled()) {}
  ~Progress() { done(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool on() const { return on_; }
  // The current state, e.g. "bench: matrix 1/3 poisson2d, format 2/14 csr".
  void update(const std::string& text);
  // Erases the line before other output goes to the terminal (when stderr is not a terminal,
  // ends it with a newline instead); the next update draws again.
  void clear();
  // The end: a terminal's line is erased, a file or pipe gets the last state and a newline. Later
  // updates are ignored.
  void done();

 private:
  using Clock = std::chrono::steady_clock;
  void draw(std::unique_lock<std::mutex>& lock);  // text_ now, under mu_
  void end_line();                                // under mu_
  void tick();                                    // the helper thread

  const bool on_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::thread ticker_;
  bool finished_ = false;
  std::string text_;   // the latest state
  std::string shown_;  // what the line shows ("" when none)
  Clock::time_point last_{};
};

// "12.3 / 456.7 MB" ("3 / 12 KB" below a megabyte)
std::string progress_bytes(uint64_t done, uint64_t total);
// A bench step, from 0-based indices: "bench: matrix 2/5 NAME, format 3/14 WHAT"; formats == 0
// leaves the format's numbers out ("bench: matrix 2/5 NAME, peers").
std::string bench_step(size_t matrix, size_t matrices, const std::string& name, size_t format, size_t formats,
                       const std::string& what);

}  // namespace spmvjit::cli
