//! Host memory pages.

/// Ask Linux for transparent huge pages on a large buffer about to be filled: a gigabyte in 4 KiB
/// pages is 262,144 page faults, which on a virtual machine can cost more than the copy that
/// fills it. Advisory: ignored where unsupported (THP off, other OSes, small buffers).
pub(crate) fn prefer_huge_pages(ptr: *mut u8, len: usize) {
    const HUGE: usize = 2 << 20;
    if len < 2 * HUGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: advice on whole pages inside an allocation we own; it never changes contents.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
}
