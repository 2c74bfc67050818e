#include "cli/status_line.h"

#include <fmt/format.h>

#include "util/time.h"

namespace kfpbench::cli {

// spdlog sinks carry their own lock; the screen's lock orders the status
// line's redraws and the log lines between them.
class StatusLine::Sink : public spdlog::sinks::sink {
 public:
  Sink(std::shared_ptr<Screen> screen, spdlog::sink_ptr inner)
      : screen_(std::move(screen)), inner_(std::move(inner)) {}

  void log(const spdlog::details::log_msg& msg) override {
    if (!inner_->should_log(msg.level)) return;
    std::lock_guard lock(screen_->mu);
    if (screen_->line.empty()) {
      inner_->log(msg);
      return;
    }
    std::fputs("\r\033[K", screen_->out);
    std::fflush(screen_->out);
    inner_->log(msg);
    inner_->flush();
    std::fprintf(screen_->out, "%s\033[K", screen_->line.c_str());
    std::fflush(screen_->out);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<Screen> screen_;
  spdlog::sink_ptr inner_;
};

StatusLine::StatusLine(bool quiet, std::FILE* out, bool terminal)
    : quiet_(quiet), terminal_(terminal), screen_(std::make_shared<Screen>()) {
  screen_->out = out;
}

std::string StatusLine::Format(const results::Progress& p) {
  // Past the planned time the load has stopped and runs in flight are
  // awaited: say so rather than let the clock run past its total.
  bool draining = p.elapsed > p.planned;
  return fmt::format(
      "[{}{:>5.0f}s/{:.0f}s] runs {} created, {} done{} | API {} calls, {} errors, p99 {}",
      draining ? "draining " : "", ToSeconds(p.elapsed), ToSeconds(p.planned), p.runs_created,
      p.runs_finished, p.runs_refused ? fmt::format(", {} refused", p.runs_refused) : "",
      p.api_calls, p.api_errors, FormatDuration(std::chrono::microseconds(p.p99_us)));
}

void StatusLine::Show(const results::Progress& p) {
  if (quiet_) return;
  ++ticks_;
  if (!terminal_ && ticks_ % 10 != 0) return;
  std::string line = Format(p);
  std::lock_guard lock(screen_->mu);
  if (terminal_) {
    std::fprintf(screen_->out, "\r%s\033[K", line.c_str());
    screen_->line = std::move(line);
  } else {
    std::fprintf(screen_->out, "%s\n", line.c_str());
  }
  std::fflush(screen_->out);
}

void StatusLine::Done() {
  std::lock_guard lock(screen_->mu);
  if (screen_->line.empty()) return;
  std::fputs("\n", screen_->out);
  std::fflush(screen_->out);
  screen_->line.clear();
}

spdlog::sink_ptr StatusLine::Wrap(spdlog::sink_ptr inner) {
  return std::make_shared<Sink>(screen_, std::move(inner));
}

}  // namespace kfpbench::cli
