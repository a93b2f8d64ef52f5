// The backend under test as the suite sees it when that backend does not provide every op (or
// when trepro conform asks which ops each test calls): an op the backend does not provide is
// refused with NotProvided after the fixture is told (backend_fixture.cc reports the test as not
// provided), so that a partial ForwardingBackend is not credited with its inner backend's work and
// a plugin's missing function is not a failure. Every op it lets through is the backend's own.
#pragma once

#include <functional>
#include <utility>

#include "core/forwarding_backend.h"

namespace trepro::testing {

class ProvidedOpsGuard final : public ForwardingBackend {
 public:
  // `called` hears of every op x direction called on the backend, before it runs or is refused.
  ProvidedOpsGuard(Backend& inner, std::function<void(OpDirection, bool provided)> called)
      : ForwardingBackend(inner, Decorates::whole_backend), called_(std::move(called)) {}

 protected:
  void forwarding(OpDirection op) override {
    const bool provided = inner().provides(op);
    called_(op, provided);
    if (!provided) throw NotProvided(op, inner().name());
  }

 private:
  std::function<void(OpDirection, bool)> called_;
};

}  // namespace trepro::testing
