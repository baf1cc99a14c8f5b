#include <brasa/ops/copy.h>
#include <brasa/serialize/pt_format.h>
#include <brasa/serialize/safetensors.h>
#include <brasa/serialize/zip_archive.h>
#include <brasa/tensor/tensor_impl.h>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>

namespace brasa {

namespace serialize {

namespace {

// The storage types of torch.save and their dtypes.
const std::map<std::string, ScalarType>& storage_types() {
  static const std::map<std::string, ScalarType> m = {
      {"FloatStorage", kFloat},       {"DoubleStorage", kDouble}, {"HalfStorage", kHalf},
      {"BFloat16Storage", kBFloat16}, {"LongStorage", kLong},     {"IntStorage", kInt},
      {"ShortStorage", kShort},       {"CharStorage", kChar},     {"ByteStorage", kByte},
      {"BoolStorage", kBool}};
  return m;
}

// ---- reading: a restricted unpickler ----

// A Python value under construction. Containers are shared, as in Python:
// the memo and the stack may refer to one list and see its later appends.
struct Value;
using ValuePtr = std::shared_ptr<Value>;
struct Value {
  enum Kind { None, Bool, Int, Float, String, Tensor_, List, Tuple, Dict, Global, Storage_, Mark };
  Kind kind = None;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;  // a string, or a global's "module name"
  Tensor t;
  Storage storage;
  ScalarType dtype = kFloat;
  std::vector<ValuePtr> items;  // list/tuple items; dict keys and values alternating
};

ValuePtr make(Value::Kind k) {
  auto v = std::make_shared<Value>();
  v->kind = k;
  return v;
}

class Unpickler {
 public:
  Unpickler(const ZipReader& zip, std::string prefix, std::string_view pickle, std::string what)
      : zip_(zip), prefix_(std::move(prefix)), p_(pickle), what_(std::move(what)) {}

  ValuePtr run() {
    while (at_ < p_.size()) {
      const auto op = static_cast<uint8_t>(p_[at_++]);
      if (op == '.') {
        check(stack_.size() == 1, "the pickle ends with ", stack_.size(), " values on the stack");
        return stack_.back();
      }
      step(op);
    }
    fail("the pickle has no STOP opcode (truncated)");
  }

