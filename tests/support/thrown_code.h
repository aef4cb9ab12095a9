// The webhooks::ErrorCode a call throws, for tests that check the code beside the message.
#pragma once

#include <catch2/catch.hpp>

#include "webhooks/error.h"

namespace webhooks::test {

// Runs `call`; the code of the webhooks::Error it throws. FAILs when it throws none.
template <typename Call>
ErrorCode thrown_code(Call call) {
  try {
    call();
  } catch (const Error& e) {
    return e.code();
  }
  FAIL("no exception");
  return ErrorCode{};
}

}  // namespace webhooks::test
