//! Executable memory: machine code copied into an anonymous mapping that is writable
//! while it is filled, then read + execute, never both at once (W^X).

use std::ptr::NonNull;

/// A read + execute mapping holding one program's machine code; unmapped on drop.
pub(crate) struct ExecMem {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is never written after `new` returns (it is PROT_READ|PROT_EXEC) and
// is owned by this value alone, so sharing or sending it between threads is sound.
unsafe impl Send for ExecMem {}
unsafe impl Sync for ExecMem {}

impl ExecMem {
    /// Maps `code` read + execute; `None` when the kernel refuses the mapping.
    pub(crate) fn new(code: &[u8]) -> Option<ExecMem> {
        let len = code.len().max(1);
        // SAFETY: an anonymous private mapping at an address of the kernel's choice aliases
        // nothing; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let mem = ExecMem { ptr: NonNull::new(p.cast::<u8>())?, len };
        // SAFETY: the mapping is `len >= code.len()` bytes, writable, and not yet shared.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), mem.ptr.as_ptr(), code.len()) };
        // SAFETY: changes the protection of our own mapping only (dropped on failure).
        if unsafe { libc::mprotect(p, len, libc::PROT_READ | libc::PROT_EXEC) } != 0 {
            return None;
        }
        Some(mem)
    }

    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for ExecMem {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping made in `new`; no code runs from it any more (every
        // run borrows the `ExecMem` through the program for its whole duration).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
