//===- ForwardModeOpInterface.cpp - forward-mode rules --------------------===//
#include "passes/AutoDiff/Interfaces/ForwardModeOpInterface.h"

#include "passes/AutoDiff/Interfaces/ForwardModeOpInterface.cpp.inc"
