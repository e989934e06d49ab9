// Text <-> token ids for `generate`: SentencePiece models (`.model`, through Debian's
// libsentencepiece) and Hugging Face `tokenizer.json` byte-level BPE (GPT-2, Llama 3, Qwen).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace etwebgpu {

class Tokenizer {
 public:
  // Picks the kind from the file: a JSON document is a tokenizer.json, anything else is tried as a
  // SentencePiece model. Throws Error(Io / Format / Unsupported) naming the problem.
  static std::unique_ptr<Tokenizer> load(const std::string& path);
  virtual ~Tokenizer() = default;
  // Plain text to ids; no BOS/EOS is added (see bos()).
  virtual std::vector<int64_t> encode(const std::string& text) const = 0;
  // Ids to text; ids outside the vocabulary are an Error(InvalidArgument).
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  virtual size_t vocab_size() const = 0;
  virtual std::optional<int64_t> bos() const = 0;
  virtual std::optional<int64_t> eos() const = 0;
  virtual std::string kind() const = 0;  // "sentencepiece" | "bpe"
};

}  // namespace etwebgpu
