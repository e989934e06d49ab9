// .pte reader: eh00 header, verified Program flatbuffer, segments, constants, named data.
// Layout rules: ../shared/spec/FORMAT.md sections 3 and 6. Every offset and size taken from the
// file is bounds-checked in 64-bit arithmetic that cannot wrap before it is used.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>

#include "etwebgpu/error.h"
#include "format/escape.h"
#include "format/fb_util.h"
#include "format/file_read.h"
#include "format/ir.h"
#include "program_generated.h"

namespace etwebgpu::format {
namespace fb = executorch_flatbuffer;

namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(ErrorKind::Format, msg); }

template <class T>
T read_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // the supported hosts are little-endian, like the format
  return v;
}

// True when [off, off+size) lies in [0, limit), without overflow.
bool fits(uint64_t off, uint64_t size, uint64_t limit) { return off <= limit && size <= limit - off; }

struct Reader {
  const Bytes& b;
  const fb::Program* p = nullptr;
  uint64_t program_size = 0;
  uint64_t seg_base = 0;
  uint64_t seg_limit = 0;  // bytes available from seg_base (segment_data_size or to end of file)
  bool has_segments = false;

  ByteSpan segment(uint32_t idx, const std::string& what) const {
    const auto* segs = p->segments();
    const uint32_t n = segs ? segs->size() : 0;
    if (idx >= n) fail(fmt::format("{}: segment index {} out of range (program has {} segments)", what, idx, n));
    if (!has_segments)
      fail(fmt::format("{}: refers to segment {} but the file has no segment area (no eh00 header or "
                       "segment_base_offset 0)", what, idx));
    const fb::DataSegment* s = segs->Get(idx);
    if (!s) fail(fmt::format("{}: segment {} entry is null", what, idx));
    if (!fits(s->offset(), s->size(), seg_limit))
      fail(fmt::format("{}: segment {} [offset {} + size {}] exceeds the segment data size {}", what, idx,
                       s->offset(), s->size(), seg_limit));
    return ByteSpan(b.data() + seg_base + s->offset(), static_cast<size_t>(s->size()));
  }
};

