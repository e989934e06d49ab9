// Text from a file (operator names, backend ids, method names, keys, string values) reaching a
// human: errors, `inspect`, logs, traces. Such bytes could carry terminal escape sequences or
// invalid UTF-8, so they are printed through escape_untrusted().
#pragma once
#include <string>
#include <string_view>

namespace etwebgpu::format {

// Printable ASCII and well-formed printable UTF-8 pass unchanged; every other byte (controls such
// as ESC, DEL, C1 controls, bidirectional overrides, line/paragraph separators, bytes of an
// invalid, overlong or surrogate UTF-8 sequence) becomes `\xNN`, and a backslash becomes `\\`,
// so the escaped text is unambiguous.
std::string escape_untrusted(std::string_view bytes);

}  // namespace etwebgpu::format
