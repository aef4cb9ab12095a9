#include "webhooks/console/chart.h"

#include <catch2/catch.hpp>

using webhooks::console::Chart;
using webhooks::console::format_number;
using webhooks::console::render_chart;

TEST_CASE("format_number prints at most two decimals without trailing zeros") {
  CHECK(format_number(0) == "0");
  CHECK(format_number(2) == "2");
  CHECK(format_number(1.5) == "1.5");
  CHECK(format_number(1.0 / 3) == "0.33");
  CHECK(format_number(-0.001) == "0");
  CHECK(format_number(1234567) == "1234567");
  CHECK(format_number(0.0 / 0.0) == "0");
}

TEST_CASE("a bar chart of fixed values renders exactly, labels escaped") {
  Chart chart;
  chart.id = "chart-x";
  chart.title = "Deliveries <per> \"s\"";
  chart.values = {0, 2, 4, -1};
  chart.first_label = "-4 min";
  chart.last_label = "now & then";
  chart.unit = "/s";
  chart.width = 148;
  chart.height = 80;
  const std::string expected =
      R"(<svg id="chart-x" class="chart" viewBox="0 0 148 80" role="img" aria-label="Deliveries &lt;per&gt; &quot;s&quot;" xmlns="http://www.w3.org/2000/svg">)"
      R"(<title>Deliveries &lt;per&gt; &quot;s&quot;</title>)"
      R"(<text class="chart-title" x="48" y="12">Deliveries &lt;per&gt; &quot;s&quot;</text>)"
      R"(<g class="axes"><line x1="48" y1="20" x2="48" y2="60"/><line x1="48" y1="60" x2="140" y2="60"/>)"
      R"(<text class="y-max" x="44" y="24" text-anchor="end">4/s</text>)"
      R"(<text class="y-min" x="44" y="60" text-anchor="end">0</text>)"
      R"(<text class="x-first" x="48" y="76">-4 min</text>)"
      R"(<text class="x-last" x="140" y="76" text-anchor="end">now &amp; then</text></g>)"
      R"(<g class="series">)"
      R"(<rect x="48" y="60" width="23" height="0"><title>0/s</title></rect>)"
      R"(<rect x="71" y="40" width="23" height="20"><title>2/s</title></rect>)"
      R"(<rect x="94" y="20" width="23" height="40"><title>4/s</title></rect>)"
      R"(<rect x="117" y="60" width="23" height="0"><title>0/s</title></rect>)"
      R"(</g></svg>)";
  CHECK(render_chart(chart) == expected);
}

TEST_CASE("a line chart has a polyline through the middle of each slot; empty draws axes only") {
  Chart chart;
  chart.id = "c";
  chart.values = {1, 0};
  chart.kind = Chart::Kind::line;
  chart.width = 148;
  chart.height = 80;
  const std::string svg = render_chart(chart);
  CHECK(svg.find(R"(<polyline points="71,20 117,60"/>)") != std::string::npos);
  CHECK(svg.find(R"(<rect x="48" y="20" width="46" height="40" class="hover"><title>1</title>)") !=
        std::string::npos);
  chart.values.clear();
  const std::string empty = render_chart(chart);
  CHECK(empty.find("<g class=\"series\">") == std::string::npos);
  CHECK(empty.find(R"(<text class="y-max" x="44" y="24" text-anchor="end">0</text>)") !=
        std::string::npos);
}
