// The GPU prelude a template includes: codegen pastes the backend's own (prelude_cuda.h or
// prelude_hip.h) in its place; a standalone compile picks it here.
#if defined(__HIPCC__) || defined(__HIPCC_RTC__)
#include "prelude_hip.h"
#else
#include "prelude_cuda.h"
#endif
