#include <cstdlib>
#include <sstream>

#include "distributed/communicator.h"

namespace trepro {

double collective_timeout_seconds() {
  const char* text = std::getenv("TREPRO_COLLECTIVE_TIMEOUT_S");
  if (text == nullptr) return 600.0;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds > 0)) {
    throw CommunicatorError(std::string("$TREPRO_COLLECTIVE_TIMEOUT_S: expected seconds > 0, got \"") + text + "\"");
  }
  return seconds;
}

std::string collective_timeout_message(const std::string& collective, double seconds) {
  std::ostringstream why;
  why << collective << " waited more than " << seconds
      << " s for the other ranks ($TREPRO_COLLECTIVE_TIMEOUT_S): one of them hangs";
  return why.str();
}

}  // namespace trepro
