//! sr6's in-kernel tier: XDP programs written in C (`c/`), compiled by clang in the
//! build script, and loaded into the kernel with their maps by [`load_xdp`]. The loader
//! does what libbpf's does for these objects: sr6-bpf's ELF parser applies the
//! relocations ([`sr6_bpf::elf::parse_bytes`]), each map is created as the object
//! defines it (BTF-defined, legacy, global data with its initial bytes) unless the
//! caller hands one over to share ([`load_xdp_with`]), and each
//! `BPF_PSEUDO_MAP_FD`/`BPF_PSEUDO_MAP_VALUE` load gets the map's descriptor before
//! `BPF_PROG_LOAD`, whose verifier is the kernel's.
//!
//! [`Mirror`] keeps the program's tables equal to sr6's ([`sr6_core::tables::Tables::offload6`]),
//! switching between two generations so that a change is seen whole or not at all.

mod mirror;

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use sr6_bpf::insn::{PSEUDO_MAP_FD, PSEUDO_MAP_VALUE};
use sr6_io::bpf::{prog_load_xdp, Insn, Map};

pub use mirror::{HmacExport, Mirror, SyncStats, TierCounts};

/// The fast-path program (`c/fast.c`), compiled.
pub const FAST_OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/fast.o"));
/// Its section.
pub const FAST_SECTION: &str = "xdp";

/// A program loaded into the kernel, with the maps it created (by name; not those it
/// was handed).
#[derive(Debug)]
pub struct Loaded {
    pub prog: OwnedFd,
    pub maps: Vec<(String, Map)>,
}

impl Loaded {
    /// Takes the map named `name` out (the program keeps it alive while it is loaded).
    pub fn take(&mut self, name: &str) -> Option<Map> {
        let i = self.maps.iter().position(|(n, _)| n == name)?;
        Some(self.maps.swap_remove(i).1)
    }

    /// The map named `name` in the object, if this load created it.
    pub fn map(&self, name: &str) -> Option<&Map> {
        self.maps.iter().find(|(n, _)| n == name).map(|(_, m)| m)
    }
}

fn bad(e: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Loads section `section` of the object `elf` as an XDP program, creating its maps.
pub fn load_xdp(elf: &[u8], section: &str) -> io::Result<Loaded> {
    load_xdp_with(elf, section, &[])
}

/// As [`load_xdp`], with the maps named in `shared` used as they are instead of new
/// ones (each must have the object's sizes for that map; the kernel checks).
pub fn load_xdp_with(elf: &[u8], section: &str, shared: &[(&str, &Map)]) -> io::Result<Loaded> {
    // (A copy: the ELF reader wants the headers aligned, which `include_bytes!` does not
    // promise and the allocator's blocks are.)
    let copy: Vec<u8> = elf.into();
    let parsed = sr6_bpf::elf::parse_bytes(&copy, section).map_err(|e| bad(e.to_string()))?;
    let mut maps = Vec::new();
    let mut fds = Vec::with_capacity(parsed.maps.len());
    for (def, init) in &parsed.maps {
        if let Some((_, m)) = shared.iter().find(|(n, _)| *n == def.name) {
            fds.push(m.as_raw_fd());
            continue;
        }
        let m = create(def, init.as_deref())?;
        fds.push(m.as_raw_fd());
        maps.push((def.name.clone(), m));
    }
    let mut insns = Vec::with_capacity(parsed.insns.len());
    for i in &parsed.insns {
        let mut imm = i.imm;
        if i.is_ld_imm64() && (i.src == PSEUDO_MAP_FD || i.src == PSEUDO_MAP_VALUE) {
            imm =
                *fds.get(i.imm as usize).ok_or_else(|| bad(format!("a load of map {}, which is not there", i.imm)))?;
        }
        insns.push(Insn::new(i.code, i.dst, i.src, i.off, imm));
    }
    let prog = prog_load_xdp(&insns, section)?;
    Ok(Loaded { prog, maps })
}

/// Creates the maps of `elf`'s section `section` named in `names`, as the object
/// defines them, without loading anything.
pub fn create_maps(elf: &[u8], section: &str, names: &[&str]) -> io::Result<Vec<(String, Map)>> {
    let copy: Vec<u8> = elf.into();
    let parsed = sr6_bpf::elf::parse_bytes(&copy, section).map_err(|e| bad(e.to_string()))?;
    let mut out = Vec::new();
    for n in names {
        let (def, init) =
            parsed.maps.iter().find(|(d, _)| d.name == *n).ok_or_else(|| bad(format!("the object has no map {n}")))?;
        out.push((n.to_string(), create(def, init.as_deref())?));
    }
    Ok(out)
}

fn create(def: &sr6_bpf::maps::MapDef, init: Option<&[u8]>) -> io::Result<Map> {
    let m = Map::create_raw(def.map_type, def.key_size, def.value_size, def.max_entries, def.flags, &def.name)?;
    if let Some(bytes) = init {
        let mut v = bytes.to_vec();
        v.resize(def.value_size as usize, 0);
        m.update(&0u32.to_ne_bytes(), &v)?;
    }
    Ok(m)
}
