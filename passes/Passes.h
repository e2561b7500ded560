//===- Passes.h - soac passes and pipelines ---------------------*- C++ -*-===//
#ifndef SOAC_PASSES_PASSES_H
#define SOAC_PASSES_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include "dialect/SoacDialect.h"

namespace soac {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Registers the external models the passes rely on: the derivative rules of
/// upstream ops, memory effects of gpu.launch_func and gpu.barrier.
void registerSoacExtensions(mlir::DialectRegistry &registry);

/// Registers the soac passes and the named pipelines (soac-lower-to-cpu,
/// soac-lower-to-nvvm).
void registerSoacPasses();

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace soac

#endif // SOAC_PASSES_PASSES_H
