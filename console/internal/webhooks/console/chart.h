// SVG charts for the consoles' overview pages: a series of values (e.g. 60 per-minute counts) as
// an <svg> element with its axes, the largest value on the y axis and labels under the x axis.
// The output depends only on the input (numbers printed with at most 2 decimals), so tests
// compare it exactly.
#pragma once

#include <string>
#include <vector>

namespace webhooks::console {

struct Chart {
  std::string id;              // the <svg>'s id, e.g. "chart-deliveries"
  std::string title;           // shown above the plot and as <title> (escaped)
  std::vector<double> values;  // one bar (or point) each, left to right; negative counts as 0
  std::string first_label;     // under the first value, e.g. "-60 min"
  std::string last_label;      // under the last value, e.g. "now"
  std::string unit;            // after the y axis's maximum, e.g. "/s" or "%"
  enum class Kind { bars, line } kind = Kind::bars;
  int width = 600, height = 160;  // the viewBox, in SVG user units
};

// The <svg> element (escaped labels; each bar's or point's value in its <title>). An empty series
// draws the axes only; a series of zeros has a maximum of 0.
std::string render_chart(const Chart& chart);

// `value` with at most 2 decimals, trailing zeros removed ("1.5", "2", "0.33").
std::string format_number(double value);

}  // namespace webhooks::console
