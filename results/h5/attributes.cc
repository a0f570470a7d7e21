// Object's attribute methods: write (create or replace) and typed reads. See object.h
// for the stored types. Every HDF5 id opened here is held by a Handle, so no path
// (success, HDF5 failure, type mismatch) leaks one.
#include "results/h5/detail/types.h"
#include "results/h5/object.h"

namespace fk::h5 {
using namespace detail;

namespace {

std::string attr_label(const std::string& path, std::string_view name) {
  return fmt::format("{} (attribute '{}')", path, name);
}

Handle attr_space(int64_t count_or_scalar, Where at) {
  if (count_or_scalar < 0) return h5_own(H5Screate(H5S_SCALAR), at, "cannot create dataspace");
  const hsize_t dims[1] = {static_cast<hsize_t>(count_or_scalar)};
  return h5_own(H5Screate_simple(1, dims, nullptr), at, "cannot create dataspace");
}

// Creates (or replaces) attribute `name` on `owner` and writes `data` when non-empty.
// `count`: number of elements of a 1-D attribute, or -1 for a scalar.
void write_attribute(hid_t owner, Where at, std::string_view name, hid_t file_type, hid_t mem_type, int64_t count,
                     const void* data) {
  const std::string key(name);
  if (key.empty()) fail_at(ErrorKind::kInvalidArgument, at, "attribute names must not be empty");
  if (h5_test(H5Aexists(owner, key.c_str()), at, "cannot look up attribute")) {
    h5_check(H5Adelete(owner, key.c_str()), at, "cannot replace attribute");
  }
  Handle space = attr_space(count, at);
  Handle attr = h5_own(H5Acreate2(owner, key.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), at,
                       "cannot create attribute");
  if (count != 0) h5_check(H5Awrite(attr.get(), mem_type, data), at, "cannot write attribute");
}

struct OpenAttribute {
  Handle attr;
  Handle type;
  size_t count = 0;
};

OpenAttribute open_attribute(hid_t owner, Where at, std::string_view name) {
  const std::string key(name);
  if (!h5_test(H5Aexists(owner, key.c_str()), at, "cannot look up attribute")) {
    fail_at(ErrorKind::kNotFound, at, "no such attribute");
  }
  OpenAttribute out;
  out.attr = h5_own(H5Aopen(owner, key.c_str(), H5P_DEFAULT), at, "cannot open attribute");
  out.type = h5_own(H5Aget_type(out.attr.get()), at, "cannot read attribute type");
  Handle space = h5_own(H5Aget_space(out.attr.get()), at, "cannot read attribute dataspace");
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  if (points < 0) fail_io(at, "cannot read attribute size");
  out.count = static_cast<size_t>(points);
  return out;
}

enum class Want { kString, kInteger, kFloat, kBool };

void require_class(const OpenAttribute& a, Want want, Where at) {
  const hid_t type = a.type.get();
  const H5T_class_t cls = H5Tget_class(type);
  bool ok = false;
  std::string_view wanted;
  switch (want) {
    case Want::kString:
      ok = cls == H5T_STRING;
      wanted = "string";
      break;
    case Want::kInteger:
      ok = cls == H5T_INTEGER;
      wanted = "integer";
      break;
    case Want::kFloat:
      ok = cls == H5T_FLOAT;
      wanted = "float";
      break;
    case Want::kBool:
      ok = cls == H5T_INTEGER || h5_is_bool_type(type);
      wanted = "bool";
      break;
  }
  if (!ok) {
    fail_at(ErrorKind::kInvalidArgument, at, fmt::format("holds {}, not {}", h5_describe_type(type), wanted));
  }
}

void require_single(const OpenAttribute& a, Where at) {
  if (a.count != 1) {
    fail_at(ErrorKind::kInvalidArgument, at, fmt::format("holds {} elements, not one (read it as a vector)", a.count));
  }
}

template <typename T>
std::vector<T> read_numbers(const OpenAttribute& a, hid_t mem_type, Where at) {
  std::vector<T> out(a.count);
  if (a.count != 0) h5_check(H5Aread(a.attr.get(), mem_type, out.data()), at, "cannot read attribute");
  return out;
}

std::vector<bool> read_bools(const OpenAttribute& a, Where at) {
  std::vector<int64_t> raw;
  if (h5_is_bool_type(a.type.get())) {
    Handle mem = h5_bool_type(at);
    std::vector<int8_t> bytes = read_numbers<int8_t>(a, mem.get(), at);
    raw.assign(bytes.begin(), bytes.end());
  } else {
    raw = read_numbers<int64_t>(a, H5T_NATIVE_INT64, at);
  }
  std::vector<bool> out;
  for (int64_t v : raw) out.push_back(v != 0);
  return out;
}

}  // namespace

bool Object::has_attr(std::string_view name) const {
  const std::string label = attr_label(path_, name);
  return h5_test(H5Aexists(id_.get(), std::string(name).c_str()), {file_, label}, "cannot look up attribute");
}

std::vector<std::string> Object::attr_names() const {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  h5_check(H5Aiterate2(id_.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names), where(),
           "cannot list attributes");
  return names;
}

void Object::set_attr(std::string_view name, std::string_view value) {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  h5_require_no_nul(value, at, "value");
  Handle type = h5_string_type(at);
  const std::string owned(value);
  const char* pointer = owned.c_str();
  write_attribute(id_.get(), at, name, type.get(), type.get(), -1, &pointer);
}

void Object::set_attr_int64(std::string_view name, int64_t value) {
  const std::string label = attr_label(path_, name);
  write_attribute(id_.get(), {file_, label}, name, H5T_STD_I64LE, H5T_NATIVE_INT64, -1, &value);
}

void Object::set_attr(std::string_view name, double value) {
  const std::string label = attr_label(path_, name);
  write_attribute(id_.get(), {file_, label}, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, -1, &value);
}

void Object::set_attr(std::string_view name, bool value) {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  Handle type = h5_bool_type(at);
  const int8_t byte = value ? 1 : 0;
  write_attribute(id_.get(), at, name, type.get(), type.get(), -1, &byte);
}

void Object::set_attr(std::string_view name, const std::vector<int64_t>& values) {
  const std::string label = attr_label(path_, name);
  write_attribute(id_.get(), {file_, label}, name, H5T_STD_I64LE, H5T_NATIVE_INT64, static_cast<int64_t>(values.size()),
                  values.data());
}

void Object::set_attr(std::string_view name, const std::vector<double>& values) {
  const std::string label = attr_label(path_, name);
  write_attribute(id_.get(), {file_, label}, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                  static_cast<int64_t>(values.size()), values.data());
}

void Object::set_attr(std::string_view name, const std::vector<std::string>& values) {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const std::string& v : values) {
    h5_require_no_nul(v, at, "a value");
    pointers.push_back(v.c_str());
  }
  Handle type = h5_string_type(at);
  write_attribute(id_.get(), at, name, type.get(), type.get(), static_cast<int64_t>(values.size()), pointers.data());
}

