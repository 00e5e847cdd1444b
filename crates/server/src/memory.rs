//! How the process asks the kernel for memory.

/// Turns transparent huge pages off for this process (Linux; elsewhere a no-op).
///
/// Backed by 2 MiB pages, the heap is resident in 2 MiB steps: the first byte touched in
/// one makes all of it count. On a fresh server, 18 of its 25 MiB of heap at rest were
/// such pages, mostly empty, and without them peak RSS under load fell by 12-15 MiB in
/// every scenario, at no measurable cost in throughput but for logins, 8 % slower
/// (docs/benchmarks.md, "Transparent huge pages"). mimalloc is built not to ask for
/// them (its `no_thp` feature), which is enough where the kernel gives them only when
/// asked (`madvise` mode, Debian's default); this also keeps the kernel from handing
/// them out unasked (`always` mode) from here on. Returns the kernel's refusal, if any,
/// for the caller to log once logging is set up: the server runs the same without.
pub fn use_small_pages() -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_thp_disable(true).map_err(|errno| errno.to_string())
    }
    #[cfg(not(target_os = "linux"))]
    {
        Ok(())
    }
}
