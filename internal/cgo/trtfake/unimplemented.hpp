// unimplemented.hpp: what the generated stubs (stubsN_gen.hpp) call when the shim calls a
// function of TensorRT's API that the stand-in does not implement. It names no TensorRT type
// and lives in a namespace of its own, the same for both majors (one definition, included by
// both), so that the stubs of either major can be made with the build's Context.
#ifndef TRTB_FAKE_UNIMPLEMENTED_HPP
#define TRTB_FAKE_UNIMPLEMENTED_HPP

namespace trtb_fake {

// Unimplemented is told of every call of a function the stand-in does not implement.
//
// report records it as an error of the object's builder ("trtfake: VBuilderConfig::setFoo is
// not implemented"), through the error recorder the shim attached (else the logger), and
// makes the next build of that builder fail, so that a shim that starts to call something new
// is caught by any test that builds; the stub then returns a value-initialized result (false,
// 0, null). fatal is for a function that returns a reference, for which no value is safe: it
// says the same on standard error and aborts the process, as a crash inside TensorRT would.
// Both may be called from any thread and never throw.
class Unimplemented {
public:
    virtual void report(char const* method) const noexcept = 0;
    [[noreturn]] virtual void fatal(char const* method) const noexcept = 0;

protected:
    ~Unimplemented() = default;
};

}  // namespace trtb_fake

#endif  // TRTB_FAKE_UNIMPLEMENTED_HPP