uint64_t tensor_nbytes(const TensorInfo& t, const std::string& what) {
  uint64_t n = 1;
  for (int64_t d : t.sizes)
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      fail(fmt::format("{}: element count of sizes overflows", what));
  uint64_t bytes;
  if (__builtin_mul_overflow(n, static_cast<uint64_t>(scalar_type_size(t.scalar_type)), &bytes) ||
      bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail(fmt::format("{}: byte size of sizes overflows", what));
  return bytes;
}

TensorInfo read_tensor(const Reader& r, const fb::Tensor* t, const std::vector<int64_t>& arena_sizes,
                       const std::string& what) {
  TensorInfo ti;
  ti.scalar_type = static_cast<ScalarType>(t->scalar_type());
  if (t->storage_offset() != 0) fail(fmt::format("{}: storage_offset {} (must be 0)", what, t->storage_offset()));
  if (const auto* s = t->sizes()) {
    for (uint32_t i = 0; i < s->size(); ++i) {
      const int32_t d = s->Get(i);
      if (d < 0) fail(fmt::format("{}: negative size {} in dim {}", what, d, i));
      ti.sizes.push_back(d);
    }
  }
  if (const auto* o = t->dim_order()) ti.dim_order.assign(o->begin(), o->end());
  if (ti.dim_order.size() != ti.sizes.size())
    fail(fmt::format("{}: dim_order has {} entries but sizes has {}", what, ti.dim_order.size(), ti.sizes.size()));
  {
    std::vector<bool> seen(ti.dim_order.size(), false);
    for (uint8_t d : ti.dim_order) {
      if (d >= seen.size() || seen[d]) fail(fmt::format("{}: dim_order is not a permutation of 0..{}", what, seen.size()));
      seen[d] = true;
    }
  }
  const int8_t dyn = static_cast<int8_t>(t->shape_dynamism());
  if (dyn < 0 || dyn > 2) fail(fmt::format("{}: unknown shape_dynamism {}", what, dyn));
  ti.dynamism = static_cast<ShapeDynamism>(dyn);
  ti.data_buffer_idx = t->data_buffer_idx();
  if (const auto* a = t->allocation_info()) {
    ti.has_allocation = true;
    ti.memory_id = a->memory_id();
    ti.memory_offset = (static_cast<uint64_t>(a->memory_offset_high()) << 32) | a->memory_offset_low();
    if (ti.memory_id == 0 || ti.memory_id >= arena_sizes.size())
      fail(fmt::format("{}: memory_id {} out of range (non_const_buffer_sizes has {} entries)", what, ti.memory_id,
                       arena_sizes.size()));
    // Static and bounded tensors must fit in their arena; unbounded ones are sized at run time.
    if (ti.dynamism != ShapeDynamism::DynamicUnbound) {
      uint64_t nbytes = 0;
      bool sized = true;
      try {
        nbytes = tensor_nbytes(ti, what);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::Unsupported) throw;
        sized = false;
      }
      const uint64_t arena = static_cast<uint64_t>(arena_sizes[ti.memory_id]);
      if (sized && !fits(ti.memory_offset, nbytes, arena))
        fail(fmt::format("{}: planned at arena {} offset {} + {} bytes, beyond the arena size {}", what, ti.memory_id,
                         ti.memory_offset, nbytes, arena));
    }
  }
  if (ti.data_buffer_idx > 0) {
    const uint64_t nbytes = tensor_nbytes(ti, what);
    if (!ti.has_allocation) {
      // Constant: constant_segment when it has offsets, else the deprecated inline constant_buffer.
      const fb::SubsegmentOffsets* cs = r.p->constant_segment();
      if (cs && cs->offsets() && cs->offsets()->size() > 0) {
        const auto* offs = cs->offsets();
        if (ti.data_buffer_idx >= offs->size())
          fail(fmt::format("{}: data_buffer_idx {} out of range (constant_segment has {} offsets)", what,
                           ti.data_buffer_idx, offs->size()));
        const ByteSpan seg = r.segment(cs->segment_index(), "constant_segment");
        const uint64_t off = fbutil::vec_at(offs, ti.data_buffer_idx);
        if (!fits(off, nbytes, seg.size()))
          fail(fmt::format("{}: constant at offset {} + {} bytes exceeds the constant segment size {}", what, off, nbytes,
                           seg.size()));
        ti.constant_data = seg.subspan(static_cast<size_t>(off), static_cast<size_t>(nbytes));
      } else {
        const auto* cb = r.p->constant_buffer();
        const uint32_t n = cb ? cb->size() : 0;
        if (ti.data_buffer_idx >= n)
          fail(fmt::format("{}: data_buffer_idx {} out of range (no constant_segment; constant_buffer has {} entries)",
                           what, ti.data_buffer_idx, n));
        const auto* st = cb->Get(ti.data_buffer_idx)->storage();
        const uint64_t have = st ? st->size() : 0;
        if (nbytes > have)
          fail(fmt::format("{}: needs {} bytes but constant_buffer[{}] holds {}", what, nbytes, ti.data_buffer_idx, have));
        ti.constant_data = ByteSpan(st->data(), static_cast<size_t>(nbytes));
      }
    } else {
      // Mutable data: planned storage initialised from mutable_data_segments[0]; constant_data
      // holds those initial bytes.
      const auto* ms = r.p->mutable_data_segments();
      if (!ms || ms->size() == 0 || !ms->Get(0)->offsets())
        fail(fmt::format("{}: data_buffer_idx {} with allocation_info but no mutable_data_segments", what,
                         ti.data_buffer_idx));
      const auto* offs = ms->Get(0)->offsets();
      if (ti.data_buffer_idx >= offs->size())
        fail(fmt::format("{}: data_buffer_idx {} out of range (mutable_data_segments[0] has {} offsets)", what,
                         ti.data_buffer_idx, offs->size()));
      const ByteSpan seg = r.segment(ms->Get(0)->segment_index(), "mutable_data_segments[0]");
      const uint64_t off = fbutil::vec_at(offs, ti.data_buffer_idx);
      if (!fits(off, nbytes, seg.size()))
        fail(fmt::format("{}: mutable data at offset {} + {} bytes exceeds its segment size {}", what, off, nbytes,
                         seg.size()));
      ti.constant_data = seg.subspan(static_cast<size_t>(off), static_cast<size_t>(nbytes));
    }
  }
  return ti;
}

