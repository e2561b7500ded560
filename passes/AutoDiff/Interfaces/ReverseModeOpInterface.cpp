//===- ReverseModeOpInterface.cpp - reverse-mode rules --------------------===//
#include "passes/AutoDiff/Interfaces/ReverseModeOpInterface.h"

#include "passes/AutoDiff/Interfaces/ReverseModeOpInterface.cpp.inc"
