// The demo's report: the table on stdout and the JSON summary (--summary) that tests/tools/demo
// reads.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/figures.h"

namespace webhooks::demo {

// The table of figures, the times, and OK or each failure on its own line.
void print_table(const Figures& f, const std::vector<std::string>& failures);

// The figures and failures as a JSON object in `path`; a message on stderr when it cannot be
// written.
void write_summary(const std::filesystem::path& path, const Figures& f,
                   const std::vector<std::string>& failures);

}  // namespace webhooks::demo
