// The consoles' stylesheet and script (console/assets/), compiled into the library by CMake
// (cmake/EmbedAssets.cmake): no file is read at run time and nothing comes from the network.
#pragma once

#include <string_view>

#include "webhooks/http_server.h"

namespace webhooks::console {

std::string_view stylesheet();  // console/assets/console.css
std::string_view script();      // console/assets/console.js

// Registers GET /console/assets/console.css (text/css) and /console/assets/console.js
// (text/javascript), each with Cache-Control: public, max-age=3600 and an ETag (a hash of its
// content); a request whose If-None-Match is that ETag answers 304 without a body. No session is
// needed (the files hold no data).
void mount_assets(http::Server& server);

}  // namespace webhooks::console
