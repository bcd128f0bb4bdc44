//! eBPF for sr6's programs: safe wrappers over the bpf(2) system call and a tiny
//! assembler ([`asm`]) to write programs with — no clang, libbpf or libxdp.
//!
//! The router's XDP program (`af_xdp/prog.rs`) is loaded with them, and so are the
//! tester's programs of `sr6 perf` (the `sr6-perf` crate), which need no `unsafe` code of
//! their own: every function here is safe to call with any arguments.
//!
//! - [`Map`]: a map this process created, which remembers its key and value sizes, so
//!   that a lookup can never make the kernel write past the caller's buffer (a length
//!   that differs from the map's is an `InvalidInput` error, checked before the call).
//! - [`prog_load_xdp`], [`prog_load_tcx_ingress`]: load a program (the kernel's
//!   verifier decides whether it is safe to run); [`link_create_xdp`],
//!   [`link_create_tcx_ingress`]: attach it to a device while the returned link is open.
//! - [`test_run`], [`test_run_live`]: `BPF_PROG_TEST_RUN` on a frame the kernel only
//!   reads.
//!
//! Each command fills its own `#[repr(C)]` prefix of the kernel's `union bpf_attr`
//! (`<linux/bpf.h>`) and passes that prefix's size: the kernel treats the bytes it does
//! not receive as zero. Every file descriptor the kernel returns is `O_CLOEXEC` and is
//! wrapped in an [`OwnedFd`] at once, so nothing leaks on an error path.

pub mod asm;

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

// Commands (enum bpf_cmd).
const BPF_MAP_CREATE: u32 = 0;
const BPF_MAP_LOOKUP_ELEM: u32 = 1;
const BPF_MAP_UPDATE_ELEM: u32 = 2;
const BPF_MAP_DELETE_ELEM: u32 = 3;
const BPF_MAP_GET_NEXT_KEY: u32 = 4;
const BPF_PROG_LOAD: u32 = 5;
const BPF_PROG_TEST_RUN: u32 = 10;
const BPF_OBJ_GET_INFO_BY_FD: u32 = 15;
const BPF_LINK_CREATE: u32 = 28;

/// enum bpf_map_type.
const BPF_MAP_TYPE_HASH: u32 = 1;
const BPF_MAP_TYPE_ARRAY: u32 = 2;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_MAP_TYPE_ARRAY_OF_MAPS: u32 = 12;
/// enum bpf_prog_type.
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_PROG_TYPE_XDP: u32 = 6;
/// enum bpf_attach_type.
const BPF_XDP: u32 = 37;
const BPF_TCX_INGRESS: u32 = 46;
/// `BPF_ANY`: create or update.
const BPF_ANY: u64 = 0;

/// XDP attach flags (`<linux/if_link.h>`): generic (SKB) mode.
pub const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
/// XDP attach flags (`<linux/if_link.h>`): driver (native) mode.
pub const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

/// Size of the verifier log captured when a load fails.
const LOG_SIZE: usize = 1 << 18;

/// One eBPF instruction (`struct bpf_insn`): 8 bytes, the two register numbers packed in
/// one byte (destination in the low nibble on little-endian machines).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    /// An instruction: opcode, destination and source registers, offset, immediate.
    pub fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        let regs = if cfg!(target_endian = "little") { (src << 4) | (dst & 0xf) } else { (dst << 4) | (src & 0xf) };
        Insn { code, regs, off, imm }
    }

    /// The 8 bytes the kernel reads.
    pub fn to_bytes(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = self.regs;
        b[2..4].copy_from_slice(&self.off.to_ne_bytes());
        b[4..8].copy_from_slice(&self.imm.to_ne_bytes());
        b
    }
}

/// bpf(2) itself. `attr` is one of the `#[repr(C)]` structs below.
fn sys_bpf<T>(cmd: u32, attr: &mut T) -> io::Result<i64> {
    // SAFETY: `attr` is a valid, initialised, exclusively borrowed `#[repr(C)]` struct
    // whose layout is the prefix of `union bpf_attr` for `cmd`, and its size is passed
    // with it; the kernel reads at most that many bytes and writes only output fields of
    // that prefix. Pointers inside it point to buffers the caller keeps alive.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd as libc::c_long, attr as *mut T, std::mem::size_of::<T>()) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as i64)
    }
}

