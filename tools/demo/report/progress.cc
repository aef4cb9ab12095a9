#include "report/progress.h"

#include <unistd.h>

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace webhooks::demo {

Progress::Progress(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled), tty_(::isatty(STDOUT_FILENO) == 1) {}

void Progress::update(int done, int total, const std::string& note) {
  if (!enabled_ || total <= 0) return;
  done = std::clamp(done, 0, total);
  if (tty_) {
    constexpr int kWidth = 32;
    const int filled = done * kWidth / total;
    std::cout << "\r  " << std::left << std::setw(26) << label_ << " [" << std::string(filled, '#')
              << std::string(kWidth - filled, '.') << "] " << std::right << std::setw(5) << done
              << "/" << total << "  " << note << "\x1b[K" << std::flush;
  } else {
    const int quarter = done * 4 / total;
    if (quarter > last_quarter_) {
      last_quarter_ = quarter;
      std::cout << "  " << label_ << ": " << done << "/" << total
                << (note.empty() ? "" : "  " + note) << std::endl;
    }
  }
}

void Progress::finish(const std::string& note) {
  if (!enabled_) return;
  if (tty_) {
    std::cout << "\r  " << std::left << std::setw(26) << label_ << " " << note << "\x1b[K"
              << std::endl;
  } else {
    std::cout << "  " << label_ << ": " << note << std::endl;
  }
}

}  // namespace webhooks::demo
