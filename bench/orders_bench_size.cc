// Bytes per idempotency record of real orders-api orders (issue 30): `count` POST /orders with
// random UUIDv4 keys through a fresh orders-api on a fresh SQLite file, then SQLite's dbstat over
// the B-trees of idempotency_records (the table and each of its indexes): the pages they take
// (pgsize: page size times pages, so the free space inside pages counts, as it does on disk),
// divided by the records; their payload alone beside it; and what each column's values take.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "orders_bench.h"
#include "webhooks/uuid.h"

namespace orders_bench {
namespace {

constexpr int kConnections = 32;
constexpr auto kBudget = std::chrono::seconds(120);  // the orders not sent by then are not

// A read-only view of a SQLite file (the server stopped), for dbstat.
class Inspector {
 public:
  explicit Inspector(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      throw std::runtime_error("cannot open " + path);
    }
  }
  ~Inspector() { sqlite3_close(db_); }
  Inspector(const Inspector&) = delete;
  Inspector& operator=(const Inspector&) = delete;

  // Each row's columns as text (NULL: "").
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      throw std::runtime_error(std::string(sqlite3_errmsg(db_)) + " in " + sql);
    }
    std::vector<std::vector<std::string>> out;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const auto* text = sqlite3_column_text(stmt, i);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(stmt);
    return out;
  }
  double number(const std::string& sql) { return std::stod(rows(sql).at(0).at(0)); }

 private:
  sqlite3* db_ = nullptr;
};

std::string random_uuid_v4(std::mt19937_64& random) {
  webhooks::UuidBytes bytes;
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    const std::uint64_t r = random();
    for (std::size_t j = 0; j < 8; ++j) bytes[i + j] = static_cast<std::uint8_t>(r >> (8 * j));
  }
  bytes[6] = static_cast<std::uint8_t>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<std::uint8_t>((bytes[8] & 0x3F) | 0x80);  // variant 10
  return webhooks::uuid_to_string(bytes);
}

// The bytes a value of column `c` takes in a SQLite record's body: a text or blob its length, an
// integer its serial type's size (0 and 1 none), NULL none.
std::string stored_bytes(const std::string& c) {
  return "CASE typeof(" + c + ") WHEN 'null' THEN 0 WHEN 'integer' THEN (CASE WHEN " + c +
         " IN (0, 1) THEN 0 WHEN " + c + " BETWEEN -128 AND 127 THEN 1 WHEN " + c +
         " BETWEEN -32768 AND 32767 THEN 2 WHEN " + c +
         " BETWEEN -8388608 AND 8388607 THEN 3 WHEN " + c +
         " BETWEEN -2147483648 AND 2147483647 THEN 4 WHEN " + c +
         " BETWEEN -140737488355328 AND 140737488355327 THEN 6 ELSE 8 END) WHEN 'real' THEN 8 "
         "ELSE length(CAST(" +
         c + " AS BLOB)) END";
}

void print_structures(Inspector& db, double records) {
  std::printf("  %-36s %9s %9s %7s %6s\n", "B-tree (dbstat name)", "bytes/rec", "payload", "pages",
              "fill");
  double total = 0, payload = 0;
  for (const auto& row : db.rows(
           "SELECT name, SUM(pgsize), SUM(payload), COUNT(*), SUM(pgsize - unused) FROM dbstat "
           "WHERE name IN (SELECT name FROM sqlite_schema WHERE tbl_name = 'idempotency_records') "
           "GROUP BY name ORDER BY SUM(pgsize) DESC")) {
    const double bytes = std::stod(row[1]), used = std::stod(row[4]);
    total += bytes;
    payload += std::stod(row[2]);
    std::printf("  %-36s %9.1f %9.1f %7s %5.0f%%\n", row[0].c_str(), bytes / records,
                std::stod(row[2]) / records, row[3].c_str(), 100 * used / bytes);
  }
  std::printf("  %-36s %9.1f %9.1f\n", "idempotency_records and its indexes", total / records,
              payload / records);
}

void print_columns(Inspector& db, double records) {
  std::string sql = "SELECT ";
  const auto columns = db.rows("SELECT name FROM pragma_table_info('idempotency_records')");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    sql += (i ? ", " : "") + std::string("SUM(") + stored_bytes(columns[i][0]) + ")";
  }
  const auto sums = db.rows(sql + " FROM idempotency_records").at(0);
  std::printf("  values per record, by column (SQLite record format; 0 for NULL, 0 and 1):\n   ");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    std::printf(" %s %.1f%s", columns[i][0].c_str(), std::stod(sums[i]) / records,
                i + 1 < columns.size() ? "," : "\n");
  }
}

}  // namespace

bool bytes_per_record(const std::string& dir, int count) {
  const std::string path = dir + "/size.db";
  std::filesystem::remove(path);
  std::mt19937_64 random(std::random_device{}());
  std::vector<bench::HttpRequest> requests = orders("", count);
  for (auto& r : requests) {
    for (auto& [name, value] : r.headers) {
      if (name == "Idempotency-Key") value = random_uuid_v4(random);
    }
  }
  bench::HttpLoad load;
  {
    const auto api = start_orders_api(path, dir, "orders-api-size");
    load = bench::http_load(api->port(), requests, kConnections, kBudget, 201);
    api->stop();
  }
  Inspector db(path);
  const double records = db.number("SELECT COUNT(*) FROM idempotency_records");
  std::printf(
      "orders-api: bytes per idempotency record of %ld POST /orders (random UUIDv4 keys, bodies "
      "{\"amount\":1000+i,\"currency\":\"EUR\",\"reference\":\"inv-i\"}, %d connections, a fresh "
      "SQLite file; %.0f records, %ld not 201)\n",
      load.done, kConnections, records, load.failed);
  std::printf(
      "  counted: dbstat pgsize (pages x %0.f bytes, free space in them included) of "
      "idempotency_records and each of its indexes, divided by the records\n",
      db.number("PRAGMA page_size"));
  print_structures(db, records);
  print_columns(db, records);
  std::printf(
      "  not counted, for scale: the orders table and its index %.1f bytes per order\n",
      db.number("SELECT SUM(pgsize) FROM dbstat WHERE name IN (SELECT name FROM sqlite_schema "
                "WHERE tbl_name = 'orders')") /
          records);
  std::printf("  target: <= 300 bytes per record (aim 200)\n");
  return load.failed == 0 && load.done == count;
}

}  // namespace orders_bench
