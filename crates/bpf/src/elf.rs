//! The loader of clang `-target bpf` ELF objects, doing what iproute2's and libbpf's
//! loaders do before `bpf(BPF_PROG_LOAD)`: find the program section by name, build the
//! maps (BTF-defined in `.maps`, or the legacy `maps` section's `struct bpf_map_def`
//! prefix), turn global data (`.rodata*`, `.data*`, `.bss*`) into one-element array maps,
//! append `.text` when the program calls functions there, and apply the relocations:
//! a 64-bit immediate load of a map becomes `BPF_PSEUDO_MAP_FD` with the map's index, of
//! a global variable `BPF_PSEUDO_MAP_VALUE` with its map and offset, and a BPF-to-BPF
//! call gets its relative target. Then [`crate::verifier::verify`] runs.
//!
//! ELF is read with the `object` crate (read-only, bounds-checked parsing).

use std::path::Path;

use object::{Object as _, ObjectSection, ObjectSymbol, RelocationTarget, SectionIndex, SymbolKind};

use crate::btf::Btf;
use crate::helpers::ProgType;
use crate::insn::{Insn, CALL, JMP, PSEUDO_CALL, PSEUDO_MAP_FD, PSEUDO_MAP_VALUE};
use crate::maps::{Map, MapDef};
use crate::verifier::{verify_with_funcs, VerifyError};
use crate::vm::Program;

const EM_BPF: u16 = 247;

/// Why an object could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("not an ELF object: {0}")]
    NotElf(String),
    #[error("not an eBPF object (ELF machine {0}, expected EM_BPF 247)")]
    NotBpf(u16),
    #[error("big-endian eBPF objects are not supported (compile with -target bpf or bpfel)")]
    BigEndian,
    #[error("no section {0:?} in the object (program sections: {1})")]
    NoSection(String, String),
    #[error("section {0:?} is not a program (not executable, or empty)")]
    NotProgram(String),
    #[error("section {0:?}: size {1} is not a multiple of 8")]
    BadSize(String, usize),
    #[error("map {0}: {1}")]
    Map(String, String),
    #[error("relocation at insn {insn} of {section:?}: {what}")]
    Reloc { section: String, insn: usize, what: String },
    #[error("section {section:?}: {err}")]
    Verify { section: String, err: VerifyError },
}

/// A loaded program with the maps it references (index = the map operand of its loads).
#[derive(Clone, Debug)]
pub struct Object {
    pub program: Program,
    pub maps: Vec<Map>,
}

impl Object {
    /// The index of a map by name.
    pub fn map_index(&self, name: &str) -> Option<usize> {
        self.maps.iter().position(|m| m.def.name == name)
    }
}

/// Loads section `section` of the object at `path` as a program of type `prog_type`.
pub fn load_object(path: &Path, section: &str, prog_type: ProgType) -> Result<Object, LoadError> {
    let data = std::fs::read(path).map_err(|err| LoadError::Io { path: path.display().to_string(), err })?;
    load_bytes(&data, section, prog_type)
}

fn is_global_data(name: &str) -> bool {
    [".rodata", ".data", ".bss"].iter().any(|p| name == *p || name.starts_with(&format!("{p}.")))
}

/// A program section of an object with its relocations applied, before any map is made
/// or the program verified: what a loader into the kernel needs (`BPF_PSEUDO_MAP_FD`
/// loads name their map by its index in `maps`, to be replaced by the map's fd).
#[derive(Clone, Debug)]
pub struct Parsed {
    pub insns: Vec<Insn>,
    /// The maps, in the order the loads name them: BTF-defined, legacy, then global
    /// data, each with its initial bytes if it is global data.
    pub maps: Vec<(MapDef, Option<Vec<u8>>)>,
    /// The first instruction of each function of `.text` the program calls.
    pub func_starts: Vec<usize>,
}

/// Loads from the object's bytes (see [`load_object`]).
pub fn load_bytes(data: &[u8], section: &str, prog_type: ProgType) -> Result<Object, LoadError> {
    let p = parse_bytes(data, section)?;
    let mut maps = Vec::with_capacity(p.maps.len());
    for (def, init) in p.maps {
        maps.push(match init {
            Some(bytes) => Map::global_data(&def.name, &bytes, def.name.starts_with(".rodata")),
            None => {
                let name = def.name.clone();
                Map::new(def).map_err(|e| LoadError::Map(name, e.to_string()))?
            }
        });
    }
    verify_with_funcs(&p.insns, prog_type, maps.len(), &p.func_starts)
        .map_err(|err| LoadError::Verify { section: section.to_string(), err })?;
    Ok(Object { program: Program::new(section, prog_type, p.insns), maps })
}

