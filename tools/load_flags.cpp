#include "tools/load_flags.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace etwebgpu;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string dashed(std::string s) {
  for (char& c : s)
    if (c == '_') c = '-';
  return s;
}

}  // namespace

void add_load_flags(CLI::App* cmd, LoadFlags& f) {
  const LoadOptions defaults;
  for (const auto& o : load_option_list()) {
    const std::string name = o.name, flag = "--" + dashed(o.name);
    if (o.values == "on|off") {
      bool on = get_load_option(defaults, name) == "on";
      cmd->add_flag_callback(on ? "--no-" + dashed(name) : flag,
                             [&f, name, on] { f.items.emplace_back(name, on ? "off" : "on"); },
                             (on ? "off: " : "") + o.help);
    } else if (o.repeatable) {
      cmd->add_option_function<std::vector<std::string>>(
             flag, [&f, name](const std::vector<std::string>& vs) {
               for (auto& v : vs) f.items.emplace_back(name, v);
             },
             o.help)
          ->type_name(o.values);
    } else {
      cmd->add_option_function<std::string>(
             flag, [&f, name](const std::string& v) { f.items.emplace_back(name, v); },
             o.help + " (default " + get_load_option(defaults, name) + ")")
          ->type_name(o.values);
    }
  }
  cmd->add_flag("--quiet", f.quiet, "no progress bar while loading");
}

LoadOptions load_options_of(const LoadFlags& f) {
  LoadOptions lo = parse_load_options(f.items);
  if (!f.quiet) {
    auto bar = std::make_shared<ProgressBar>();
    lo.on_progress = [bar](const LoadProgress& p) {
      bool bytes = p.stage != LoadProgress::Stage::Compile;
      bar->update(std::string("loading: ") + load_stage_name(p.stage), p.done, p.total, bytes ? "MB" : "kernels");
      if (p.stage == LoadProgress::Stage::Compile && p.done == p.total) bar->done();
    };
  }
  return lo;
}

// $ETWEBGPU_PROGRESS_DELAY_S overrides the delay (0: draw from the start, as the tests do).
ProgressBar::ProgressBar(bool enabled, double delay_s)
    : start_s_(now_s()), delay_s_(delay_s), tty_(enabled && isatty(2) == 1) {
  if (const char* e = std::getenv("ETWEBGPU_PROGRESS_DELAY_S")) delay_s_ = std::atof(e);
}
ProgressBar::~ProgressBar() { done(); }

void ProgressBar::update(const std::string& what, uint64_t n_done, uint64_t total, const char* unit) {
  if (!tty_) return;
  double t = now_s();
  // At most 20 redraws a second, and none in the first delay_s (short loads stay silent).
  if (t - start_s_ < delay_s_ || (t - last_draw_s_ < 0.05 && n_done != total)) return;
  last_draw_s_ = t;
  const int width = 30;
  double frac = total ? static_cast<double>(n_done) / static_cast<double>(total) : 1.0;
  int fill = static_cast<int>(frac * width);
  bool mb = std::string(unit) == "MB";
  double d = mb ? n_done / 1e6 : static_cast<double>(n_done), n = mb ? total / 1e6 : static_cast<double>(total);
  std::fprintf(stderr, "\r\033[K%-20s [%s%s] %3.0f%% %.0f/%.0f %s", what.c_str(), std::string(fill, '#').c_str(),
               std::string(width - fill, '.').c_str(), frac * 100, d, n, unit);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::done() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}
