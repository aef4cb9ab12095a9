#include "webhooks/console/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "webhooks/console/html.h"

namespace webhooks::console {
namespace {

// The plot area inside the viewBox: room for the y labels on the left, the title on top and the
// x labels below.
constexpr double kLeft = 48, kTop = 20, kRight = 8, kBottom = 20;

std::string attr(const char* name, double value) {
  return std::string(" ") + name + "=\"" + format_number(value) + "\"";
}

std::string axes(const Chart& c, double max, double right, double bottom) {
  std::string out = "<g class=\"axes\">";
  out += "<line" + attr("x1", kLeft) + attr("y1", kTop) + attr("x2", kLeft) + attr("y2", bottom) +
         "/>";
  out += "<line" + attr("x1", kLeft) + attr("y1", bottom) + attr("x2", right) + attr("y2", bottom) +
         "/>";
  out += "<text class=\"y-max\"" + attr("x", kLeft - 4) + attr("y", kTop + 4) +
         " text-anchor=\"end\">" + escape_html(format_number(max) + c.unit) + "</text>";
  out += "<text class=\"y-min\"" + attr("x", kLeft - 4) + attr("y", bottom) +
         " text-anchor=\"end\">0</text>";
  out += "<text class=\"x-first\"" + attr("x", kLeft) + attr("y", c.height - 4) + ">" +
         escape_html(c.first_label) + "</text>";
  out += "<text class=\"x-last\"" + attr("x", right) + attr("y", c.height - 4) +
         " text-anchor=\"end\">" + escape_html(c.last_label) + "</text>";
  return out + "</g>";
}

std::string series(const Chart& c, double max, double right, double bottom) {
  const std::size_t n = c.values.size();
  if (n == 0) return "";
  const double step = (right - kLeft) / static_cast<double>(n);
  const double plot = bottom - kTop;
  auto y_of = [&](double v) { return bottom - (max > 0 ? std::max(v, 0.0) / max * plot : 0.0); };
  std::string out = "<g class=\"series\">";
  if (c.kind == Chart::Kind::line) {
    out += "<polyline points=\"";
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) out += ' ';
      out += format_number(kLeft + step * (static_cast<double>(i) + 0.5)) + "," +
             format_number(y_of(c.values[i]));
    }
    out += "\"/>";
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double x = kLeft + step * static_cast<double>(i);
    const double y = y_of(c.values[i]);
    out += "<rect" + attr("x", x) + attr("y", c.kind == Chart::Kind::bars ? y : kTop) +
           attr("width", step) + attr("height", c.kind == Chart::Kind::bars ? bottom - y : plot) +
           (c.kind == Chart::Kind::line ? " class=\"hover\"" : "") + "><title>" +
           escape_html(format_number(std::max(c.values[i], 0.0)) + c.unit) + "</title></rect>";
  }
  return out + "</g>";
}

}  // namespace

std::string format_number(double value) {
  if (!std::isfinite(value)) return "0";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  if (text == "-0") text = "0";
  return text;
}

std::string render_chart(const Chart& c) {
  double max = 0;
  for (const double v : c.values) max = std::max(max, std::isfinite(v) ? v : 0.0);
  const double right = c.width - kRight, bottom = c.height - kBottom;
  std::string out = "<svg id=\"" + escape_html(c.id) + "\" class=\"chart\" viewBox=\"0 0 " +
                    std::to_string(c.width) + " " + std::to_string(c.height) +
                    "\" role=\"img\" aria-label=\"" + escape_html(c.title) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\">";
  out += "<title>" + escape_html(c.title) + "</title>";
  out += "<text class=\"chart-title\"" + attr("x", kLeft) + attr("y", 12) + ">" +
         escape_html(c.title) + "</text>";
  out += axes(c, max, right, bottom);
  out += series(c, max, right, bottom);
  return out + "</svg>";
}

}  // namespace webhooks::console