EValue read_evalue(const Reader& r, const fb::EValue* ev, const std::vector<int64_t>& arena_sizes, size_t idx) {
  const std::string what = fmt::format("value {}", idx);
  EValue v;
  if (!ev) fail(what + ": null EValue entry");
  const auto tag = ev->val_type();
  if (tag == fb::KernelTypes::NONE) return v;  // kind None
  if (static_cast<uint8_t>(tag) > static_cast<uint8_t>(fb::KernelTypes::MAX))
    fail(fmt::format("{}: unknown KernelTypes tag {}", what, static_cast<int>(tag)));
  if (!ev->val() && tag != fb::KernelTypes::Null)
    fail(fmt::format("{}: union tag {} without a member table", what, static_cast<int>(tag)));
  switch (tag) {
    case fb::KernelTypes::Null: v.kind = EValueKind::Null; break;
    case fb::KernelTypes::Int: v.kind = EValueKind::Int; v.int_val = ev->val_as_Int()->int_val(); break;
    case fb::KernelTypes::Bool: v.kind = EValueKind::Bool; v.bool_val = ev->val_as_Bool()->bool_val(); break;
    case fb::KernelTypes::Double: v.kind = EValueKind::Double; v.double_val = ev->val_as_Double()->double_val(); break;
    case fb::KernelTypes::String: {
      v.kind = EValueKind::String;
      if (const auto* s = ev->val_as_String()->string_val()) v.str = s->str();
      break;
    }
    case fb::KernelTypes::Tensor:
      v.kind = EValueKind::Tensor;
      v.tensor = read_tensor(r, ev->val_as_Tensor(), arena_sizes, what);
      break;
    case fb::KernelTypes::IntList:
      v.kind = EValueKind::IntList;
      v.items = fbutil::copy_vec(ev->val_as_IntList()->items());
      break;
    case fb::KernelTypes::DoubleList:
      v.kind = EValueKind::DoubleList;
      v.doubles = fbutil::copy_vec(ev->val_as_DoubleList()->items());
      break;
    case fb::KernelTypes::BoolList:
      v.kind = EValueKind::BoolList;
      if (const auto* it = ev->val_as_BoolList()->items())
        for (auto b : *it) v.bools.push_back(b ? 1 : 0);
      break;
    case fb::KernelTypes::TensorList:
      v.kind = EValueKind::TensorList;
      if (const auto* it = ev->val_as_TensorList()->items()) v.items.assign(it->begin(), it->end());
      break;
    case fb::KernelTypes::OptionalTensorList:
      v.kind = EValueKind::OptionalTensorList;
      if (const auto* it = ev->val_as_OptionalTensorList()->items()) v.items.assign(it->begin(), it->end());
      break;
    default: fail(fmt::format("{}: unknown KernelTypes tag {}", what, static_cast<int>(tag)));
  }
  return v;
}

void check_id(int64_t id, size_t n, const std::string& what) {
  if (id < 0 || static_cast<uint64_t>(id) >= n)
    fail(fmt::format("{}: value id {} out of range ({} values)", what, id, n));
}

std::vector<int32_t> ids_of(const flatbuffers::Vector<int32_t>* v, size_t nvalues, const std::string& what) {
  std::vector<int32_t> out;
  if (!v) return out;
  out.assign(v->begin(), v->end());
  for (int32_t id : out) check_id(id, nvalues, what);
  return out;
}

