// The CLI's spelling of LoadOptions: flags made from load_option_list(), read back through
// parse_load_options (so the CLI accepts what Python and JavaScript accept), and a progress bar.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "etwebgpu/etwebgpu.h"

struct LoadFlags {
  std::vector<std::pair<std::string, std::string>> items;  // (option, value) as given
  bool quiet = false;                                      // --quiet: no progress bar
};
// --NAME VALUE for each option (--no-NAME / --NAME for switches on / off by default), and --quiet.
void add_load_flags(CLI::App* cmd, LoadFlags& f);
// The options the flags give, with a progress bar on stderr when it is a terminal (shown once a
// load has taken a second).
etwebgpu::LoadOptions load_options_of(const LoadFlags& f);

// A one-line progress bar on stderr, drawn only when `enabled`, on a terminal and after `delay_s`
// seconds; done() clears it.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled = true, double delay_s = 1.0);
  ~ProgressBar();
  void update(const std::string& what, uint64_t n_done, uint64_t total, const char* unit);
  void done();

 private:
  double start_s_, delay_s_, last_draw_s_ = 0;
  bool tty_, drawn_ = false;
};
