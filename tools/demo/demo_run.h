// One run of the demo (demo.h): its work directory, the four servers, the load, what it collects
// and checks. The methods live in one file per concern: demo.cc (the run's steps and the work
// directory), servers.cc (starting, supervising and stopping the servers), load.cc (the orders
// and payouts, waiting for deliveries, operator replays), collect.cc (what the servers recorded),
// verify.cc (the invariants), immature.cc (an immature partner's duplicates, resolved); report.h
// prints the table and the summary.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "demo.h"
#include "driver.h"
#include "failure.h"
#include "report/figures.h"
#include "webhooks/launcher/child_process.h"

namespace webhooks::demo {

constexpr const char* kMerchant = "merchant_demo";

// Seconds from `t` to now.
double seconds_since(Clock::time_point t);

class Demo {
 public:
  Demo(const Options& options, const std::atomic<bool>& stop);

  int run();

 private:
  using Server = std::unique_ptr<launcher::ChildProcess>;

  // Throws Interrupted after SIGINT/SIGTERM, Failure once --timeout has passed.
  void check() const;
  void prepare_work_dir();
  std::filesystem::path bin(const std::string& name) const;
  int run_steps(std::vector<std::string>& failures);

  // servers.cc
  Server launch(const std::string& name, std::vector<std::string> args);
  void start_servers();
  std::vector<std::string> publisher_args() const;
  std::vector<std::string> receiver_args(int crash_on) const;
  std::vector<std::string> orders_args() const;
  void print_servers(int crash_on) const;
  void register_endpoint();
  void supervise();
  void stop_servers(std::vector<std::string>& failures);

  // load.cc
  void drive_load();
  void wait_for_deliveries(const std::string& label, long succeeded_before = 0, int replays = 0);
  int count_handled() const;
  void operator_replay();

  // collect.cc
  void collect();
  void fetch_merchant_and_partner();
  void fetch_publisher_records();
  void count_figures();
  void reconcile();

  // immature.cc: the partner turns immature, reconcile --resolve undoes its duplicates
  void immature_phase();
  launcher::Finished run_reconcile(const std::string& name, std::vector<std::string> extra);

  // verify.cc: the invariants, one line per failure (at most 20)
  std::vector<std::string> verify() const;

  Options o_;
  const std::atomic<bool>& stop_;
  Clock::time_point started_, deadline_;
  std::filesystem::path work_;
  bool own_work_dir_ = false;
  std::string admin_token_, api_key_, secret_, endpoint_id_;
  Server publisher_, partner_, receiver_, orders_;
  int publisher_port_ = 0, partner_port_ = 0, receiver_port_ = 0, orders_port_ = 0;
  std::unique_ptr<Driver> driver_;
  std::map<std::string, EventRecord> events_;  // by event_id
  nlohmann::json handled_, transfers_;
  Figures f_;
};

}  // namespace webhooks::demo
