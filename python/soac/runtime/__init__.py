"""Running compiled code: the C ABI (:mod:`soac.runtime.abi`, standalone),
the JIT (:mod:`soac.runtime.jit`) and shared libraries (:mod:`soac.runtime.aot`)."""