ExecutionPlan read_plan(const Reader& r, const fb::ExecutionPlan* ep, size_t pi) {
  const std::string pw = fmt::format("plan {}", pi);
  if (!ep) fail(pw + ": null ExecutionPlan entry");
  ExecutionPlan plan;
  if (ep->name()) plan.name = ep->name()->str();
  const std::string where = "plan '" + escape_untrusted(plan.name) + "'";
  plan.non_const_buffer_sizes = fbutil::copy_vec(ep->non_const_buffer_sizes());
  for (size_t i = 0; i < plan.non_const_buffer_sizes.size(); ++i)
    if (plan.non_const_buffer_sizes[i] < 0)
      fail(fmt::format("{}: non_const_buffer_sizes[{}] = {} is negative", where, i, plan.non_const_buffer_sizes[i]));
  if (const auto* vals = ep->values()) {
    plan.values.reserve(vals->size());
    for (uint32_t i = 0; i < vals->size(); ++i)
      plan.values.push_back(read_evalue(r, vals->Get(i), plan.non_const_buffer_sizes, i));
  }
  const size_t nv = plan.values.size();
  // List items are EValue ids (IntList items must name Int values; -1 = None in optional lists).
  for (size_t i = 0; i < nv; ++i) {
    const EValue& v = plan.values[i];
    const std::string vw = fmt::format("{} value {} ({})", where, i, evalue_kind_name(v.kind));
    for (int64_t id : v.items) {
      if (v.kind == EValueKind::OptionalTensorList && id == -1) continue;
      check_id(id, nv, vw + " item");
      const EValueKind k = plan.values[static_cast<size_t>(id)].kind;
      if (v.kind == EValueKind::IntList && k != EValueKind::Int)
        fail(fmt::format("{}: item {} is a {} value, expected Int", vw, id, evalue_kind_name(k)));
    }
  }
  plan.inputs = ids_of(ep->inputs(), nv, where + " inputs");
  plan.outputs = ids_of(ep->outputs(), nv, where + " outputs");

  if (const auto* ops = ep->operators()) {
    for (uint32_t i = 0; i < ops->size(); ++i) {
      const fb::Operator* o = ops->Get(i);
      OperatorRef ref;
      if (o && o->name()) ref.name = o->name()->str();
      if (o && o->overload()) ref.overload = o->overload()->str();
      if (ref.name.empty()) fail(fmt::format("{}: operator {} has no name", where, i));
      plan.operators.push_back(std::move(ref));
    }
  }

  if (const auto* ds = ep->delegates()) {
    for (uint32_t i = 0; i < ds->size(); ++i) {
      const std::string dw = fmt::format("{} delegate {}", where, i);
      const fb::BackendDelegate* d = ds->Get(i);
      if (!d) fail(dw + ": null entry");
      Delegate del;
      if (d->id()) del.id = d->id()->str();
      const fb::BackendDelegateDataReference* ref = d->processed();
      if (!ref) fail(dw + ": missing processed data reference");
      if (ref->location() == fb::DataLocation::INLINE) {
        const auto* inl = r.p->backend_delegate_data();
        const uint32_t n = inl ? inl->size() : 0;
        if (ref->index() >= n)
          fail(fmt::format("{}: inline data index {} out of range (backend_delegate_data has {} entries)", dw,
                           ref->index(), n));
        const auto* data = inl->Get(ref->index())->data();
        if (data) del.blob = ByteSpan(data->data(), data->size());
      } else if (ref->location() == fb::DataLocation::SEGMENT) {
        del.blob = r.segment(ref->index(), dw);
      } else {
        fail(fmt::format("{}: unknown data location {}", dw, static_cast<int>(ref->location())));
      }
      if (const auto* cs = d->compile_specs()) {
        for (const fb::CompileSpec* c : *cs) {
          if (!c) continue;
          Bytes val;
          if (c->value()) val.assign(c->value()->begin(), c->value()->end());
          del.compile_specs[c->key() ? c->key()->str() : std::string()] = std::move(val);
        }
      }
      plan.delegates.push_back(std::move(del));
    }
  }

  if (const auto* chains = ep->chains()) {
    for (uint32_t ci = 0; ci < chains->size(); ++ci) {
      const fb::Chain* c = chains->Get(ci);
      std::vector<Instruction> instrs;
      const auto* is = c ? c->instructions() : nullptr;
      const uint32_t ni = is ? is->size() : 0;
      for (uint32_t ii = 0; ii < ni; ++ii) {
        const std::string iw = fmt::format("{} chain {} instruction {}", where, ci, ii);
        const fb::Instruction* in = is->Get(ii);
        if (!in) fail(iw + ": null entry");
        Instruction out;
        switch (in->instr_args_type()) {
          case fb::InstructionArguments::KernelCall: {
            const auto* k = in->instr_args_as_KernelCall();
            if (!k) fail(iw + ": KernelCall tag without a table");
            out.kind = InstrKind::KernelCall;
            out.index = k->op_index();
            if (out.index < 0 || static_cast<size_t>(out.index) >= plan.operators.size())
              fail(fmt::format("{}: op_index {} out of range ({} operators)", iw, out.index, plan.operators.size()));
            out.args = ids_of(k->args(), nv, iw + " args");
            break;
          }
          case fb::InstructionArguments::DelegateCall: {
            const auto* d = in->instr_args_as_DelegateCall();
            if (!d) fail(iw + ": DelegateCall tag without a table");
            out.kind = InstrKind::DelegateCall;
            out.index = d->delegate_index();
            if (out.index < 0 || static_cast<size_t>(out.index) >= plan.delegates.size())
              fail(fmt::format("{}: delegate_index {} out of range ({} delegates)", iw, out.index,
                               plan.delegates.size()));
            out.args = ids_of(d->args(), nv, iw + " args");
            break;
          }
          case fb::InstructionArguments::MoveCall: {
            const auto* m = in->instr_args_as_MoveCall();
            if (!m) fail(iw + ": MoveCall tag without a table");
            out.kind = InstrKind::MoveCall;
            out.move_from = m->move_from();
            out.move_to = m->move_to();
            check_id(out.move_from, nv, iw + " move_from");
            check_id(out.move_to, nv, iw + " move_to");
            break;
          }
          case fb::InstructionArguments::JumpFalseCall: {
            const auto* j = in->instr_args_as_JumpFalseCall();
            if (!j) fail(iw + ": JumpFalseCall tag without a table");
            out.kind = InstrKind::JumpFalseCall;
            out.cond_value = j->cond_value_index();
            out.destination = j->destination_instruction();
            check_id(out.cond_value, nv, iw + " cond_value_index");
            if (out.destination < 0 || static_cast<uint32_t>(out.destination) >= ni)
              fail(fmt::format("{}: destination_instruction {} out of range ({} instructions)", iw, out.destination, ni));
            break;
          }
          case fb::InstructionArguments::FreeCall: {
            const auto* f = in->instr_args_as_FreeCall();
            if (!f) fail(iw + ": FreeCall tag without a table");
            out.kind = InstrKind::FreeCall;
            out.free_value = f->value_index();
            check_id(out.free_value, nv, iw + " value_index");
            break;
          }
          default:
            fail(fmt::format("{}: unknown instruction tag {}", iw, static_cast<int>(in->instr_args_type())));
        }
        instrs.push_back(std::move(out));
      }
      plan.chains.push_back(std::move(instrs));
    }
  }
  return plan;
}

}  // namespace

