// The two tokenizer kinds decoder exports ship with. SentencePiece is Debian's libsentencepiece.
// Byte-level BPE follows Hugging Face `tokenizers`: added tokens are split out first, the rest is
// pre-tokenized with the file's regex (PCRE2, Unicode classes), each piece's bytes mapped to the
// GPT-2 byte alphabet, merged by rank, and looked up in the vocabulary.
#include "etwebgpu/tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <sentencepiece_processor.h>

#include <climits>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "etwebgpu/error.h"
#include "format/escape.h"

namespace etwebgpu {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::Io, "cannot open tokenizer '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void check_ids(const std::vector<int64_t>& ids, size_t n) {
  for (int64_t id : ids)
    if (id < 0 || static_cast<size_t>(id) >= n)
      throw Error(ErrorKind::InvalidArgument, "token id " + std::to_string(id) + " is outside the tokenizer's vocabulary [0, " +
                                                  std::to_string(n) + ")");
}

class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& bytes, const std::string& path) {
    auto st = sp_.LoadFromSerializedProto(bytes);
    if (!st.ok()) throw Error(ErrorKind::Format, "'" + path + "' is neither a tokenizer.json nor a SentencePiece model (" +
                                                     format::escape_untrusted(st.ToString()) + ")");
  }
  std::vector<int64_t> encode(const std::string& text) const override {
    std::vector<int> ids;
    auto st = sp_.Encode(text, &ids);
    if (!st.ok()) throw Error(ErrorKind::InvalidArgument, "SentencePiece encode: " + st.ToString());
    return {ids.begin(), ids.end()};
  }
  std::string decode(const std::vector<int64_t>& ids) const override {
    check_ids(ids, vocab_size());
    std::vector<int> v(ids.begin(), ids.end());
    std::string out;
    auto st = sp_.Decode(v, &out);
    if (!st.ok()) throw Error(ErrorKind::InvalidArgument, "SentencePiece decode: " + st.ToString());
    return out;
  }
  size_t vocab_size() const override { return static_cast<size_t>(sp_.GetPieceSize()); }
  std::optional<int64_t> bos() const override { return sp_.bos_id() >= 0 ? std::optional<int64_t>(sp_.bos_id()) : std::nullopt; }
  std::optional<int64_t> eos() const override { return sp_.eos_id() >= 0 ? std::optional<int64_t>(sp_.eos_id()) : std::nullopt; }
  std::string kind() const override { return "sentencepiece"; }

 private:
  sentencepiece::SentencePieceProcessor sp_;
};

// GPT-2's reversible byte -> printable code point map.
std::vector<uint32_t> byte_alphabet() {
  std::vector<uint32_t> cp(256, 0);
  std::vector<bool> direct(256, false);
  for (int b = '!'; b <= '~'; ++b) direct[b] = true;
  for (int b = 0xA1; b <= 0xAC; ++b) direct[b] = true;
  for (int b = 0xAE; b <= 0xFF; ++b) direct[b] = true;
  uint32_t extra = 0;
  for (int b = 0; b < 256; ++b) cp[b] = direct[b] ? static_cast<uint32_t>(b) : 256 + extra++;
  return cp;
}

std::string utf8(uint32_t c) {
  std::string s;
  if (c < 0x80) s += static_cast<char>(c);
  else if (c < 0x800) { s += static_cast<char>(0xC0 | (c >> 6)); s += static_cast<char>(0x80 | (c & 0x3F)); }
  else { s += static_cast<char>(0xE0 | (c >> 12)); s += static_cast<char>(0x80 | ((c >> 6) & 0x3F)); s += static_cast<char>(0x80 | (c & 0x3F)); }
  return s;
}

// Splits UTF-8 text into its code points' byte strings (invalid bytes stand alone).
std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (i + n > s.size()) n = 1;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class Regex {
 public:
  explicit Regex(const std::string& pattern) {
    int err = 0;
    PCRE2_SIZE off = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), pattern.size(), PCRE2_UTF | PCRE2_UCP, &err, &off,
                          nullptr);
    if (!code_) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      throw Error(ErrorKind::Unsupported, "tokenizer.json pre-tokenizer regex at offset " + std::to_string(off) + ": " +
                                              reinterpret_cast<char*>(msg));  // PCRE2's own message
    }
    data_ = pcre2_match_data_create_from_pattern(code_, nullptr);
  }
  ~Regex() {
    pcre2_match_data_free(data_);
    pcre2_code_free(code_);
  }
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // The matches and the gaps between them, in order (Hugging Face's Split "Isolated" behaviour).
  std::vector<std::string> split(const std::string& s) const {
    std::vector<std::string> out;
    size_t pos = 0, last = 0;
    while (pos <= s.size()) {
      int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos, PCRE2_NO_UTF_CHECK, data_, nullptr);
      if (rc < 0) break;
      PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data_);
      size_t b = ov[0], e = ov[1];
      if (b > last) out.push_back(s.substr(last, b - last));
      if (e > b) out.push_back(s.substr(b, e - b));
      last = e;
      pos = e > b ? e : e + 1;
      while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;  // stay on a code point
    }
    if (last < s.size()) out.push_back(s.substr(last));
    return out;
  }

 private:
  pcre2_code* code_ = nullptr;
  pcre2_match_data* data_ = nullptr;
};