/// Wraps a returned descriptor.
fn owned(fd: i64) -> OwnedFd {
    // SAFETY: `fd` was just returned by the kernel as a new descriptor that nothing else
    // owns.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

/// An object name (`BPF_OBJ_NAME_LEN` = 16, NUL-terminated, `[A-Za-z0-9_.]`).
fn obj_name(name: &str) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (o, b) in out.iter_mut().zip(name.bytes().take(15)) {
        *o = b;
    }
    out
}

/// Adds what was being done to an error, keeping its kind.
pub fn context(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

#[repr(C)]
struct MapCreateAttr {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

#[repr(C)]
struct ElemAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// The number of possible CPUs (`/sys/devices/system/cpu/possible`, e.g. "0-3"): how
/// many values a per-CPU map's lookup returns.
pub fn possible_cpus() -> io::Result<usize> {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible")?;
    let mut n = 0;
    for part in s.trim().split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let bad = || io::Error::new(io::ErrorKind::InvalidData, format!("possible CPUs: {s:?}"));
        let lo: usize = lo.parse().map_err(|_| bad())?;
        let hi: usize = hi.parse().map_err(|_| bad())?;
        n = n.max(hi + 1).max(lo + 1);
    }
    Ok(n)
}

/// The kinds of map [`Map::create`] makes: those whose user-space value is exactly
/// `value_size` bytes (no per-CPU maps, whose lookups return one value per CPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapKind {
    /// `BPF_MAP_TYPE_HASH`.
    Hash,
    /// `BPF_MAP_TYPE_ARRAY`: keys are u32 indices `0..max_entries`, every element
    /// exists (zeroed at creation).
    Array,
    /// `BPF_MAP_TYPE_XSKMAP`: u32 queue index -> AF_XDP socket (the value written is
    /// the socket's descriptor; user space cannot read it back).
    XskMap,
}

impl MapKind {
    fn code(self) -> u32 {
        match self {
            MapKind::Hash => BPF_MAP_TYPE_HASH,
            MapKind::Array => BPF_MAP_TYPE_ARRAY,
            MapKind::XskMap => BPF_MAP_TYPE_XSKMAP,
        }
    }
}

/// A BPF map this process created: its descriptor and its key and value sizes. Closed
/// (and freed, once no loaded program refers to it) when dropped. Programs refer to it
/// by its descriptor number ([`AsRawFd`], for [`asm::Asm::ld_map_fd`]).
#[derive(Debug)]
pub struct Map {
    fd: OwnedFd,
    key_size: u32,
    value_size: u32,
}

impl Map {
    /// `BPF_MAP_CREATE`. `name` is the map's name as `bpftool map` shows it (the first
    /// 15 bytes; `[A-Za-z0-9_.]`).
    pub fn create(kind: MapKind, key_size: u32, value_size: u32, max_entries: u32, name: &str) -> io::Result<Map> {
        Self::create_raw(kind.code(), key_size, value_size, max_entries, 0, name)
    }

    /// `BPF_MAP_CREATE` of a map of any type and flags, as an object file defines it
    /// (the XDP tier's loader: LPM tries, device maps, ...).
    pub fn create_raw(
        map_type: u32,
        key_size: u32,
        value_size: u32,
        max_entries: u32,
        map_flags: u32,
        name: &str,
    ) -> io::Result<Map> {
        Self::create_with(map_type, key_size, value_size, max_entries, map_flags, 0, name)
    }

    /// `BPF_MAP_CREATE`, every attribute given (`inner_map_fd` 0: none).
    fn create_with(
        map_type: u32,
        key_size: u32,
        value_size: u32,
        max_entries: u32,
        map_flags: u32,
        inner_map_fd: u32,
        name: &str,
    ) -> io::Result<Map> {
        let mut a = MapCreateAttr {
            map_type,
            key_size,
            value_size,
            max_entries,
            map_flags,
            inner_map_fd,
            numa_node: 0,
            map_name: obj_name(name),
        };
        let fd = sys_bpf(BPF_MAP_CREATE, &mut a)
            .map(owned)
            .map_err(|e| context(e, &format!("bpf(BPF_MAP_CREATE {name}, type {map_type})")))?;
        Ok(Map { fd, key_size, value_size })
    }

