//! The system calls the port makes at open time, each turning `errno` into an
//! [`io::Error`] that names the device and the step, and the shared ring mapping.

use std::ffi::CString;
use std::io;
use std::mem::{size_of, MaybeUninit};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;

/// Wraps `e` with the device and the step that failed, keeping its kind.
pub(super) fn context(ifname: &str, what: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("AF_PACKET on {ifname}: {what}: {e}"))
}

/// The index of `ifname` in the calling thread's network namespace.
pub(super) fn ifindex(ifname: &str) -> io::Result<u32> {
    if ifname.is_empty() || ifname.len() >= libc::IFNAMSIZ || ifname.contains(['\0', '/']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{ifname:?} is not a valid network device name"),
        ));
    }
    let name = CString::new(ifname).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `name` is a NUL-terminated string that outlives the call.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if index == 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ENODEV) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no network device named {ifname} (in this network namespace)"),
            ));
        }
        return Err(context(ifname, "if_nametoindex", e));
    }
    Ok(index)
}

/// A new AF_PACKET raw socket with protocol 0: it receives nothing until `bind` names a
/// protocol, so the filter and the rings are in place before the first frame arrives.
pub(super) fn packet_socket(ifname: &str) -> io::Result<OwnedFd> {
    // SAFETY: plain system call with constant arguments; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES)) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "AF_PACKET on {ifname}: cannot open a packet socket ({e}): \
                     the AF_PACKET backend needs root or the CAP_NET_RAW capability"
                ),
            ));
        }
        return Err(context(ifname, "socket(AF_PACKET)", e));
    }
    // SAFETY: `fd` was just returned by socket() and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `setsockopt(fd, level, name, value)`; `what` names the option in the error.
pub(super) fn set_opt<T>(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
    ifname: &str,
    what: &str,
) -> io::Result<()> {
    // SAFETY: `value` points to a live `T` of `size_of::<T>()` bytes for the whole call;
    // the kernel only reads it.
    let r = unsafe {
        libc::setsockopt(fd.as_raw_fd(), level, name, (value as *const T).cast(), size_of::<T>() as libc::socklen_t)
    };
    if r < 0 {
        return Err(context(ifname, &format!("setsockopt({what})"), io::Error::last_os_error()));
    }
    Ok(())
}

/// `getsockopt(fd, level, name)` into a plain-data `T` (zeroed first, so a shorter
/// answer leaves the rest zero).
pub(super) fn get_opt<T: Copy>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int) -> io::Result<T> {
    let mut value = MaybeUninit::<T>::zeroed();
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is writable for `len` bytes and `len` is a valid in/out length.
    let r = unsafe { libc::getsockopt(fd.as_raw_fd(), level, name, value.as_mut_ptr().cast(), &mut len) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: zero-initialised, and the callers only use integer-only `T`s, for which
    // every bit pattern is valid.
    Ok(unsafe { value.assume_init() })
}

/// What the port needs to know about the device: its MTU and link type.
pub(super) struct DevInfo {
    pub mtu: usize,
    pub arphrd: u16,
}

/// Reads the MTU and the hardware type of `ifname` with `SIOCGIFMTU`/`SIOCGIFHWADDR`.
pub(super) fn dev_info(fd: &OwnedFd, ifname: &str) -> io::Result<DevInfo> {
    let ioctl = |request: libc::c_ulong, what: &str| -> io::Result<libc::ifreq> {
        // SAFETY: ifreq is plain data (names, integers, sockaddrs); all zeros is valid.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        for (d, s) in req.ifr_name.iter_mut().zip(ifname.bytes()) {
            *d = s as libc::c_char;
        }
        // SAFETY: `req` is a valid ifreq with a NUL-terminated name (checked shorter
        // than IFNAMSIZ by `ifindex`); the kernel writes only inside it.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), request as _, &mut req) };
        if r < 0 {
            return Err(context(ifname, what, io::Error::last_os_error()));
        }
        Ok(req)
    };
    let mtu_req = ioctl(libc::SIOCGIFMTU, "ioctl(SIOCGIFMTU)")?;
    let hw_req = ioctl(libc::SIOCGIFHWADDR, "ioctl(SIOCGIFHWADDR)")?;
    // SAFETY: SIOCGIFMTU filled the `ifru_mtu` member and SIOCGIFHWADDR `ifru_hwaddr`.
    let (mtu, arphrd) = unsafe { (mtu_req.ifr_ifru.ifru_mtu, hw_req.ifr_ifru.ifru_hwaddr.sa_family) };
    Ok(DevInfo { mtu: mtu.max(0) as usize, arphrd })
}

/// Binds `fd` to device `ifindex` for `protocol` (host order; 0 receives nothing).
pub(super) fn bind(fd: &OwnedFd, ifindex: u32, protocol: u16, ifname: &str) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain data; all zeros is valid.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a valid sockaddr_ll and the length is its size.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(context(ifname, "bind", io::Error::last_os_error()));
    }
    Ok(())
}

/// The system page size.
pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// A socket's rings mapped into this process (`mmap` of the socket); unmapped on drop.
pub(super) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned by one port and only touched through it; moving it to
// another thread moves that ownership (the kernel side is synchronised by status words).
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd`'s rings (their exact total size, as the kernel demands).
    pub(super) fn new(fd: &OwnedFd, len: usize, ifname: &str) -> io::Result<Mapping> {
        // SAFETY: a fresh shared mapping of the socket's rings; the kernel checks `len`
        // against the rings it allocated, and the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(context(ifname, "mmap of the rings", io::Error::last_os_error()));
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Mapping { ptr, len })
    }

    /// The first byte of the mapping (page aligned).
    pub(super) fn base(&self) -> NonNull<u8> {
        self.ptr
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned; the rings that point into
        // the mapping are owned by the same port and are not used after it drops.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}
