// What sanitizers this build runs under, for the few tests whose subject
// collides with how a sanitizer works.
#pragma once

namespace kfpbench {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

// AddressSanitizer's shadow memory and quarantine make processes larger and
// their memory swing, which tests that measure memory must allow for.
// (kUnderAddressSanitizer above.)
//
// UndefinedBehaviorSanitizer's vptr check reads an object's memory through a
// pipe(2) whenever its type cache misses; with every file descriptor in use
// the pipe cannot be made and it reports a false "invalid vptr". Tests that
// exhaust descriptors cannot run under it.
#if defined(KFPBENCH_UBSAN_VPTR)
inline constexpr bool kUnderUbsanVptrCheck = true;
#else
inline constexpr bool kUnderUbsanVptrCheck = false;
#endif

}  // namespace kfpbench