    /// A `BPF_MAP_TYPE_ARRAY_OF_MAPS` of one slot whose maps are like `inner`, holding
    /// `inner`: [`Map::wait_for_programs`] replaces its slot.
    pub fn create_wait(inner: &Map, name: &str) -> io::Result<Map> {
        let fd = inner.as_raw_fd() as u32;
        let m = Self::create_with(BPF_MAP_TYPE_ARRAY_OF_MAPS, 4, 4, 1, 0, fd, name)?;
        m.update(&0u32.to_ne_bytes(), &inner.as_raw_fd().to_ne_bytes())?;
        Ok(m)
    }

    /// Returns once every BPF program that was running when it was called has finished
    /// (a map-of-maps `m` of [`Map::create_wait`] has its slot set to `inner` again: the
    /// kernel's `maybe_wait_bpf_programs` runs `synchronize_rcu` for such an update,
    /// since Linux 4.19; XDP programs run inside RCU read-side sections).
    pub fn wait_for_programs(&self, inner: &Map) -> io::Result<()> {
        self.update(&0u32.to_ne_bytes(), &inner.as_raw_fd().to_ne_bytes())
    }

    /// `BPF_MAP_LOOKUP_ELEM` of a per-CPU map: one value of `value_size` bytes
    /// (rounded up to 8) per possible CPU ([`possible_cpus`]), in `value`, whose length
    /// must be that.
    pub fn lookup_percpu(&self, key: &[u8], value: &mut [u8]) -> io::Result<()> {
        self.check(key, None)?;
        // The kernel writes one value per possible CPU: a shorter buffer would overflow.
        static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let cpus = match CPUS.get() {
            Some(&n) => n,
            None => *CPUS.get_or_init(|| possible_cpus().unwrap_or(0)),
        };
        let stride = (self.value_size as usize).div_ceil(8) * 8;
        if stride == 0 || cpus == 0 || value.len() != cpus * stride {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("per-CPU value of {} bytes, not {cpus} CPUs x {stride}", value.len()),
            ));
        }
        self.lookup_unchecked(key, value)
    }

    /// `BPF_MAP_LOOKUP_ELEM` into `value`, whose size the caller checked.
    fn lookup_unchecked(&self, key: &[u8], value: &mut [u8]) -> io::Result<()> {
        let mut a = ElemAttr {
            map_fd: self.fd.as_raw_fd() as u32,
            _pad: 0,
            key: key.as_ptr() as u64,
            value: value.as_mut_ptr() as u64,
            flags: 0,
        };
        sys_bpf(BPF_MAP_LOOKUP_ELEM, &mut a).map(|_| ()).map_err(|e| context(e, "bpf(BPF_MAP_LOOKUP_ELEM)"))
    }

    /// Bytes of a key.
    pub fn key_size(&self) -> u32 {
        self.key_size
    }

    /// Bytes of a value.
    pub fn value_size(&self) -> u32 {
        self.value_size
    }

    /// A second descriptor for the same map (for another thread).
    pub fn try_clone(&self) -> io::Result<Map> {
        Ok(Map { fd: self.fd.try_clone()?, key_size: self.key_size, value_size: self.value_size })
    }

    /// `InvalidInput` unless `key` (and `value`, if given) have the map's sizes: the
    /// kernel reads and writes exactly those sizes at the pointers it is given.
    fn check(&self, key: &[u8], value: Option<usize>) -> io::Result<()> {
        let bad = key.len() != self.key_size as usize || value.is_some_and(|v| v != self.value_size as usize);
        if bad {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "BPF map element of {}+{} bytes; the map has {}+{}",
                    key.len(),
                    value.unwrap_or(self.value_size as usize),
                    self.key_size,
                    self.value_size
                ),
            ));
        }
        Ok(())
    }

    /// `BPF_MAP_UPDATE_ELEM` with `BPF_ANY` (create or replace). `key` and `value` must
    /// have the map's sizes.
    pub fn update(&self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.check(key, Some(value.len()))?;
        let mut a = ElemAttr {
            map_fd: self.fd.as_raw_fd() as u32,
            _pad: 0,
            key: key.as_ptr() as u64,
            value: value.as_ptr() as u64,
            flags: BPF_ANY,
        };
        sys_bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ()).map_err(|e| context(e, "bpf(BPF_MAP_UPDATE_ELEM)"))
    }

    /// `BPF_MAP_LOOKUP_ELEM` into `value`. `key` and `value` must have the map's sizes.
    pub fn lookup(&self, key: &[u8], value: &mut [u8]) -> io::Result<()> {
        self.check(key, Some(value.len()))?;
        self.lookup_unchecked(key, value)
    }

    /// `BPF_MAP_DELETE_ELEM`. A missing key is not an error.
    pub fn delete(&self, key: &[u8]) -> io::Result<()> {
        self.check(key, None)?;
        let mut a =
            ElemAttr { map_fd: self.fd.as_raw_fd() as u32, _pad: 0, key: key.as_ptr() as u64, value: 0, flags: 0 };
        match sys_bpf(BPF_MAP_DELETE_ELEM, &mut a) {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
            Err(e) => Err(context(e, "bpf(BPF_MAP_DELETE_ELEM)")),
        }
    }

    /// Every key (`BPF_MAP_GET_NEXT_KEY` from no key); `N` must be the key size.
    pub fn keys<const N: usize>(&self) -> io::Result<Vec<[u8; N]>> {
        self.check(&[0u8; N], None)?;
        let mut keys: Vec<[u8; N]> = Vec::new();
        let mut next = [0u8; N];
        loop {
            let mut a = ElemAttr {
                map_fd: self.fd.as_raw_fd() as u32,
                _pad: 0,
                // A null key asks for the first one.
                key: keys.last().map_or(0, |k| k.as_ptr() as u64),
                value: next.as_mut_ptr() as u64,
                flags: 0,
            };
            match sys_bpf(BPF_MAP_GET_NEXT_KEY, &mut a) {
                Ok(_) => keys.push(next),
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(keys),
                Err(e) => return Err(context(e, "bpf(BPF_MAP_GET_NEXT_KEY)")),
            }
        }
    }
}

