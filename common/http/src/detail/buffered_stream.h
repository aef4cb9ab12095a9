// cpp-httplib's view of one request the event loop under webhooks::http::Server buffered
// (detail/event_loop.h), for the worker that serves it.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <string>

#include "detail/event_loop.h"
#include "detail/served_connection.h"

namespace webhooks::http::detail {

// Reads come from the connection's buffer (Connection::in) and never block (past its end: end of
// stream, which ends the connection after the answer); writes are collected (in Connection::out)
// and sent when the answer is complete (flush) or 64 KiB are pending, waiting for the socket up to
// `deadline`. A "100 Continue" httplib writes is dropped when the loop sent it already
// (Connection::continue_sent).
class BufferedStream final : public httplib::Stream, public ServedConnection {
 public:
  // `fiber_loop`: the loop to wait on for room in the socket when this runs on a fiber worker
  // (EventLoop::wait_writable); nullptr: poll(2) on this thread.
  BufferedStream(Connection& c, LoopClock::time_point deadline, EventLoop* fiber_loop)
      : c_(c),
        out_(c.out),
        deadline_(deadline),
        fiber_loop_(fiber_loop),
        swallow_continue_(c.continue_sent) {
    out_.clear();
  }

  bool is_readable() const override { return pos_ < c_.in.size(); }
  bool is_writable() const override { return !failed_ && !abandoned_; }
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.remote_addr;
    port = c_.remote_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.local_addr;
    port = c_.local_port;
  }
  socket_t socket() const override { return c_.fd; }

  // ServedConnection
  int fd() const override { return c_.fd; }
  bool joins(const std::string& local_addr, int local_port, const std::string& remote_addr,
             int remote_port) const override {
    return local_port == c_.local_port && remote_port == c_.remote_port &&
           local_addr == c_.local_addr && remote_addr == c_.remote_addr;
  }
  void close_after_answer() override { close_requested_ = true; }
  void abandon() override {
    abandoned_ = true;
    out_.clear();
  }

  // Sends what is pending, waiting for the socket up to the deadline. False once it failed.
  bool flush();

  std::size_t consumed() const { return pos_; }  // bytes of Connection::in read
  bool starved() const { return starved_; }      // a read found the buffer's end
  bool abandoned() const { return abandoned_; }
  bool close_requested() const { return close_requested_; }

 private:
  Connection& c_;
  std::string& out_;  // c_.out: the connection's buffer, reused answer after answer
  LoopClock::time_point deadline_;
  EventLoop* fiber_loop_;
  std::size_t pos_ = 0;
  bool swallow_continue_ = false;
  bool starved_ = false;
  bool failed_ = false;
  bool abandoned_ = false;
  bool close_requested_ = false;
};

}  // namespace webhooks::http::detail
