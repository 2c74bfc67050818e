// The live status of `run`: one line rewritten in place on a terminal, a
// plain line every ten seconds otherwise (logs, CI). Log lines written while
// it is on screen go above it instead of being glued to its end.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/sinks/sink.h>

#include "results/results.h"

namespace kfpbench::cli {

class StatusLine {
 public:
  // `terminal`: whether `out` is a terminal (rewrite in place) or a file.
  StatusLine(bool quiet, std::FILE* out, bool terminal);

  void Show(const results::Progress& p);
  // Ends the line on screen; later log lines print as usual.
  void Done();

  // A sink that writes through `inner` but, while the status line is on
  // screen, erases it first and draws it again after.
  spdlog::sink_ptr Wrap(spdlog::sink_ptr inner);

  // The status text for `p`.
  static std::string Format(const results::Progress& p);

 private:
  // What is on screen, shared with the sinks (which outlive this object).
  struct Screen {
    std::mutex mu;
    std::FILE* out;
    std::string line;  // on screen now; empty when none
  };
  class Sink;

  bool quiet_;
  bool terminal_;
  int ticks_ = 0;
  std::shared_ptr<Screen> screen_;
};

}  // namespace kfpbench::cli