template <>
std::string Object::attr<std::string>(std::string_view name) const {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  OpenAttribute a = open_attribute(id_.get(), at, name);
  require_class(a, Want::kString, at);
  require_single(a, at);
  return h5_read_strings(a.attr.get(), Source::kAttribute, a.type.get(), 1, at).front();
}

template <>
int64_t Object::attr<int64_t>(std::string_view name) const {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  OpenAttribute a = open_attribute(id_.get(), at, name);
  require_class(a, Want::kInteger, at);
  require_single(a, at);
  return read_numbers<int64_t>(a, H5T_NATIVE_INT64, at).front();
}

template <>
double Object::attr<double>(std::string_view name) const {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  OpenAttribute a = open_attribute(id_.get(), at, name);
  require_class(a, Want::kFloat, at);
  require_single(a, at);
  return read_numbers<double>(a, H5T_NATIVE_DOUBLE, at).front();
}

template <>
bool Object::attr<bool>(std::string_view name) const {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  OpenAttribute a = open_attribute(id_.get(), at, name);
  require_class(a, Want::kBool, at);
  require_single(a, at);
  return read_bools(a, at).front();
}

template <>
std::vector<int64_t> Object::attr<std::vector<int64_t>>(std::string_view name) const {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  OpenAttribute a = open_attribute(id_.get(), at, name);
  require_class(a, Want::kInteger, at);
  return read_numbers<int64_t>(a, H5T_NATIVE_INT64, at);
}

template <>
std::vector<double> Object::attr<std::vector<double>>(std::string_view name) const {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  OpenAttribute a = open_attribute(id_.get(), at, name);
  require_class(a, Want::kFloat, at);
  return read_numbers<double>(a, H5T_NATIVE_DOUBLE, at);
}

template <>
std::vector<std::string> Object::attr<std::vector<std::string>>(std::string_view name) const {
  const std::string label = attr_label(path_, name);
  const Where at{file_, label};
  OpenAttribute a = open_attribute(id_.get(), at, name);
  require_class(a, Want::kString, at);
  if (a.count == 0) return {};
  return h5_read_strings(a.attr.get(), Source::kAttribute, a.type.get(), a.count, at);
}

}  // namespace fk::h5