Bytes read_file(const std::string& path, const std::function<void(uint64_t, uint64_t)>& progress) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw Error(ErrorKind::Io, "cannot open '" + path + "'");
  const std::streamoff end = f.tellg();
  if (end < 0) throw Error(ErrorKind::Io, "cannot tell the size of '" + path + "'");
  f.seekg(0);
  const uint64_t total = static_cast<uint64_t>(end);
  Bytes b(total);
  constexpr uint64_t kChunk = 64ull << 20;  // progress granularity; large reads run at disk speed
  for (uint64_t done = 0; done < total;) {
    uint64_t n = std::min(kChunk, total - done);
    f.read(reinterpret_cast<char*>(b.data() + done), static_cast<std::streamsize>(n));
    if (static_cast<uint64_t>(f.gcount()) != n)
      throw Error(ErrorKind::Io, "reading '" + path + "': " + std::to_string(done + static_cast<uint64_t>(f.gcount())) +
                                     " of " + std::to_string(total) + " bytes");
    done += n;
    if (progress) progress(done, total);
  }
  if (total == 0 && progress) progress(0, 0);
  return b;
}

Bytes read_file(const std::string& path) { return read_file(path, {}); }

Program read_program(std::shared_ptr<const Bytes> bytes) {
  if (!bytes) throw Error(ErrorKind::InvalidArgument, "read_program: null buffer");
  const Bytes& b = *bytes;
  const uint64_t n = b.size();
  if (n < 8) fail(fmt::format(".pte: file is {} bytes, too small for a flatbuffer header (8)", n));
  if (std::memcmp(b.data() + 4, "ET12", 4) != 0) {
    if (b[4] == 'E' && b[5] == 'T')
      fail(fmt::format(".pte: program version '{}' is not supported (expected ET12)", escape_untrusted(std::string_view(reinterpret_cast<const char*>(b.data() + 4), 4))));
    fail(fmt::format(".pte: file identifier '{}' is not ET12 (not an ExecuTorch program)", escape_untrusted(std::string_view(reinterpret_cast<const char*>(b.data() + 4), 4))));
  }

  Reader r{b};
  r.program_size = n;
  if (n >= 12 && std::memcmp(b.data() + 8, "eh00", 4) == 0) {
    if (n < 16) fail(fmt::format("eh00 header: file is {} bytes, too short for the header length", n));
    const uint32_t hlen = read_le<uint32_t>(b.data() + 12);
    if (hlen < 24) fail(fmt::format("eh00 header: length {} is below the minimum 24", hlen));
    if (!fits(8, hlen, n)) fail(fmt::format("eh00 header: length {} exceeds file size {}", hlen, n));
    r.program_size = read_le<uint64_t>(b.data() + 16);
    r.seg_base = read_le<uint64_t>(b.data() + 24);
    const bool has_data_size = hlen >= 32;
    const uint64_t seg_data_size = has_data_size ? read_le<uint64_t>(b.data() + 32) : 0;
    if (r.program_size > n) fail(fmt::format("eh00 header: program_size {} exceeds file size {}", r.program_size, n));
    if (r.program_size < 8 + uint64_t{hlen})
      fail(fmt::format("eh00 header: program_size {} is smaller than the header end {}", r.program_size, 8 + hlen));
    if (r.seg_base != 0) {
      if (r.seg_base < r.program_size)
        fail(fmt::format("eh00 header: segment_base_offset {} lies inside the program (program_size {})", r.seg_base,
                         r.program_size));
      if (r.seg_base > n)
        fail(fmt::format("eh00 header: segment_base_offset {} exceeds file size {}", r.seg_base, n));
      if (has_data_size && !fits(r.seg_base, seg_data_size, n))
        fail(fmt::format("eh00 header: segment_base_offset {} + segment_data_size {} exceeds file size {}", r.seg_base,
                         seg_data_size, n));
      r.seg_limit = has_data_size ? seg_data_size : n - r.seg_base;
      r.has_segments = true;
    }
  }
  if (r.program_size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    fail(fmt::format(".pte: program_size {} exceeds the flatbuffer limit", r.program_size));
  {
    flatbuffers::Verifier v(b.data(), static_cast<size_t>(r.program_size));
    if (!fb::VerifyProgramBuffer(v))
      fail(fmt::format(".pte: Program flatbuffer over [0, {}) failed verification (corrupt or truncated)",
                       r.program_size));
  }
  r.p = fb::GetProgram(b.data());

  Program prog;
  prog.bytes = bytes;
  prog.version = r.p->version();
  if (const auto* nd = r.p->named_data()) {
    for (uint32_t i = 0; i < nd->size(); ++i) {
      const fb::NamedData* e = nd->Get(i);
      if (!e || !e->key()) fail(fmt::format("named_data[{}]: missing key", i));
      const std::string key = e->key()->str();
      const ByteSpan data = r.segment(e->segment_index(), fmt::format("named_data '{}'", escape_untrusted(key)));
      if (!prog.named_data.emplace(key, data).second) fail(fmt::format("named_data: duplicate key '{}'", escape_untrusted(key)));
    }
  }
  if (const auto* plans = r.p->execution_plan()) {
    for (uint32_t i = 0; i < plans->size(); ++i) prog.plans.push_back(read_plan(r, plans->Get(i), i));
  }
  return prog;
}

}  // namespace etwebgpu::format