class BpeTokenizer : public Tokenizer {
 public:
  BpeTokenizer(const nlohmann::json& j, const std::string& path) {
    const auto& model = j.at("model");
    std::string type = model.value("type", "BPE");
    if (type != "BPE")
      throw Error(ErrorKind::Unsupported, "'" + path + "': tokenizer model type " + format::escape_untrusted(type) + " (only BPE)");
    for (auto& [tok, id] : model.at("vocab").items()) add_token(tok, id.get<int64_t>());
    int64_t rank = 0;
    for (const auto& m : model.at("merges")) {
      std::string a, b;
      if (m.is_string()) {
        std::string s = m.get<std::string>();
        auto sp = s.find(' ');
        if (sp == std::string::npos)
          throw Error(ErrorKind::Format, "'" + path + "': merge '" + format::escape_untrusted(s) + "' has no space");
        a = s.substr(0, sp);
        b = s.substr(sp + 1);
      } else {
        a = m.at(0).get<std::string>();
        b = m.at(1).get<std::string>();
      }
      ranks_.emplace(a + '\x01' + b, rank++);
    }
    ignore_merges_ = model.value("ignore_merges", false);
    if (j.contains("added_tokens"))
      for (const auto& t : j.at("added_tokens")) {
        std::string c = t.at("content").get<std::string>();
        int64_t id = t.at("id").get<int64_t>();
        add_token(c, id);
        is_added_[id] = true;
        added_.emplace_back(c, id);
      }
    // Longest added token first, so "<|eot|>" wins over a prefix of it.
    std::sort(added_.begin(), added_.end(), [](auto& x, auto& y) { return x.first.size() > y.first.size(); });
    parse_pre_tokenizer(j.contains("pre_tokenizer") ? j.at("pre_tokenizer") : nlohmann::json(), path);
    auto cps = byte_alphabet();
    for (int b = 0; b < 256; ++b) {
      byte_char_[b] = utf8(cps[b]);
      char_byte_[byte_char_[b]] = static_cast<uint8_t>(b);
    }
    for (const char* k : {"<|begin_of_text|>", "<s>", "<|startoftext|>"})
      if (auto it = vocab_.find(k); it != vocab_.end() && !bos_) bos_ = it->second;
    for (const char* k : {"<|end_of_text|>", "<|eot_id|>", "</s>", "<|endoftext|>", "<|im_end|>"})
      if (auto it = vocab_.find(k); it != vocab_.end() && !eos_) eos_ = it->second;
  }

  std::vector<int64_t> encode(const std::string& text) const override {
    std::vector<int64_t> ids;
    size_t i = 0, start = 0;
    while (i <= text.size()) {
      const std::pair<std::string, int64_t>* hit = nullptr;
      if (i < text.size())
        for (const auto& a : added_)
          if (text.compare(i, a.first.size(), a.first) == 0) {
            hit = &a;
            break;
          }
      if (hit || i == text.size()) {
        encode_plain(text.substr(start, i - start), ids);
        if (!hit) break;
        ids.push_back(hit->second);
        i += hit->first.size();
        start = i;
      } else {
        ++i;
      }
    }
    return ids;
  }

  std::string decode(const std::vector<int64_t>& ids) const override {
    check_ids(ids, id_to_token_.size());
    std::string out;
    for (int64_t id : ids) {
      const std::string& t = id_to_token_[id];
      if (is_added_[id]) {
        out += t;
        continue;
      }
      for (const auto& ch : utf8_chars(t)) {
        auto it = char_byte_.find(ch);
        out += it == char_byte_.end() ? ch : std::string(1, static_cast<char>(it->second));
      }
    }
    return out;
  }
  size_t vocab_size() const override { return id_to_token_.size(); }
  std::optional<int64_t> bos() const override { return bos_; }
  std::optional<int64_t> eos() const override { return eos_; }
  std::string kind() const override { return "bpe"; }

 private:
  void add_token(const std::string& t, int64_t id) {
    if (id < 0 || id > INT32_MAX) throw Error(ErrorKind::Format, "tokenizer.json: token id " + std::to_string(id) + " out of range");
    vocab_[t] = id;
    if (static_cast<size_t>(id) >= id_to_token_.size()) {
      id_to_token_.resize(static_cast<size_t>(id) + 1);
      is_added_.resize(static_cast<size_t>(id) + 1, false);
    }
    id_to_token_[id] = t;
  }

