//===- Calls.cpp - the extension soac._calls: calls of compiled code -------===//
//
// The common call of a compiled CPU function, done in C++: numpy arrays and
// Python numbers in, checked and packed into the words of MLIR's packed
// interface, the call through soac_call_checked with the GIL released, and
// numpy arrays over the result buffers out. soac/runtime/abi.py does the same
// in Python (with ctypes), and still does everything this declines: any
// argument that is not a C-contiguous numpy array of exactly the declared
// dtype, rank and static sizes, or a Python number that converts to the
// declared scalar unchanged, goes there, where it is converted or refused
// with the error users see. A call of HAND's small gradient (13 arguments,
// 3 results) spent 45 µs in that Python; here it takes a few.
//
// This module uses no MLIR, so that it stays a small build of its own.
//
//===----------------------------------------------------------------------===//

#include "nanobind/nanobind.h"
#include "nanobind/ndarray.h"
#include "nanobind/stl/string.h"

#include <Python.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

// What the runtime library gives a call (runtime/soac_calls.h).
using PackedFunction = void (*)(void **);
using CheckedCall = const char *(*)(PackedFunction, void **);
using FreeFunction = void (*)(void *);

/// The numpy scalar kinds: the first letter of a dtype's `kind`.
enum class Kind : char { Float = 'f', Int = 'i', UInt = 'u', Bool = 'b' };

/// One argument or result of the signature.
struct Value {
  bool isTensor = false;
  Kind kind = Kind::Float;
  int64_t itemsize = 8;
  // A tensor's sizes, -1 where dynamic.
  std::vector<int64_t> shape;
  // Results: the numpy dtype (arrays) and its scalar type (scalars).
  nb::object dtype;
  nb::object scalarType;
};

/// Kind and size of a buffer's struct-module format, for the single
/// characters numpy uses for native numbers; false for anything else.
bool formatKind(const char *format, Kind &kind, int64_t &size) {
  if (!format || !format[0] || format[1])
    return false;
  switch (format[0]) {
  case 'd': kind = Kind::Float; size = 8; return true;
  case 'f': kind = Kind::Float; size = 4; return true;
  case '?': kind = Kind::Bool; size = 1; return true;
  case 'b': kind = Kind::Int; size = 1; return true;
  case 'h': kind = Kind::Int; size = 2; return true;
  case 'i': kind = Kind::Int; size = 4; return true;
  case 'l': kind = Kind::Int; size = sizeof(long); return true;
  case 'q': kind = Kind::Int; size = 8; return true;
  case 'B': kind = Kind::UInt; size = 1; return true;
  case 'H': kind = Kind::UInt; size = 2; return true;
  case 'I': kind = Kind::UInt; size = 4; return true;
  case 'L': kind = Kind::UInt; size = sizeof(unsigned long); return true;
  case 'Q': kind = Kind::UInt; size = 8; return true;
  default: return false;
  }
}

/// The buffers of a call's tensor arguments, released when the call is over.
struct Buffers {
  std::vector<Py_buffer> views;
  ~Buffers() {
    for (Py_buffer &view : views)
      PyBuffer_Release(&view);
  }
};

/// Frees a result buffer with the runtime's free (the capsule's context)
/// when the last array over it dies.
void freeResult(PyObject *capsule) {
  void *allocated = PyCapsule_GetPointer(capsule, "soac.result");
  auto free = reinterpret_cast<FreeFunction>(PyCapsule_GetContext(capsule));
  if (allocated && free)
    free(allocated);
}

class Plan {
public:
  Plan(uintptr_t checkedCall, uintptr_t packed, uintptr_t free,
       nb::list arguments, nb::list results, nb::object ndarray,
       nb::object zeros, nb::object copy, nb::object failed,
       nb::object declined)
      : checkedCall(reinterpret_cast<CheckedCall>(checkedCall)),
        packed(reinterpret_cast<PackedFunction>(packed)),
        free(reinterpret_cast<FreeFunction>(free)), ndarray(ndarray),
        zeros(zeros), copy(copy), failed(failed), declined(declined) {
    for (nb::handle spec : arguments)
      args.push_back(valueOf(nb::cast<nb::tuple>(spec)));
    for (nb::handle spec : results)
      this->results.push_back(valueOf(nb::cast<nb::tuple>(spec)));
    resultsInStruct = this->results.size() > 1 ||
                      (this->results.size() == 1 && this->results[0].isTensor);
    int64_t offset = 0;
    for (const Value &result : this->results) {
      int64_t size = result.isTensor ? 8 : result.itemsize;
      offset = (offset + size - 1) / size * size; // C's natural alignment
      fieldOffsets.push_back(offset);
      offset += result.isTensor ? 8 * (3 + 2 * result.shape.size()) : size;
    }
    structWords = (offset + 7) / 8;
    for (const Value &arg : args)
      if (arg.isTensor) {
        ++tensors;
        descriptorWords += 3 + 2 * arg.shape.size();
      }
  }

