#include "results/h5/detail/types.h"

#include <cstring>

namespace fk::h5::detail {

hid_t h5_native_type(DType dtype, Where where) {
  switch (dtype) {
    case DType::kF64:
      return H5T_NATIVE_DOUBLE;
    case DType::kF32:
      return H5T_NATIVE_FLOAT;
    case DType::kI64:
      return H5T_NATIVE_INT64;
    case DType::kI32:
      return H5T_NATIVE_INT32;
    case DType::kU8:
      return H5T_NATIVE_UINT8;
    case DType::kF16:
    case DType::kBF16:
      break;
  }
  fail_at(ErrorKind::kUnsupported, where,
          fmt::format("element type {} cannot be stored (use fp32 or fp64)", dtype_name(dtype)));
}

hid_t h5_file_type(DType dtype, Where where) {
  switch (dtype) {
    case DType::kF64:
      return H5T_IEEE_F64LE;
    case DType::kF32:
      return H5T_IEEE_F32LE;
    case DType::kI64:
      return H5T_STD_I64LE;
    case DType::kI32:
      return H5T_STD_I32LE;
    case DType::kU8:
      return H5T_STD_U8LE;
    case DType::kF16:
    case DType::kBF16:
      break;
  }
  fail_at(ErrorKind::kUnsupported, where,
          fmt::format("element type {} cannot be stored (use fp32 or fp64)", dtype_name(dtype)));
}

std::optional<DType> h5_dtype_of(hid_t type) {
  const size_t size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      if (size == 8) return DType::kF64;
      if (size == 4) return DType::kF32;
      return std::nullopt;
    case H5T_INTEGER: {
      const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
      if (!is_signed && size == 1) return DType::kU8;
      if (size < 4 || (is_signed && size == 4)) return DType::kI32;
      if (size <= 8 && !(size == 8 && !is_signed)) return DType::kI64;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

Handle h5_string_type(Where where) {
  Handle type = h5_own(H5Tcopy(H5T_C_S1), where, "cannot create string type");
  h5_check(H5Tset_size(type.get(), H5T_VARIABLE), where, "cannot create string type");
  h5_check(H5Tset_cset(type.get(), H5T_CSET_UTF8), where, "cannot create string type");
  return type;
}

Handle h5_bool_type(Where where) {
  Handle type = h5_own(H5Tenum_create(H5T_NATIVE_INT8), where, "cannot create bool type");
  const int8_t no = 0;
  const int8_t yes = 1;
  h5_check(H5Tenum_insert(type.get(), "FALSE", &no), where, "cannot create bool type");
  h5_check(H5Tenum_insert(type.get(), "TRUE", &yes), where, "cannot create bool type");
  return type;
}

bool h5_is_bool_type(hid_t type) {
  if (H5Tget_class(type) != H5T_ENUM || H5Tget_size(type) != 1 || H5Tget_nmembers(type) != 2) {
    return false;
  }
  bool ok = true;
  for (unsigned i = 0; i < 2; ++i) {
    char* name = H5Tget_member_name(type, i);
    int8_t value = -1;
    const bool got = name != nullptr && H5Tget_member_value(type, i, &value) >= 0;
    ok = ok && got &&
         ((value == 0 && std::strcmp(name, "FALSE") == 0) || (value == 1 && std::strcmp(name, "TRUE") == 0));
    if (name != nullptr) H5free_memory(name);
  }
  H5Eclear2(H5E_DEFAULT);
  return ok;
}

std::string h5_describe_type(hid_t type) {
  if (h5_is_bool_type(type)) return "bool";
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return fmt::format("{}-bit integer", 8 * H5Tget_size(type));
    case H5T_FLOAT:
      return fmt::format("{}-bit float", 8 * H5Tget_size(type));
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    case H5T_ENUM:
      return "enum";
    case H5T_ARRAY:
      return "array";
    case H5T_VLEN:
      return "variable-length sequence";
    case H5T_OPAQUE:
      return "opaque";
    case H5T_REFERENCE:
      return "reference";
    case H5T_BITFIELD:
      return "bitfield";
    case H5T_TIME:
      return "time";
    default:
      return "unknown type";
  }
}

void h5_require_no_nul(std::string_view value, Where where, std::string_view what) {
  if (value.find('\0') != std::string_view::npos) {
    fail_at(ErrorKind::kInvalidArgument, where,
            fmt::format("{} contains a NUL byte; HDF5 strings cannot hold it", what));
  }
}

bool h5_type_has_vlen(hid_t type) {
  switch (H5Tget_class(type)) {
    case H5T_VLEN:
      return true;
    case H5T_STRING:
      return H5Tis_variable_str(type) > 0;
    case H5T_ARRAY: {
      const Handle base(H5Tget_super(type));
      return base.valid() && h5_type_has_vlen(base.get());
    }
    case H5T_COMPOUND: {
      const int members = H5Tget_nmembers(type);
      for (int i = 0; i < members; ++i) {
        const Handle member(H5Tget_member_type(type, static_cast<unsigned>(i)));
        if (member.valid() && h5_type_has_vlen(member.get())) return true;
      }
      return false;
    }
    default:
      return false;
  }
}

herr_t h5_reclaim_vlen(hid_t mem_type, hid_t space, void* buffer) {
#if H5_VERSION_GE(1, 12, 0)
  return H5Treclaim(mem_type, space, H5P_DEFAULT, buffer);
#else
  return H5Dvlen_reclaim(mem_type, space, H5P_DEFAULT, buffer);
#endif
}

namespace {

herr_t read_into(hid_t object, Source source, hid_t mem_type, void* buffer) {
  return source == Source::kAttribute ? H5Aread(object, mem_type, buffer)
                                      : H5Dread(object, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
}

hid_t space_of(hid_t object, Source source) {
  return source == Source::kAttribute ? H5Aget_space(object) : H5Dget_space(object);
}

std::vector<std::string> read_variable(hid_t object, Source source, hid_t file_type, size_t count, Where where) {
  Handle mem = h5_own(H5Tcopy(H5T_C_S1), where, "cannot create string type");
  h5_check(H5Tset_size(mem.get(), H5T_VARIABLE), where, "cannot create string type");
  h5_check(H5Tset_cset(mem.get(), H5Tget_cset(file_type)), where, "cannot create string type");
  Handle space = h5_own(space_of(object, source), where, "cannot read dataspace");
  std::vector<char*> pointers(count, nullptr);
  const VlenReclaimer reclaim(mem.get(), space.get(), pointers.data());
  h5_check(read_into(object, source, mem.get(), pointers.data()), where, "cannot read strings");
  std::vector<std::string> out;
  out.reserve(count);
  for (char* p : pointers) out.emplace_back(p != nullptr ? p : "");
  return out;
}

std::vector<std::string> read_fixed(hid_t object, Source source, hid_t file_type, size_t count, Where where) {
  const size_t width = H5Tget_size(file_type);
  Handle mem = h5_own(H5Tcopy(file_type), where, "cannot create string type");
  std::vector<char> buffer(width * count + 1, '\0');
  h5_check(read_into(object, source, mem.get(), buffer.data()), where, "cannot read strings");
  const bool space_padded = H5Tget_strpad(file_type) == H5T_STR_SPACEPAD;
  std::vector<std::string> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    std::string_view cell(buffer.data() + i * width, width);
    cell = cell.substr(0, cell.find('\0'));
    if (space_padded) cell = cell.substr(0, cell.find_last_not_of(' ') + 1);
    out.emplace_back(cell);
  }
  return out;
}

}  // namespace

std::vector<std::string> h5_read_strings(hid_t object, Source source, hid_t file_type, size_t count, Where where) {
  if (h5_test(H5Tis_variable_str(file_type), where, "cannot inspect string type")) {
    return read_variable(object, source, file_type, count, where);
  }
  return read_fixed(object, source, file_type, count, where);
}

}  // namespace fk::h5::detail