  // ByteLevel (its own GPT-2 regex unless use_regex is false), Split(Regex) + ByteLevel, or a
  // Sequence of those.
  void parse_pre_tokenizer(const nlohmann::json& p, const std::string& path) {
    if (p.is_null()) return;
    std::string type = p.value("type", "");
    if (type == "Sequence") {
      for (const auto& q : p.at("pretokenizers")) parse_pre_tokenizer(q, path);
    } else if (type == "ByteLevel") {
      add_prefix_space_ = p.value("add_prefix_space", false);
      if (p.value("use_regex", true)) regexes_.push_back(std::make_unique<Regex>(kGpt2Pattern));
    } else if (type == "Split") {
      const auto& pat = p.at("pattern");
      std::string behavior = p.value("behavior", "Isolated");
      if (behavior != "Isolated" || p.value("invert", false))
        throw Error(ErrorKind::Unsupported, "'" + path + "': Split pre-tokenizer with behavior " + format::escape_untrusted(behavior));
      if (pat.contains("Regex")) regexes_.push_back(std::make_unique<Regex>(pat.at("Regex").get<std::string>()));
      else throw Error(ErrorKind::Unsupported, "'" + path + "': Split pre-tokenizer on a plain string");
    } else if (type == "Digits" || type == "Punctuation" || type == "Whitespace" || type == "Metaspace") {
      throw Error(ErrorKind::Unsupported, "'" + path + "': pre-tokenizer " + type + " (byte-level BPE files only)");  // a known name
    } else {
      throw Error(ErrorKind::Unsupported, "'" + path + "': pre-tokenizer type '" + format::escape_untrusted(type) + "'");
    }
  }

  void encode_plain(const std::string& text, std::vector<int64_t>& ids) const {
    if (text.empty()) return;
    std::vector<std::string> pieces = {add_prefix_space_ && text[0] != ' ' ? " " + text : text};
    for (const auto& re : regexes_) {
      std::vector<std::string> next;
      for (const auto& p : pieces)
        for (auto& q : re->split(p)) next.push_back(std::move(q));
      pieces = std::move(next);
    }
    for (const auto& p : pieces) bpe(p, ids);
  }

  void bpe(const std::string& piece, std::vector<int64_t>& ids) const {
    std::vector<std::string> sym;
    std::string word;
    for (unsigned char b : piece) {
      sym.push_back(byte_char_[b]);
      word += byte_char_[b];
    }
    if (ignore_merges_)
      if (auto it = vocab_.find(word); it != vocab_.end()) {
        ids.push_back(it->second);
        return;
      }
    while (sym.size() > 1) {
      int64_t best = INT64_MAX;
      size_t at = 0;
      for (size_t k = 0; k + 1 < sym.size(); ++k) {
        auto it = ranks_.find(sym[k] + '\x01' + sym[k + 1]);
        if (it != ranks_.end() && it->second < best) {
          best = it->second;
          at = k;
        }
      }
      if (best == INT64_MAX) break;
      sym[at] += sym[at + 1];
      sym.erase(sym.begin() + static_cast<long>(at) + 1);
    }
    for (const auto& s : sym) {
      auto it = vocab_.find(s);
      if (it == vocab_.end())
        throw Error(ErrorKind::InvalidArgument,
                    "tokenizer.json: the byte-level symbol '" + format::escape_untrusted(s) + "' is not in the vocabulary");
      ids.push_back(it->second);
    }
  }

  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<bool> is_added_;
  std::unordered_map<std::string, int64_t> ranks_;
  std::vector<std::pair<std::string, int64_t>> added_;
  std::vector<std::unique_ptr<Regex>> regexes_;
  bool add_prefix_space_ = false, ignore_merges_ = false;
  std::string byte_char_[256];
  std::map<std::string, uint8_t> char_byte_;
  std::optional<int64_t> bos_, eos_;
};

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::load(const std::string& path) {
  std::string bytes = read_text(path);
  size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && bytes[first] == '{') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(bytes);
    } catch (const std::exception& e) {
      throw Error(ErrorKind::Format, "'" + path + "': " + format::escape_untrusted(e.what()));
    }
    try {
      return std::make_unique<BpeTokenizer>(j, path);
    } catch (const nlohmann::json::exception& e) {
      throw Error(ErrorKind::Format, "'" + path + "' is not a Hugging Face tokenizer.json: " + format::escape_untrusted(e.what()));
    }
  }
  return std::make_unique<SentencePieceTokenizer>(bytes, path);
}

}  // namespace etwebgpu