  /// The function's results on `arguments`, or `declined` where the Python
  /// path must run instead (nothing was called then).
  nb::object call(nb::args arguments) {
    if (arguments.size() != args.size())
      return declined;
    // The words of the packed interface: an entry per argument (and one for
    // the results), the descriptor pointers they point to, the descriptors,
    // then the scalars' storage and the results' struct.
    size_t entryCount = args.size() + !results.empty();
    size_t slotCount = tensors + resultsInStruct;
    size_t scalarWords = args.size() + 1;
    std::vector<int64_t> words(entryCount + slotCount + descriptorWords +
                               scalarWords + structWords);
    int64_t *entries = words.data();
    int64_t *slots = entries + entryCount;
    int64_t *descriptors = slots + slotCount;
    int64_t *scalars = descriptors + descriptorWords;
    int64_t *resultStruct = scalars + scalarWords;
    auto address = [](void *p) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(p)); };

    Buffers buffers;
    buffers.views.reserve(tensors);
    size_t entry = 0, slot = 0;
    if (resultsInStruct) {
      entries[entry++] = address(slots + slot);
      slots[slot++] = address(resultStruct);
    }
    for (size_t i = 0; i < args.size(); ++i) {
      PyObject *value = PyTuple_GET_ITEM(arguments.ptr(), i);
      if (!args[i].isTensor) {
        if (!packScalar(value, args[i], scalars + i))
          return declined;
        entries[entry++] = address(scalars + i);
        continue;
      }
      if (Py_TYPE(value) != reinterpret_cast<PyTypeObject *>(ndarray.ptr()))
        return declined;
      Py_buffer view;
      if (PyObject_GetBuffer(value, &view, PyBUF_STRIDES | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        return declined;
      }
      buffers.views.push_back(view);
      if (!fits(view, args[i]))
        return declined;
      entries[entry++] = address(slots + slot);
      slots[slot++] = address(descriptors);
      int64_t rank = view.ndim;
      descriptors[0] = descriptors[1] = address(view.buf);
      descriptors[2] = 0;
      int64_t step = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        descriptors[3 + d] = view.shape[d];
        descriptors[3 + rank + d] = step;
        step *= std::max<int64_t>(view.shape[d], 1);
      }
      descriptors += 3 + 2 * rank;
    }
    if (!results.empty() && !resultsInStruct)
      entries[entry++] = address(scalars + args.size());

    const char *message;
    {
      nb::gil_scoped_release released;
      message = checkedCall(packed, reinterpret_cast<void **>(entries));
    }
    if (message) {
      failed(nb::bytes(message));
      return nb::none(); // `failed` raises
    }
    if (results.empty())
      return nb::none();
    if (!resultsInStruct)
      return scalarResult(scalars + args.size(), results[0]);
    return resultsOf(reinterpret_cast<char *>(resultStruct));
  }

