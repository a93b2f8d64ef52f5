// The message of the exception a call must throw, for tests that pin error messages exactly.
#pragma once

#include <string>

#include <gtest/gtest.h>

namespace trepro::testing {

// Runs `call`, which must throw E (a failure is recorded when it does not), and returns what().
template <class E, class Call>
std::string message_of(Call call) {
  try {
    call();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception";
  return "";
}

}  // namespace trepro::testing
