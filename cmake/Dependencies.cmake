# Every dependency is a Debian 12 package installed by scripts/install-deps.
find_package(Threads REQUIRED)
find_package(OpenSSL 3 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(PostgreSQL REQUIRED)
find_package(spdlog REQUIRED)
find_package(CURL REQUIRED)
find_package(PkgConfig REQUIRED)
# Boost.Context: the fibers' stack switch (common/core/src/fiber_context.h).
find_package(Boost 1.81 EXACT REQUIRED COMPONENTS context)
# cpp-httplib 0.11 ships only a pkg-config file on Debian.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET GLOBAL cpp-httplib)
if(WEBHOOKS_BUILD_DAEMON OR WEBHOOKS_BUILD_TOOLS OR WEBHOOKS_BUILD_EXAMPLES OR WEBHOOKS_BUILD_TESTS
   OR WEBHOOKS_FUZZ)
  find_package(CLI11 REQUIRED)
endif()
if(WEBHOOKS_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
