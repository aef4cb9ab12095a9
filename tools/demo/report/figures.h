// What the demo counted: per event (from the merchant and the publisher) and for the whole run
// (the table, the JSON summary and the checks read these).
#pragma once

#include <string>
#include <vector>

#include "driver.h"

namespace webhooks::demo {

// What the publisher recorded about one event the merchant saw.
struct EventRecord {
  std::string event_id, type, subject_id;  // subject_id: data.id (the order or payout)
  int calls = 0, effects = 0;              // at the merchant
  int attempts = 0, retries = 0, ok_answers = 0, in_progress_answers = 0, failed_answers = 0,
      no_answers = 0, manual = 0;
  std::vector<std::string> task_states;
};

struct Figures {
  int orders_requested = 0, payouts_requested = 0;
  DriverStats client;
  int orders_created = 0, payouts_created = 0;
  long events_accepted = 0;
  int attempts = 0, retries = 0, failed_answers = 0, no_answers = 0, in_progress_answers = 0;
  int events_handled = 0, events_one_effect = 0, handler_calls = 0;
  int duplicates_after_success = 0, duplicates_suppressed = 0, operator_replays = 0;
  int receiver_crashes = 0, receiver_restarts = 0;
  int partner_drops = 0, transfers = 0, payouts_one_transfer = 0;
  int reconcile_exit = -1;
  std::string reconcile_result, reconcile_detail;
  // The immature-partner phase (immature.cc): payouts doubled, duplicates the first reconcile
  // found, `reconcile --resolve`'s exit code, then the last reconcile's exit code, reversed count
  // and result.
  int immature_payouts = 0, immature_duplicates = -1, immature_resolve_exit = -1,
      immature_reconcile_exit = -1, immature_reversed = -1;
  std::string immature_result;
  double load_seconds = 0, delivery_seconds = 0, stop_seconds = 0, total_seconds = 0;
};

}  // namespace webhooks::demo
