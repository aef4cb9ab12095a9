// Shared parts of bench_orders (orders_bench.cc): orders-api as a child process, its requests; the
// bytes per idempotency record of its orders (orders_bench_size.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "http_load.h"
#include "webhooks/launcher/child_process.h"

namespace orders_bench {

// orders-api as a child process (webhooks::launcher) on `db`, API key `bench` of merchant `m1`,
// stopped with SIGTERM. Throws webhooks::launcher::Error, with the end of its log, when it does
// not start listening.
std::unique_ptr<webhooks::launcher::ChildProcess> start_orders_api(const std::string& db,
                                                                   const std::string& dir,
                                                                   const std::string& label);

// The body of order `i` as a merchant sends it to POST /orders:
// {"amount":<1000+i>,"currency":"EUR","reference":"inv-<i>"}.
std::string order_body(int i);

// `count` POST /orders of merchant m1 with Idempotency-Key `prefix`<i>.
std::vector<bench::HttpRequest> orders(const std::string& prefix, int count);

// Sends `count` new orders (random UUIDv4 keys) through a fresh orders-api on a fresh SQLite file
// in `dir`, stops it, and prints the bytes its idempotency records take (dbstat), per structure
// and per column. Returns false when an order was not answered 201.
bool bytes_per_record(const std::string& dir, int count);

}  // namespace orders_bench