private:
  static Value valueOf(nb::tuple spec) {
    // (is_tensor, kind, itemsize, shape or None, dtype, scalar type)
    Value value;
    value.isTensor = nb::cast<bool>(spec[0]);
    value.kind = static_cast<Kind>(nb::cast<std::string>(spec[1])[0]);
    value.itemsize = nb::cast<int64_t>(spec[2]);
    if (value.isTensor)
      for (nb::handle size : nb::cast<nb::tuple>(spec[3]))
        value.shape.push_back(size.is_none() ? -1 : nb::cast<int64_t>(size));
    value.dtype = nb::borrow(spec[4]);
    value.scalarType = nb::borrow(spec[5]);
    return value;
  }

  /// Whether a buffer is what the compiled code takes for `arg` as it is:
  /// its dtype, rank and static sizes, C-contiguous (numpy's rule: sizes of
  /// 1 have any stride, an empty array is contiguous).
  static bool fits(const Py_buffer &view, const Value &arg) {
    Kind kind;
    int64_t size;
    if (!formatKind(view.format, kind, size) || kind != arg.kind ||
        size != arg.itemsize || view.itemsize != arg.itemsize ||
        view.ndim != static_cast<int>(arg.shape.size()))
      return false;
    bool empty = false;
    for (int d = 0; d < view.ndim; ++d) {
      if (arg.shape[d] >= 0 && view.shape[d] != arg.shape[d])
        return false;
      empty |= view.shape[d] == 0;
    }
    if (empty || !view.strides)
      return true;
    Py_ssize_t expected = view.itemsize;
    for (int d = view.ndim - 1; d >= 0; --d) {
      if (view.shape[d] != 1 && view.strides[d] != expected)
        return false;
      expected *= view.shape[d];
    }
    return true;
  }

  /// Stores a Python bool, int or float that converts to `arg`'s dtype
  /// unchanged (floats rounded to float32 when it is one) in `storage`;
  /// false for anything else (numpy scalars, overflows), which the Python
  /// path converts or refuses.
  static bool packScalar(PyObject *value, const Value &arg, int64_t *storage) {
    std::memset(storage, 0, sizeof *storage);
    bool isBool = PyBool_Check(value);
    bool isInt = PyLong_CheckExact(value) || isBool;
    if (arg.kind == Kind::Float) {
      double number;
      if (PyFloat_Check(value)) { // numpy's float64 is a float too
        number = PyFloat_AS_DOUBLE(value);
      } else if (isInt) {
        number = PyLong_AsDouble(value);
        if (number == -1.0 && PyErr_Occurred()) {
          PyErr_Clear();
          return false;
        }
      } else {
        return false;
      }
      if (arg.itemsize == 8) {
        std::memcpy(storage, &number, 8);
        return true;
      }
      if (arg.itemsize != 4)
        return false;
      float single = static_cast<float>(number);
      if (std::isinf(single) && !std::isinf(number))
        return false; // overflows float32: refused there
      std::memcpy(storage, &single, 4);
      return true;
    }
    if (!isInt)
      return false;
    int overflow = 0;
    long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || (number == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    switch (arg.kind) {
    case Kind::Bool:
      if (number != 0 && number != 1)
        return false;
      *reinterpret_cast<uint8_t *>(storage) = static_cast<uint8_t>(number);
      return true;
    case Kind::Int:
      return storeInteger(number, arg.itemsize, storage);
    default:
      return false;
    }
  }

  static bool storeInteger(long long number, int64_t itemsize, int64_t *storage) {
    switch (itemsize) {
    case 1:
      return storeAs<int8_t>(number, storage);
    case 2:
      return storeAs<int16_t>(number, storage);
    case 4:
      return storeAs<int32_t>(number, storage);
    case 8:
      return storeAs<int64_t>(number, storage);
    default:
      return false;
    }
  }

  template <typename T>
  static bool storeAs(long long number, int64_t *storage) {
    if (number < std::numeric_limits<T>::min() ||
        number > std::numeric_limits<T>::max())
      return false;
    T narrow = static_cast<T>(number);
    std::memcpy(storage, &narrow, sizeof narrow);
    return true;
  }

  /// A scalar result at `at` as a numpy scalar of its dtype.
  static nb::object scalarResult(const void *at, const Value &result) {
    nb::object number;
    switch (result.kind) {
    case Kind::Float:
      number = nb::float_(result.itemsize == 8
                              ? *static_cast<const double *>(at)
                              : *static_cast<const float *>(at));
      break;
    case Kind::Bool:
      number = nb::bool_(*static_cast<const uint8_t *>(at) != 0);
      break;
    case Kind::Int:
      number = nb::int_(readInteger(at, result.itemsize));
      break;
    default:
      number = nb::int_(0);
    }
    return result.scalarType(number);
  }

  static int64_t readInteger(const void *at, int64_t itemsize) {
    switch (itemsize) {
    case 1: return *static_cast<const int8_t *>(at);
    case 2: return *static_cast<const int16_t *>(at);
    case 4: return *static_cast<const int32_t *>(at);
    default: return *static_cast<const int64_t *>(at);
    }
  }

  /// The results in the struct at `fields`: numpy arrays over the buffers
  /// the call allocated, each freed when its last array dies. A buffer
  /// returned twice is owned by its first result; later ones are copies, so
  /// that no two results share memory (as in abi.py).
  nb::object resultsOf(char *fields) {
    // Owners first, so that every buffer is freed even if making an array
    // fails below.
    std::vector<nb::object> owners(results.size());
    std::vector<bool> repeated(results.size(), false);
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i].isTensor)
        continue;
      void *allocated = *reinterpret_cast<void **>(fields + fieldOffsets[i]);
      if (!allocated)
        continue;
      for (size_t j = 0; j < i && !repeated[i]; ++j)
        if (owners[j].is_valid() &&
            *reinterpret_cast<void **>(fields + fieldOffsets[j]) == allocated) {
          owners[i] = owners[j];
          repeated[i] = true;
        }
      if (repeated[i])
        continue;
      PyObject *capsule = PyCapsule_New(allocated, "soac.result", freeResult);
      if (!capsule || PyCapsule_SetContext(capsule, reinterpret_cast<void *>(free)) != 0) {
        Py_XDECREF(capsule);
        freeUnowned(fields, owners, i);
        throw nb::python_error();
      }
      owners[i] = nb::steal(capsule);
    }
    nb::list values;
    for (size_t i = 0; i < results.size(); ++i) {
      char *field = fields + fieldOffsets[i];
      if (!results[i].isTensor) {
        values.append(scalarResult(field, results[i]));
        continue;
      }
      values.append(arrayOf(reinterpret_cast<int64_t *>(field), results[i],
                            owners[i], repeated[i]));
    }
    if (values.size() == 1)
      return values[0];
    return nb::tuple(values);
  }

  /// Frees the buffers of results from `first` on that have no owner yet.
  void freeUnowned(char *fields, const std::vector<nb::object> &owners, size_t first) {
    for (size_t i = first; i < results.size(); ++i) {
      if (!results[i].isTensor || owners[i].is_valid())
        continue;
      void *allocated = *reinterpret_cast<void **>(fields + fieldOffsets[i]);
      bool seen = false;
      for (size_t j = first; j < i; ++j)
        seen |= results[j].isTensor &&
                *reinterpret_cast<void **>(fields + fieldOffsets[j]) == allocated;
      if (allocated && !seen)
        free(allocated);
    }
  }

  nb::object arrayOf(const int64_t *descriptor, const Value &result,
                     nb::handle owner, bool repeated) {
    size_t rank = result.shape.size();
    const int64_t *sizes = descriptor + 3;
    const int64_t *strides = descriptor + 3 + rank;
    auto *aligned = reinterpret_cast<char *>(static_cast<intptr_t>(descriptor[1]));
    nb::tuple shape = nb::steal<nb::tuple>(PyTuple_New(rank));
    bool empty = false;
    for (size_t d = 0; d < rank; ++d) {
      PyTuple_SET_ITEM(shape.ptr(), d, PyLong_FromLongLong(sizes[d]));
      empty |= sizes[d] == 0;
    }
    if (empty || !aligned)
      return zeros(shape, result.dtype);
    std::vector<size_t> dims(sizes, sizes + rank);
    nb::dlpack::dtype type{static_cast<uint8_t>(dlpackCode(result.kind)),
                           static_cast<uint8_t>(8 * result.itemsize), 1};
    nb::ndarray<nb::numpy> array(aligned + descriptor[2] * result.itemsize,
                                 rank, dims.data(), owner, strides, type);
    nb::object view = array.cast();
    // numpy makes a buffer of 64-bit integers `longlong` ('q'), which its
    // `int64` ('l' here) equals but prints as `dtype=int64`: give it the
    // declared dtype itself.
    if (result.kind != Kind::Float && result.itemsize == 8)
      view = view.attr("view")(result.dtype);
    return repeated ? copy(view) : view;
  }

  static nb::dlpack::dtype_code dlpackCode(Kind kind) {
    switch (kind) {
    case Kind::Float: return nb::dlpack::dtype_code::Float;
    case Kind::Int: return nb::dlpack::dtype_code::Int;
    case Kind::UInt: return nb::dlpack::dtype_code::UInt;
    default: return nb::dlpack::dtype_code::Bool;
    }
  }

  CheckedCall checkedCall;
  PackedFunction packed;
  FreeFunction free;
  std::vector<Value> args, results;
  bool resultsInStruct = false;
  std::vector<int64_t> fieldOffsets;
  size_t structWords = 0;
  // Tensor arguments, and the words of their descriptors.
  size_t tensors = 0, descriptorWords = 0;
  nb::object ndarray, zeros, copy, failed, declined;
};

} // namespace

NB_MODULE(_calls, m) {
  m.doc() = "Calls of compiled CPU functions on numpy arrays, in C++ "
            "(soac/runtime/abi.py declines to it what it can take)";
  // Plans live as long as the compiled functions that hold them, some of
  // them in caches that Python does not empty at exit: not leaks.
  nb::set_leak_warnings(false);
  nb::class_<Plan>(m, "Plan")
      .def(nb::init<uintptr_t, uintptr_t, uintptr_t, nb::list, nb::list,
                    nb::object, nb::object, nb::object, nb::object,
                    nb::object>(),
           nb::arg("checked_call"), nb::arg("packed"), nb::arg("free"),
           nb::arg("arguments"), nb::arg("results"), nb::arg("ndarray"),
           nb::arg("zeros"), nb::arg("copy"), nb::arg("failed"),
           nb::arg("declined"),
           "A function's signature and addresses: `arguments` and `results` "
           "hold (is_tensor, kind, itemsize, shape or None, dtype, scalar "
           "type) per value; `failed(message)` raises a failed check's "
           "error; `declined` is what a call returns when abi.py must make "
           "it instead.")
      .def("__call__", &Plan::call,
           "The results of a call, or `declined` (nothing was called).");
}