 private:
  template <class... A>
  [[noreturn]] void fail(const A&... a) {
    BRASA_ERROR("load: '", what_, "': ", a...);
  }
  template <class... A>
  void check(bool ok, const A&... a) {
    if (!ok) fail(a...);
  }
  std::string_view take(size_t n) {
    check(n <= p_.size() - at_, "the pickle is truncated");
    auto s = p_.substr(at_, n);
    at_ += n;
    return s;
  }
  uint64_t le(int n) {
    auto s = take(static_cast<size_t>(n));
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<uint8_t>(s[static_cast<size_t>(k)]);
    return v;
  }
  std::string line() {
    const size_t end = p_.find('\n', at_);
    check(end != std::string_view::npos, "the pickle is truncated (GLOBAL)");
    std::string s(p_.substr(at_, end - at_));
    at_ = end + 1;
    return s;
  }
  ValuePtr pop() {
    check(!stack_.empty() && stack_.back()->kind != Value::Mark, "the pickle pops an empty stack");
    auto v = stack_.back();
    stack_.pop_back();
    return v;
  }
  // The values above the topmost mark, removing them and the mark.
  std::vector<ValuePtr> pop_to_mark() {
    std::vector<ValuePtr> out;
    while (!stack_.empty() && stack_.back()->kind != Value::Mark) {
      out.push_back(stack_.back());
      stack_.pop_back();
    }
    check(!stack_.empty(), "the pickle has no MARK to pop to");
    stack_.pop_back();
    return std::vector<ValuePtr>(out.rbegin(), out.rend());
  }
  void push(ValuePtr v) {
    check(stack_.size() < 1000000, "the pickle's stack grows past a million values");
    stack_.push_back(std::move(v));
  }
  void memo_put(uint64_t key) {
    check(!stack_.empty(), "the pickle memoizes an empty stack");
    check(memo_.size() < 10000000, "the pickle's memo grows past ten million values");
    memo_[key] = stack_.back();
  }
  ValuePtr memo_get(uint64_t key) {
    auto it = memo_.find(key);
    check(it != memo_.end(), "the pickle refers to memo entry ", key, ", which it never stored");
    return it->second;
  }
  ValuePtr tuple_of(std::vector<ValuePtr> items) {
    auto v = make(Value::Tuple);
    v->items = std::move(items);
    return v;
  }
  int64_t int_of(const ValuePtr& v, const char* field) {
    check(v->kind == Value::Int, field, " must be an integer");
    return v->i;
  }
  ValuePtr global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    static const std::set<std::string> allowed = {"collections.OrderedDict",
                                                  "torch._utils._rebuild_tensor_v2",
                                                  "torch._utils._rebuild_parameter"};
    const bool storage = module == "torch" && storage_types().count(name);
    check(storage || allowed.count(full), "refusing to load: the file asks to call Python's ", full,
          "; only tensors, lists, tuples and dicts of them, numbers and strings can be "
          "loaded (the unpickler executes nothing else)");
    auto v = make(Value::Global);
    v->s = full;
    if (storage) v->dtype = storage_types().at(name);
    return v;
  }
  // BINPERSID: ('storage', storage type, key, location, numel) -> the storage record.
  ValuePtr persistent(const ValuePtr& pid) {
    check(pid->kind == Value::Tuple && pid->items.size() == 5 &&
              pid->items[0]->kind == Value::String && pid->items[0]->s == "storage" &&
              pid->items[1]->kind == Value::Global && pid->items[2]->kind == Value::String &&
              pid->items[4]->kind == Value::Int,
          "unexpected persistent id (not a tensor storage)");
    const ScalarType dtype = pid->items[1]->dtype;
    const std::string& key = pid->items[2]->s;
    auto cached = storages_.find(key);
    if (cached != storages_.end()) return cached->second;
    const int64_t numel = pid->items[4]->i;
    const std::string record = prefix_ + "data/" + key;
    check(zip_.has(record), "storage record '", record, "' is missing");
    std::string_view bytes = zip_.read(record);
    const size_t item = elementSize(dtype);
    check(numel >= 0 && static_cast<uint64_t>(numel) <= bytes.size() / item, "storage '", key,
          "' claims ", numel, " elements of ", toString(dtype),
          " but its record "
          "holds ",
          bytes.size(), " bytes");
    const size_t nbytes = static_cast<size_t>(numel) * item;
    Storage s = Storage::allocate(nbytes, getCPUAllocator());
    if (nbytes) std::memcpy(s->data(), bytes.data(), nbytes);
    auto v = make(Value::Storage_);
    v->storage = s;
    v->dtype = dtype;
    storages_[key] = v;
    return v;
  }
  // _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]).
  ValuePtr rebuild_tensor(const std::vector<ValuePtr>& a) {
    check(a.size() >= 4 && a[0]->kind == Value::Storage_ && a[2]->kind == Value::Tuple &&
              a[3]->kind == Value::Tuple && a[2]->items.size() == a[3]->items.size(),
          "malformed _rebuild_tensor_v2 arguments");
    const int64_t offset = int_of(a[1], "a tensor's storage offset");
    std::vector<int64_t> sizes, strides;
    for (size_t k = 0; k < a[2]->items.size(); ++k) {
      sizes.push_back(int_of(a[2]->items[k], "a tensor size"));
      strides.push_back(int_of(a[3]->items[k], "a tensor stride"));
    }
    const int64_t capacity =
        static_cast<int64_t>(a[0]->storage->nbytes() / elementSize(a[0]->dtype));
    int64_t last = offset;
    bool empty = false;
    for (size_t k = 0; k < sizes.size(); ++k) {
      check(sizes[k] >= 0 && strides[k] >= 0, "negative tensor size or stride");
      empty |= sizes[k] == 0;
      int64_t span = 0;
      check(sizes[k] == 0 || (!__builtin_mul_overflow(sizes[k] - 1, strides[k], &span) &&
                              !__builtin_add_overflow(last, span, &last)),
            "tensor extent overflows");
    }
    check(offset >= 0 && (empty || last < capacity), "a tensor of shape ", IntArrayRef(sizes),
          " at offset ", offset, " lies outside its storage of ", capacity, " elements");
    auto v = make(Value::Tensor_);
    v->t = Tensor(make_intrusive<TensorImpl>(a[0]->storage, a[0]->dtype, sizes, strides, offset));
    if (a.size() >= 5 && a[4]->kind == Value::Bool && a[4]->b) v->t.requires_grad_(true);
    return v;
  }
  ValuePtr reduce(const ValuePtr& fn, const ValuePtr& args) {
    check(fn->kind == Value::Global && args->kind == Value::Tuple, "REDUCE of a non-callable");
    if (fn->s == "collections.OrderedDict") {
      check(args->items.empty(), "OrderedDict with arguments");
      return make(Value::Dict);
    }
    if (fn->s == "torch._utils._rebuild_tensor_v2") return rebuild_tensor(args->items);
    if (fn->s == "torch._utils._rebuild_parameter") {
      check(args->items.size() >= 2 && args->items[0]->kind == Value::Tensor_,
            "malformed _rebuild_parameter arguments");
      auto v = make(Value::Tensor_);
      v->t = args->items[0]->t.detach();
      if (args->items[1]->kind == Value::Bool && args->items[1]->b) v->t.requires_grad_(true);
      return v;
    }
    fail("refusing to call ", fn->s);
  }
  void set_items(const ValuePtr& dict, const std::vector<ValuePtr>& kv) {
    check(dict->kind == Value::Dict && kv.size() % 2 == 0, "SETITEMS on a non-dict");
    for (size_t k = 0; k < kv.size(); k += 2) {
      bool replaced = false;
      for (size_t j = 0; j < dict->items.size(); j += 2) {
        const auto& key = dict->items[j];
        if (key->kind == kv[k]->kind && key->s == kv[k]->s && key->i == kv[k]->i) {
          dict->items[j + 1] = kv[k + 1];
          replaced = true;
        }
      }
      if (!replaced) dict->items.insert(dict->items.end(), {kv[k], kv[k + 1]});
    }
  }

