// Package apiminors decides, from TensorRT's public headers alone, which older minor releases
// of a major the TensorRT backend compiled against the headers of one release can drive. It
// is the generator's library (gen writes internal/trt's apiminors_gen.go); nothing of it is
// linked into trtbuild.
//
// TensorRT's public classes (nvinfer1::IBuilderConfig, ...) are inline wrappers that call
// through an implementation pointer (mImpl) to pure-virtual classes of NvInferImpl.h
// (nvinfer1::apiv::VBuilderConfig); other interfaces (IParser, IPluginRegistry) are pure
// virtual themselves, and some (ILogger, IErrorRecorder, IProgressMonitor, IStreamWriter) the
// backend implements for TensorRT to call. Their vtables, and the public classes' fields, are
// the ABI. A library of minor N can be driven by a backend compiled against the headers of a
// newer minor when, in N's headers,
//
//   - every class a call goes through, and every interface the backend implements, is laid
//     out as the start of the newer headers' layout: methods only appended, never inserted,
//     removed, reordered or changed in signature, the fields unchanged, and no overload
//     appended to an older name (MSVC groups overloads in the vtable); and
//   - every member function the build calls is declared with the same signature at the same
//     slot, and every enumerator it uses has the same value.
//
// Uses lists what the backend uses (uses_test.go holds it to the backend's source), with the
// build options that make it use each. Analyze walks the release tags of a major from the
// newest back and records, per use, the first minor that declares it (Added) and the first
// from which it can be used (Since); the oldest minor the backend drives is the newest Since
// of the uses every build has. A release whose header cannot be read (the ONNX parser's header
// is not in the TensorRT repository before 10.14) makes what it declares unknown there, which
// ends the range like a change does.
//
// The headers are read by a small C++ declaration reader (Header): namespaces, classes with
// their bases, member functions and fields, enums with their values, and type aliases.
// Signatures are normalized (parameter names, default arguments, attributes, noexcept and
// top-level const dropped; "const T" is "T const"; int32_t is int), so that two releases
// spelling one declaration differently agree. A preprocessor conditional inside a class is
// an error for that class: both branches would be read.
//
// Slots count the destructor once, as MSVC lays it out (the Itanium ABI gives it two entries
// at the same place): only their order matters here.
package apiminors
