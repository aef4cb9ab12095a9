// The `orders-api reconcile` command: the report alone, or with --resolve the report acted on:
// each duplicate transfer reversed (key kxr-<transfer_id>, the payout's first transfer kept), each
// missing transfer re-submitted under the payout's downstream key. Every step is committed to
// `reconciliations` before the partner is called, and a run first finishes the steps an earlier
// run left planned: a run killed midway and run again reverses each duplicate exactly once.
// docs/orders-api.md, "Reconciliation".
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace webhooks::orders {

struct ReconcileOptions {
  std::string db = "./orders.db";  // SQLite path or postgres:// URL
  std::string partner_url = "http://127.0.0.1:8782";
  std::int64_t timeout_ms = 5000;  // each call to the partner (ms)
  bool resolve = false;            // act on duplicates and missing transfers
  bool dry_run = false;            // with resolve: print the plan, write nothing, call nothing
  bool json = false;               // one JSON document instead of the table and lines
  // Test hook: SIGKILL the process after this many calls to the partner in --resolve, before the
  // last call's outcome is recorded (0: right after the plan is committed); -1: never.
  int crash_after_partner_calls = -1;
};

// Exit codes of reconcile_command.
inline constexpr int kReconcileClean = 0;     // no finding left
inline constexpr int kReconcileFindings = 1;  // findings left that need a human
inline constexpr int kReconcileError = 2;     // the partner or the database could not be reached

// Runs the command, printing on `out`; returns its exit code. Throws webhooks::Error when the
// database or the partner cannot be read (the caller exits kReconcileError).
int reconcile_command(const ReconcileOptions& options, std::ostream& out);

}  // namespace webhooks::orders