/// Parses section `section` of the object's bytes and applies its relocations (see
/// [`Parsed`]): the loader's work up to the maps and the verifier.
pub fn parse_bytes(data: &[u8], section: &str) -> Result<Parsed, LoadError> {
    if data.get(..4) != Some(b"\x7fELF") {
        return Err(LoadError::NotElf("no ELF magic".into()));
    }
    let machine = data.get(18..20).map(|b| u16::from_le_bytes([b[0], b[1]])).unwrap_or(0);
    if data.get(5) == Some(&2) {
        return Err(LoadError::BigEndian);
    }
    if machine != EM_BPF {
        return Err(LoadError::NotBpf(machine));
    }
    let file = object::File::parse(data).map_err(|e| LoadError::NotElf(e.to_string()))?;

    // Maps, in a fixed order: BTF-defined, legacy, then global data sections.
    let mut maps: Vec<(MapDef, Option<Vec<u8>>)> = Vec::new();
    // (section index, offset in it, map index) of each map symbol.
    let mut map_syms: Vec<(SectionIndex, u64, usize)> = Vec::new();
    let mut data_secs: Vec<(SectionIndex, usize)> = Vec::new();
    let sec_by_name = |n: &str| file.sections().find(|s| s.name() == Ok(n));

    if let Some(ms) = sec_by_name(".maps") {
        let btf_sec = sec_by_name(".BTF").ok_or_else(|| LoadError::Map(".maps".into(), "no .BTF section".into()))?;
        let btf_data = btf_sec.data().map_err(|e| LoadError::Map(".maps".into(), e.to_string()))?;
        let btf = Btf::parse(btf_data).ok_or_else(|| LoadError::Map(".maps".into(), "malformed .BTF".into()))?;
        let defs = btf.maps().map_err(|e| LoadError::Map(".maps".into(), e))?;
        for (_, def) in defs {
            let name = def.name.clone();
            // clang leaves the DATASEC's offsets to the loader: the symbol has the map's.
            let sym = file
                .symbols()
                .find(|s| s.section_index() == Some(ms.index()) && s.name() == Ok(name.as_str()))
                .ok_or_else(|| LoadError::Map(name.clone(), "no symbol in .maps".into()))?;
            map_syms.push((ms.index(), sym.address(), maps.len()));
            maps.push((def, None));
        }
    }
    if let Some(ms) = sec_by_name("maps") {
        let bytes = ms.data().map_err(|e| LoadError::Map("maps".into(), e.to_string()))?;
        let mut syms: Vec<_> = file.symbols().filter(|s| s.section_index() == Some(ms.index())).collect();
        syms.sort_by_key(|s| s.address());
        for s in syms {
            let name = s.name().unwrap_or("?").to_string();
            let at = usize::try_from(s.address()).unwrap_or(usize::MAX);
            let word = |k: usize| -> Option<u32> {
                let from = at.checked_add(4 * k)?;
                Some(u32::from_le_bytes(bytes.get(from..from.checked_add(4)?)?.try_into().ok()?))
            };
            let (Some(t), Some(ks), Some(vs), Some(n), Some(f)) = (word(0), word(1), word(2), word(3), word(4)) else {
                return Err(LoadError::Map(name, "truncated struct bpf_map_def".into()));
            };
            let def =
                MapDef { name: name.clone(), map_type: t, key_size: ks, value_size: vs, max_entries: n, flags: f };
            map_syms.push((ms.index(), s.address(), maps.len()));
            maps.push((def, None));
        }
    }
    for s in file.sections() {
        let name = s.name().unwrap_or("");
        if !is_global_data(name) {
            continue;
        }
        if s.size() > crate::maps::MAX_MAP_BYTES {
            return Err(LoadError::Map(name.into(), "global data too large".into()));
        }
        let bytes = if name.starts_with(".bss") {
            vec![0; s.size() as usize]
        } else {
            s.data().map_err(|e| LoadError::Map(name.into(), e.to_string()))?.to_vec()
        };
        data_secs.push((s.index(), maps.len()));
        maps.push((Map::global_data(name, &bytes, false).def, Some(bytes)));
    }

    // The program section, and .text if the program calls into it.
    let prog_sections: Vec<String> = file
        .sections()
        .filter(|s| is_exec(s) && s.size() > 0)
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect();
    let psec =
        sec_by_name(section).ok_or_else(|| LoadError::NoSection(section.to_string(), prog_sections.join(", ")))?;
    if !is_exec(&psec) || psec.size() == 0 || section == ".text" {
        return Err(LoadError::NotProgram(section.to_string()));
    }
    let mut insns = section_insns(&psec, section)?;
    let text = sec_by_name(".text").filter(|t| t.size() > 0);
    let calls_text = text.as_ref().is_some_and(|t| {
        psec.relocations().any(|(_, r)| match r.target() {
            RelocationTarget::Symbol(si) => {
                file.symbol_by_index(si).ok().and_then(|s| s.section_index()) == Some(t.index())
            }
            _ => false,
        })
    });
    let mut func_starts = Vec::new();
    let mut parts = vec![(psec.index(), 0usize, section.to_string())];
    if let (true, Some(t)) = (calls_text, text.as_ref()) {
        let base = insns.len();
        insns.extend(section_insns(t, ".text")?);
        for s in file.symbols() {
            if s.section_index() == Some(t.index()) && s.kind() == SymbolKind::Text {
                func_starts.push(base.saturating_add(usize::try_from(s.address() / 8).unwrap_or(usize::MAX)));
            }
        }
        parts.push((t.index(), base, ".text".to_string()));
    }

    for (sidx, base, sname) in &parts {
        let sec = file.section_by_index(*sidx).map_err(|e| LoadError::NotElf(e.to_string()))?;
        for (off, rel) in sec.relocations() {
            let pc = base.saturating_add(usize::try_from(off / 8).unwrap_or(usize::MAX));
            let err = |what: String| LoadError::Reloc { section: sname.clone(), insn: (off / 8) as usize, what };
            let RelocationTarget::Symbol(si) = rel.target() else {
                return Err(err("relocation without a symbol".into()));
            };
            let sym = file.symbol_by_index(si).map_err(|e| err(e.to_string()))?;
            let sym_name = sym.name().unwrap_or("?").to_string();
            let Some(tsec) = sym.section_index() else {
                return Err(err(format!("symbol {sym_name} is undefined (an extern?)")));
            };
            let Some(i) = insns.get(pc).copied() else {
                return Err(err("offset outside the section".into()));
            };
            if i.is_ld_imm64() {
                if pc + 1 >= insns.len() {
                    return Err(err("64-bit load without its second slot".into()));
                }
                if let Some(&(_, _, m)) = map_syms.iter().find(|(s, o, _)| *s == tsec && *o == sym.address()) {
                    insns[pc].src = PSEUDO_MAP_FD;
                    insns[pc].imm = m as i32;
                    insns[pc + 1].imm = 0;
                } else if let Some(&(_, m)) = data_secs.iter().find(|(s, _)| *s == tsec) {
                    let voff = i64::try_from(sym.address()).unwrap_or(i64::MAX).saturating_add(i64::from(i.imm));
                    let size = maps[m].1.as_ref().map_or(0, Vec::len) as i64;
                    if !(0..size.max(1)).contains(&voff) {
                        return Err(err(format!("offset {voff} outside {sym_name}'s section")));
                    }
                    insns[pc].src = PSEUDO_MAP_VALUE;
                    insns[pc].imm = m as i32;
                    insns[pc + 1].imm = voff as i32;
                } else {
                    return Err(err(format!("64-bit load of {sym_name}, which is neither a map nor global data")));
                }
            } else if i.code == JMP | CALL && i.src == PSEUDO_CALL {
                let Some(&(_, tbase, _)) = parts.iter().find(|(s, _, _)| *s == tsec) else {
                    return Err(err(format!("call to {sym_name} outside the program and .text")));
                };
                let target = (tbase as i64)
                    .saturating_add(i64::try_from(sym.address() / 8).unwrap_or(i64::MAX))
                    .saturating_add(i64::from(i.imm) + 1);
                insns[pc].imm = (target - pc as i64 - 1) as i32;
            } else {
                return Err(err(format!("unsupported relocation of insn code {:#04x} against {sym_name}", i.code)));
            }
        }
    }
    Ok(Parsed { insns, maps, func_starts })
}

fn is_exec(s: &object::Section<'_, '_>) -> bool {
    matches!(s.flags(), object::SectionFlags::Elf { sh_flags } if sh_flags & u64::from(object::elf::SHF_EXECINSTR) != 0)
}

fn section_insns(s: &object::Section<'_, '_>, name: &str) -> Result<Vec<Insn>, LoadError> {
    let bytes = s.data().map_err(|e| LoadError::NotElf(e.to_string()))?;
    Insn::decode_all(bytes).map_err(|n| LoadError::BadSize(name.to_string(), n))
}
