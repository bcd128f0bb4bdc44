//! sr6's in-kernel tier (work in progress on this branch): XDP programs written in C
//! (`c/`), compiled by clang in the build script, and loaded into the kernel with
//! their maps by [`load_xdp`]. The loader does what libbpf's does for these objects:
//! sr6-bpf's ELF parser applies the relocations ([`sr6_bpf::elf::parse_bytes`]), each
//! map is created as the object defines it (BTF-defined, legacy, global data with its
//! initial bytes), and each `BPF_PSEUDO_MAP_FD`/`BPF_PSEUDO_MAP_VALUE` load gets the
//! map's descriptor before `BPF_PROG_LOAD`, whose verifier is the kernel's.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use sr6_bpf::insn::{PSEUDO_MAP_FD, PSEUDO_MAP_VALUE};
use sr6_io::bpf::{prog_load_xdp, Insn, Map};

/// The fast-path program (`c/fast.c`), compiled.
pub const FAST_OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/fast.o"));

/// A program loaded into the kernel, with the maps it refers to (by name).
#[derive(Debug)]
pub struct Loaded {
    pub prog: OwnedFd,
    pub maps: Vec<(String, Map)>,
}

impl Loaded {
    /// The map named `name` in the object.
    pub fn map(&self, name: &str) -> Option<&Map> {
        self.maps.iter().find(|(n, _)| n == name).map(|(_, m)| m)
    }
}

/// Loads section `section` of the object `elf` as an XDP program, creating its maps.
pub fn load_xdp(elf: &[u8], section: &str) -> io::Result<Loaded> {
    let bad = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    // (A copy: the ELF reader wants the headers aligned, which `include_bytes!` does not
    // promise and the allocator's blocks are.)
    let copy: Vec<u8> = elf.into();
    let parsed = sr6_bpf::elf::parse_bytes(&copy, section).map_err(|e| bad(e.to_string()))?;
    let mut maps = Vec::with_capacity(parsed.maps.len());
    for (def, init) in &parsed.maps {
        let m = Map::create_raw(def.map_type, def.key_size, def.value_size, def.max_entries, def.flags, &def.name)?;
        if let Some(bytes) = init {
            let mut v = bytes.clone();
            v.resize(def.value_size as usize, 0);
            m.update(&0u32.to_ne_bytes(), &v)?;
        }
        maps.push((def.name.clone(), m));
    }
    let mut insns = Vec::with_capacity(parsed.insns.len());
    for i in &parsed.insns {
        let mut imm = i.imm;
        if i.is_ld_imm64() && (i.src == PSEUDO_MAP_FD || i.src == PSEUDO_MAP_VALUE) {
            let m =
                maps.get(i.imm as usize).ok_or_else(|| bad(format!("a load of map {}, which is not there", i.imm)))?;
            imm = m.1.as_raw_fd();
        }
        insns.push(Insn::new(i.code, i.dst, i.src, i.off, imm));
    }
    let prog = prog_load_xdp(&insns, section)?;
    Ok(Loaded { prog, maps })
}