  void step(uint8_t op) {
    switch (op) {
      case 0x80:
        take(1);
        break;  // PROTO
      case 0x95:
        take(8);
        break;  // FRAME
      case '(':
        push(make(Value::Mark));
        break;
      case ')':
        push(make(Value::Tuple));
        break;
      case ']':
        push(make(Value::List));
        break;
      case '}':
        push(make(Value::Dict));
        break;
      case 'N':
        push(make(Value::None));
        break;
      case 0x88:
      case 0x89: {
        auto v = make(Value::Bool);
        v->b = op == 0x88;
        push(v);
        break;
      }
      case 'K':
      case 'M':
      case 'J': {
        auto v = make(Value::Int);
        const int n = op == 'K' ? 1 : op == 'M' ? 2 : 4;
        const uint64_t raw = le(n);
        v->i = n == 4 ? static_cast<int32_t>(raw) : static_cast<int64_t>(raw);
        push(v);
        break;
      }
      case 0x8a: {  // LONG1
        const size_t n = static_cast<uint8_t>(take(1)[0]);
        check(n <= 8, "integers wider than 64 bits are not supported");
        uint64_t raw = n ? le(static_cast<int>(n)) : 0;
        if (n && n < 8 && (raw >> (8 * n - 1)) & 1) raw |= ~uint64_t{0} << (8 * n);  // sign
        auto v = make(Value::Int);
        v->i = static_cast<int64_t>(raw);
        push(v);
        break;
      }
      case 'G': {  // big-endian double
        auto s = take(8);
        uint64_t raw = 0;
        for (char c : s) raw = (raw << 8) | static_cast<uint8_t>(c);
        auto v = make(Value::Float);
        std::memcpy(&v->d, &raw, 8);
        push(v);
        break;
      }
      case 'X':
      case 0x8c:
      case 0x8d: {  // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
        const uint64_t n = le(op == 'X' ? 4 : op == 0x8c ? 1 : 8);
        check(n <= p_.size() - at_, "a string runs past the pickle");
        auto v = make(Value::String);
        v->s = std::string(take(static_cast<size_t>(n)));
        push(v);
        break;
      }
      case 'c': {
        std::string module = line(), name = line();
        push(global(module, name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        auto name = pop(), module = pop();
        check(module->kind == Value::String && name->kind == Value::String,
              "STACK_GLOBAL of non-strings");
        push(global(module->s, name->s));
        break;
      }
      case 'q':
        memo_put(le(1));
        break;
      case 'r':
        memo_put(le(4));
        break;
      case 0x94:
        memo_put(memo_.size());
        break;
      case 'h':
        push(memo_get(le(1)));
        break;
      case 'j':
        push(memo_get(le(4)));
        break;
      case 't':
        push(tuple_of(pop_to_mark()));
        break;
      case 0x85:
        push(tuple_of({pop()}));
        break;
      case 0x86: {
        auto b = pop(), a = pop();
        push(tuple_of({a, b}));
        break;
      }
      case 0x87: {
        auto c = pop(), b = pop(), a = pop();
        push(tuple_of({a, b, c}));
        break;
      }
      case 'l': {
        auto v = make(Value::List);
        v->items = pop_to_mark();
        push(v);
        break;
      }
      case 'a': {
        auto item = pop();
        check(!stack_.empty() && stack_.back()->kind == Value::List, "APPEND to a non-list");
        stack_.back()->items.push_back(item);
        break;
      }
      case 'e': {
        auto items = pop_to_mark();
        check(!stack_.empty() && stack_.back()->kind == Value::List, "APPENDS to a non-list");
        auto& dst = stack_.back()->items;
        dst.insert(dst.end(), items.begin(), items.end());
        break;
      }
      case 's': {
        auto value = pop(), key = pop();
        check(!stack_.empty(), "SETITEM on an empty stack");
        set_items(stack_.back(), {key, value});
        break;
      }
      case 'u': {
        auto kv = pop_to_mark();
        check(!stack_.empty(), "SETITEMS on an empty stack");
        set_items(stack_.back(), kv);
        break;
      }
      case 'Q':
        push(persistent(pop()));
        break;
      case 'R': {
        auto args = pop(), fn = pop();
        push(reduce(fn, args));
        break;
      }
      case 'b': {  // BUILD: a state_dict's _metadata; kept out of the result
        auto state = pop();
        check(!stack_.empty() && stack_.back()->kind == Value::Dict,
              "BUILD on something other than a dict");
        (void)state;
        break;
      }
      default:
        fail("unsupported pickle opcode 0x", std::hex, static_cast<int>(op), std::dec,
             " at offset ", at_ - 1, " (not a tensor, list, dict, number or string)");
    }
  }

  const ZipReader& zip_;
  std::string prefix_;
  std::string_view p_;
  std::string what_;
  size_t at_ = 0;
  std::vector<ValuePtr> stack_;
  std::map<uint64_t, ValuePtr> memo_;
  std::map<std::string, ValuePtr> storages_;
};

IValue to_ivalue(const ValuePtr& v, const std::string& what) {
  auto unsupported = [&](const char* kind) -> IValue {
    BRASA_ERROR("load: '", what, "' holds ", kind,
                ", which Brasa's IValue cannot hold (tensors, lists of tensors or of ints, "
                "string-keyed dicts of tensors, numbers, strings, None)");
  };
  switch (v->kind) {
    case Value::None:
      return IValue();
    case Value::Bool:
      return IValue(v->b);
    case Value::Int:
      return IValue(v->i);
    case Value::Float:
      return IValue(v->d);
    case Value::String:
      return IValue(v->s);
    case Value::Tensor_:
      return IValue(v->t);
    case Value::List:
    case Value::Tuple: {
      bool tensors = true, ints = true;
      for (const auto& x : v->items) {
        tensors &= x->kind == Value::Tensor_;
        ints &= x->kind == Value::Int;
      }
      if (ints && !v->items.empty()) {
        std::vector<int64_t> out;
        for (const auto& x : v->items) out.push_back(x->i);
        return IValue(std::move(out));
      }
      if (!tensors) return unsupported("a list of mixed values");
      std::vector<Tensor> out;
      for (const auto& x : v->items) out.push_back(x->t);
      return IValue(std::move(out));
    }
    case Value::Dict: {
      IValue::TensorDict out;
      for (size_t k = 0; k < v->items.size(); k += 2) {
        if (v->items[k]->kind != Value::String || v->items[k + 1]->kind != Value::Tensor_)
          return unsupported("a dict that is not string keys to tensors");
        out.emplace_back(v->items[k]->s, v->items[k + 1]->t);
      }
      return IValue(std::move(out));
    }
    default:
      return unsupported("an object that is not a value");
  }
}

// ---- writing: a pickle of protocol 2 ----

class Pickler {
 public:
  std::string bytes;
  std::vector<std::pair<std::string, Storage>> storages;  // key, storage

  void value(const IValue& v) {
    if (v.isNone()) {
      op('N');
    } else if (v.isTensor()) {
      tensor(v.toTensor());
    } else if (v.isTensorList()) {
      op(']');
      op('(');
      for (const Tensor& t : v.toTensorVector()) tensor(t);
      op('e');
    } else if (v.isGenericDict()) {
      ordered_dict();
      op('(');
      for (const auto& [k, t] : v.toTensorItems()) {
        string(k);
        tensor(t);
      }
      op('u');
    } else if (v.isDouble()) {
      op('G');
      double d = v.toDouble();
      uint64_t raw;
      std::memcpy(&raw, &d, 8);
      for (int k = 7; k >= 0; --k) bytes.push_back(static_cast<char>((raw >> (8 * k)) & 0xff));
    } else if (v.isInt()) {
      integer(v.toInt());
    } else if (v.isBool()) {
      op(v.toBool() ? 0x88 : 0x89);
    } else if (v.isString()) {
      string(v.toStringRef());
    } else {
      op(']');
      op('(');
      for (int64_t x : v.toIntVector()) integer(x);
      op('e');
    }
  }

 private:
  void op(int c) { bytes.push_back(static_cast<char>(c)); }
  void le(uint64_t v, int n) {
    for (int k = 0; k < n; ++k) bytes.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
  }
  void integer(int64_t x) {
    if (x >= 0 && x < 256) {
      op('K');
      le(static_cast<uint64_t>(x), 1);
    } else if (x >= INT32_MIN && x <= INT32_MAX) {
      op('J');
      le(static_cast<uint32_t>(static_cast<int32_t>(x)), 4);
    } else {
      op(0x8a);
      le(8, 1);
      le(static_cast<uint64_t>(x), 8);
    }
  }
  void string(const std::string& s) {
    op('X');
    le(s.size(), 4);
    bytes += s;
  }
  void global(const char* module, const std::string& name) {
    op('c');
    bytes += module;
    bytes += '\n';
    bytes += name;
    bytes += '\n';
  }
  void ordered_dict() {
    global("collections", "OrderedDict");
    op(')');
    op('R');
  }
  void tuple_of_ints(IntArrayRef v) {
    op('(');
    for (int64_t x : v) integer(x);
    op('t');
  }
  void tensor(Tensor t) {
    BRASA_CHECK(t.defined(), "pickle_save: an undefined tensor cannot be saved");
    if (!t.device().is_cpu()) t = t.cpu();
    const StorageImpl* s = t.storage().get();
    std::string key;
    for (const auto& [k, st] : storages)
      if (st.get() == s) key = k;
    if (key.empty()) {
      key = std::to_string(storages.size());
      storages.emplace_back(key, t.storage());
    }
    std::string type;
    for (const auto& [name, dtype] : storage_types())
      if (dtype == t.scalar_type()) type = name;
    global("torch._utils", "_rebuild_tensor_v2");
    op('(');
    op('(');  // the persistent id
    string("storage");
    global("torch", type);
    string(key);
    string("cpu");
    integer(static_cast<int64_t>(t.storage()->nbytes() / t.element_size()));
    op('t');
    op('Q');
    integer(t.storage_offset());
    tuple_of_ints(t.sizes());
    tuple_of_ints(t.strides());
    op(t.requires_grad() ? 0x88 : 0x89);
    ordered_dict();  // backward hooks
    op('t');
    op('R');
  }
};

}  // namespace

IValue load_pt(std::string_view bytes, const std::string& what) {
  ZipReader zip(std::string(bytes), what);
  std::string pickle_name;
  for (const auto& n : zip.names()) {
    const std::string suffix = "data.pkl";
    if (n.size() >= suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        n.find('/') == n.size() - suffix.size() - 1)
      pickle_name = n;
  }
  BRASA_CHECK(!pickle_name.empty(), "load: '", what,
              "' is a zip archive without <name>/data.pkl (not a file of torch.save)");
  const std::string prefix = pickle_name.substr(0, pickle_name.size() - 8);
  BRASA_CHECK(!zip.has(prefix + "constants.pkl"), "load: '", what,
              "' is a TorchScript module archive (torch.jit.save or libtorch's torch::save of a "
              "module); save its state_dict with torch.save instead");
  Unpickler u(zip, prefix, zip.read(pickle_name), what);
  return to_ivalue(u.run(), what);
}

void save_pt(const std::string& path, const IValue& value) {
  auto bytes = pickle_save(value);
  write_file_atomically(path, std::string(bytes.begin(), bytes.end()));
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  BRASA_CHECK(in, "load: cannot open '", path, "'");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace serialize

std::vector<char> pickle_save(const IValue& value) {
  serialize::Pickler p;
  p.value(value);
  std::string pickle = "\x80\x02" + p.bytes + ".";
  serialize::ZipWriter zip;
  zip.add("archive/data.pkl", pickle);
  for (const auto& [key, storage] : p.storages) {
    std::string_view data(static_cast<const char*>(storage->data()), storage->nbytes());
    zip.add("archive/data/" + key, data);
  }
  zip.add("archive/version", "3\n");
  std::string out = zip.finish();
  return std::vector<char>(out.begin(), out.end());
}

IValue pickle_load(const std::vector<char>& data) {
  return serialize::load_pt(std::string_view(data.data(), data.size()), "pickle_load bytes");
}

}  // namespace brasa
