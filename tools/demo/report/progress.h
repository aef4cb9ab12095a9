// The demo's progress bars: a bar redrawn in place on a terminal; a line at every quarter
// otherwise (logs, CI, the test, which reads those lines).
#pragma once

#include <string>

namespace webhooks::demo {

class Progress {
 public:
  // `enabled`: false for --no-progress (nothing is printed).
  Progress(std::string label, bool enabled);

  // `done` of `total` units, with a note after the bar.
  void update(int done, int total, const std::string& note = "");
  // The last line: the label and `note`.
  void finish(const std::string& note);

 private:
  std::string label_;
  bool enabled_, tty_;
  int last_quarter_ = -1;
};

}  // namespace webhooks::demo
