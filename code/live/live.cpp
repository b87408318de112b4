// The live figures' bridge (live.hpp); with emscripten, also the module's exports.
#include "live.hpp"

#include "attn/exercise.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#ifdef __EMSCRIPTEN__
#include <emscripten/bind.h>
#endif

namespace live {
namespace {

std::map<std::string, Compute>& registry() {
  static std::map<std::string, Compute> table;
  return table;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Seventeen significant digits: JSON.parse and strtod read back the same double.
std::string json_number(std::string_view key, double x) {
  if (!std::isfinite(x))
    throw std::domain_error("live figure value '" + std::string(key) + "' is not finite");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string range_text(double lo, double hi) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%g, %g]", lo, hi);
  return buf;
}

}  // namespace

Params::Params(std::string_view query) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw std::invalid_argument("malformed parameter '" + std::string(item) +
                                  "' (expected name=value)");
    values_[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
  }
}

const std::string& Params::text(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw std::invalid_argument("parameter '" + name + "' is missing");
  return it->second;
}

double Params::real(const std::string& name, double lo, double hi) const {
  const std::string& s = text(name);
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(x >= lo && x <= hi))
    throw std::invalid_argument(name + " must be a number in " + range_text(lo, hi) +
                                " (got '" + s + "')");
  return x;
}

int Params::integer(const std::string& name, int lo, int hi) const {
  const std::string& s = text(name);
  char* end = nullptr;
  const long x = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || x < lo || x > hi)
    throw std::invalid_argument(name + " must be an integer in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "] (got '" + s + "')");
  return static_cast<int>(x);
}

std::string Params::choice(const std::string& name,
                           const std::vector<std::string>& choices) const {
  const std::string& s = text(name);
  std::string all;
  for (const auto& c : choices) {
    if (c == s) return s;
    all += (all.empty() ? "" : ", ") + c;
  }
  throw std::invalid_argument(name + " must be one of " + all + " (got '" + s + "')");
}

std::vector<int> Params::integers(const std::string& name, int lo, int hi) const {
  std::vector<int> out;
  std::string_view rest = text(name);
  while (true) {
    const auto comma = rest.find(',');
    const std::string item(rest.substr(0, comma));
    char* end = nullptr;
    const long x = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || x < lo || x > hi)
      throw std::invalid_argument(name + " must be a list of integers in [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) +
                                  "] (got '" + std::string(text(name)) + "')");
    out.push_back(static_cast<int>(x));
    if (comma == std::string_view::npos) return out;
    rest = rest.substr(comma + 1);
  }
}

void Figure::key(std::string_view k) {
  if (!body_.empty()) body_ += ',';
  body_ += json_string(k) + ':';
}

Figure& Figure::number(std::string_view k, double x) {
  const std::string v = json_number(k, x);
  key(k);
  body_ += v;
  return *this;
}

Figure& Figure::vector(std::string_view k, const Eigen::Ref<const Eigen::VectorXd>& v) {
  std::string s = "[";
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += json_number(k, v(i));
  }
  key(k);
  body_ += s + "]";
  return *this;
}

Figure& Figure::matrix(std::string_view k, const Eigen::Ref<const Eigen::MatrixXd>& m) {
  std::string s = "[";
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    s += i ? ",[" : "[";
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      if (j) s += ',';
      s += json_number(k, m(i, j));
    }
    s += ']';
  }
  key(k);
  body_ += s + "]";
  return *this;
}

Figure& Figure::labels(std::string_view k, const std::vector<std::string>& texts) {
  std::string s = "[";
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (i) s += ',';
    s += json_string(texts[i]);
  }
  key(k);
  body_ += s + "]";
  return *this;
}

bool add(const std::string& name, Compute f) {
  if (!registry().emplace(name, f).second) {
    std::fprintf(stderr, "live: '%s' registered twice\n", name.c_str());
    std::abort();
  }
  return true;
}

std::string compute(const std::string& name, const std::string& query) {
  try {
    const auto it = registry().find(name);
    if (it == registry().end()) throw std::invalid_argument("no live figure '" + name + "'");
    return it->second(Params(query)).json();
  } catch (const attn::exercise_not_done& e) {  // a student copy: the reader's own code
    return "{\"error\":" + json_string(e.what()) + ",\"exercise\":" + json_string(e.id()) + "}";
  } catch (const std::exception& e) {
    return "{\"error\":" + json_string(e.what()) + "}";
  }
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& [name, f] : registry()) out.push_back(name);
  return out;
}

}  // namespace live

#ifdef __EMSCRIPTEN__
EMSCRIPTEN_BINDINGS(book_live) {
  emscripten::function("compute", &live::compute);
}
#endif