impl AsFd for Map {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for Map {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[repr(C)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// `BPF_PROG_LOAD` of an XDP program (licence "GPL", expected attach type `BPF_XDP`).
/// On failure the error carries the verifier's log.
pub fn prog_load_xdp(insns: &[Insn], name: &str) -> io::Result<OwnedFd> {
    prog_load(BPF_PROG_TYPE_XDP, BPF_XDP, insns, name)
}

/// `BPF_PROG_LOAD` of a TC program for tcx ingress (`BPF_PROG_TYPE_SCHED_CLS`,
/// expected attach type `BPF_TCX_INGRESS`).
pub fn prog_load_tcx_ingress(insns: &[Insn], name: &str) -> io::Result<OwnedFd> {
    prog_load(BPF_PROG_TYPE_SCHED_CLS, BPF_TCX_INGRESS, insns, name)
}

fn prog_load(prog_type: u32, expected_attach_type: u32, insns: &[Insn], name: &str) -> io::Result<OwnedFd> {
    const LICENSE: &[u8] = b"GPL\0";
    let mut a = ProgLoadAttr {
        prog_type,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: LICENSE.as_ptr() as u64,
        log_level: 0,
        log_size: 0,
        log_buf: 0,
        kern_version: 0,
        prog_flags: 0,
        prog_name: obj_name(name),
        prog_ifindex: 0,
        expected_attach_type,
    };
    match sys_bpf(BPF_PROG_LOAD, &mut a) {
        Ok(fd) => return Ok(owned(fd)),
        // Not the verifier's business: no log to fetch.
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
            return Err(context(e, "bpf(BPF_PROG_LOAD): needs CAP_BPF + CAP_NET_ADMIN (or root)"))
        }
        Err(_) => {}
    }
    // Load again with a log to say why (loading without one first keeps the common
    // path cheap and immune to a log buffer that is too small).
    let mut log = vec![0u8; LOG_SIZE];
    a.log_level = 1;
    a.log_size = LOG_SIZE as u32;
    a.log_buf = log.as_mut_ptr() as u64;
    match sys_bpf(BPF_PROG_LOAD, &mut a) {
        Ok(fd) => Ok(owned(fd)),
        Err(e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            Err(io::Error::new(e.kind(), format!("bpf(BPF_PROG_LOAD {name}): {e}; verifier log:\n{}", text.trim_end())))
        }
    }
}

#[repr(C)]
struct LinkCreateAttr {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

/// `BPF_LINK_CREATE` of an XDP program on a device; `flags` selects the mode
/// ([`XDP_FLAGS_DRV_MODE`] or [`XDP_FLAGS_SKB_MODE`]). The program stays attached while
/// the returned link descriptor is open.
pub fn link_create_xdp(prog: &OwnedFd, ifindex: u32, flags: u32) -> io::Result<OwnedFd> {
    let mut a =
        LinkCreateAttr { prog_fd: prog.as_raw_fd() as u32, target_ifindex: ifindex, attach_type: BPF_XDP, flags };
    sys_bpf(BPF_LINK_CREATE, &mut a).map(owned)
}

/// `BPF_LINK_CREATE` of a tcx ingress program on a device (Linux 6.6+). The program
/// stays attached while the returned link descriptor is open.
pub fn link_create_tcx_ingress(prog: &OwnedFd, ifindex: u32) -> io::Result<OwnedFd> {
    let mut a = LinkCreateAttr {
        prog_fd: prog.as_raw_fd() as u32,
        target_ifindex: ifindex,
        attach_type: BPF_TCX_INGRESS,
        flags: 0,
    };
    sys_bpf(BPF_LINK_CREATE, &mut a).map(owned)
}

#[repr(C)]
struct InfoAttr {
    bpf_fd: u32,
    info_len: u32,
    info: u64,
}

/// The kernel's id of a loaded program (`BPF_OBJ_GET_INFO_BY_FD`), as `ip link` and
/// `bpftool` show it.
pub fn prog_id(prog: &OwnedFd) -> io::Result<u32> {
    // The head of `struct bpf_prog_info`: type, id. The kernel fills what fits.
    let mut info = [0u32; 2];
    let mut a = InfoAttr {
        bpf_fd: prog.as_raw_fd() as u32,
        info_len: std::mem::size_of_val(&info) as u32,
        info: info.as_mut_ptr() as u64,
    };
    sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &mut a).map_err(|e| context(e, "bpf(BPF_OBJ_GET_INFO_BY_FD)"))?;
    Ok(info[1])
}

#[repr(C)]
struct TestRunAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    _pad: u32,
}

impl TestRunAttr {
    /// A run of `prog` on `frame`, `repeat` times; no context, no flags.
    fn on(prog: &OwnedFd, frame: &[u8], repeat: u32) -> TestRunAttr {
        TestRunAttr {
            prog_fd: prog.as_raw_fd() as u32,
            retval: 0,
            data_size_in: frame.len() as u32,
            data_size_out: 0,
            data_in: frame.as_ptr() as u64,
            data_out: 0,
            repeat,
            duration: 0,
            ctx_size_in: 0,
            ctx_size_out: 0,
            ctx_in: 0,
            ctx_out: 0,
            flags: 0,
            cpu: 0,
            batch_size: 0,
            _pad: 0,
        }
    }
}

/// `BPF_F_TEST_XDP_LIVE_FRAMES`: the program's verdicts are carried out (Linux 5.18).
const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;

/// `struct xdp_md` as `BPF_PROG_TEST_RUN` takes it for its context: only the device
/// and queue may be set.
#[repr(C)]
struct XdpMd {
    data: u32,
    data_end: u32,
    data_meta: u32,
    ingress_ifindex: u32,
    rx_queue_index: u32,
    egress_ifindex: u32,
}

/// `BPF_PROG_TEST_RUN` in live-frame mode (`BPF_F_TEST_XDP_LIVE_FRAMES`): runs the XDP
/// program `repeat` times, each time on a frame from a page pool (first filled with
/// `frame`), as if it had arrived on device `ifindex` (queue 0), and carries out its
/// verdicts: `XDP_REDIRECT` transmits the frame out of the target device, `XDP_TX` out
/// of `ifindex`, `XDP_PASS` hands it to the stack, `XDP_DROP` recycles it. Frames are
/// flushed every `batch_size` runs (0: the kernel's default, 64; at most 256). Runs in
/// the caller's network namespace, on the caller's CPU; a pending signal ends it early
/// with `EINTR`.
pub fn test_run_live(prog: &OwnedFd, frame: &[u8], ifindex: u32, repeat: u32, batch_size: u32) -> io::Result<()> {
    // The kernel wants `data` = the metadata's length (none) and `data_end` = the frame's.
    let mut ctx = XdpMd {
        data: 0,
        data_end: frame.len() as u32,
        data_meta: 0,
        ingress_ifindex: ifindex,
        rx_queue_index: 0,
        egress_ifindex: 0,
    };
    let mut a = TestRunAttr::on(prog, frame, repeat);
    a.ctx_size_in = std::mem::size_of::<XdpMd>() as u32;
    a.ctx_in = &mut ctx as *mut XdpMd as u64;
    a.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
    a.batch_size = batch_size;
    sys_bpf(BPF_PROG_TEST_RUN, &mut a).map(|_| ()).map_err(|e| context(e, "bpf(BPF_PROG_TEST_RUN, live frames)"))
}

/// `BPF_PROG_TEST_RUN` once on `frame` (nothing is sent or redirected): the program's
/// action and the frame as it left the program (at most `frame.len() + 256` bytes).
/// [`test_run_out`] as if received on device `ingress_ifindex`, queue 0 (the XDP
/// context's `ingress_ifindex`; the device must exist in the caller's namespace;
/// Linux 5.15 and later).
pub fn test_run_on(prog: &OwnedFd, frame: &[u8], ingress_ifindex: u32) -> io::Result<(u32, Vec<u8>)> {
    // struct xdp_md: data, data_end, data_meta, ingress_ifindex, rx_queue_index,
    // egress_ifindex; the kernel wants data = 0 and data_end = the frame's length.
    let mut ctx = [0u32; 6];
    ctx[1] = frame.len() as u32;
    ctx[3] = ingress_ifindex;
    let mut out = vec![0u8; frame.len() + 256];
    let mut a = TestRunAttr::on(prog, frame, 1);
    a.data_out = out.as_mut_ptr() as u64;
    a.data_size_out = out.len() as u32;
    a.ctx_in = ctx.as_ptr() as u64;
    a.ctx_size_in = std::mem::size_of_val(&ctx) as u32;
    sys_bpf(BPF_PROG_TEST_RUN, &mut a).map_err(|e| context(e, "bpf(BPF_PROG_TEST_RUN)"))?;
    out.truncate(a.data_size_out as usize);
    Ok((a.retval, out))
}

pub fn test_run_out(prog: &OwnedFd, frame: &[u8]) -> io::Result<(u32, Vec<u8>)> {
    let mut out = vec![0u8; frame.len() + 256];
    let mut a = TestRunAttr::on(prog, frame, 1);
    a.data_out = out.as_mut_ptr() as u64;
    a.data_size_out = out.len() as u32;
    sys_bpf(BPF_PROG_TEST_RUN, &mut a).map_err(|e| context(e, "bpf(BPF_PROG_TEST_RUN)"))?;
    out.truncate(a.data_size_out as usize);
    Ok((a.retval, out))
}

/// `BPF_PROG_TEST_RUN`: runs an XDP program once on `frame` (nothing is sent or
/// redirected) and returns its action.
pub fn test_run(prog: &OwnedFd, frame: &[u8]) -> io::Result<u32> {
    let mut a = TestRunAttr::on(prog, frame, 1);
    sys_bpf(BPF_PROG_TEST_RUN, &mut a).map_err(|e| context(e, "bpf(BPF_PROG_TEST_RUN)"))?;
    Ok(a.retval)
}
