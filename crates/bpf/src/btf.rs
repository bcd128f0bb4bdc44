//! Just enough BTF (Documentation/bpf/btf.rst, include/uapi/linux/btf.h) to read
//! BTF-defined maps: the `.maps` DATASEC's variables, each a struct whose members
//! `type`, `max_entries`, `map_flags`, `key_size`, `value_size` are pointers to arrays
//! whose element count is the value (libbpf's `__uint(name, val)`), and `key`, `value`
//! pointers to the key and value types (`__type(name, T)`), whose sizes are taken.

use crate::maps::MapDef;

const MAGIC: u16 = 0xeb9f;

// BTF_KIND_*.
const INT: u32 = 1;
const PTR: u32 = 2;
const ARRAY: u32 = 3;
const STRUCT: u32 = 4;
const UNION: u32 = 5;
const ENUM: u32 = 6;
const FWD: u32 = 7;
const TYPEDEF: u32 = 8;
const VOLATILE: u32 = 9;
const CONST: u32 = 10;
const RESTRICT: u32 = 11;
const FUNC: u32 = 12;
const FUNC_PROTO: u32 = 13;
const VAR: u32 = 14;
const DATASEC: u32 = 15;
const FLOAT: u32 = 16;
const DECL_TAG: u32 = 17;
const TYPE_TAG: u32 = 18;
const ENUM64: u32 = 19;

#[derive(Clone, Debug)]
struct Type {
    name_off: u32,
    kind: u32,
    vlen: usize,
    /// `size` or `type`, by kind.
    size_type: u32,
    /// Where the kind-specific data starts in the type section.
    extra: usize,
}

/// A parsed `.BTF` section (types and strings only).
pub struct Btf<'a> {
    types: Vec<Type>,
    type_data: &'a [u8],
    strings: &'a [u8],
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off.checked_add(4)?)?.try_into().ok()?))
}

impl<'a> Btf<'a> {
    /// Parses the section; `None` when it is not well-formed little-endian BTF.
    pub fn parse(b: &'a [u8]) -> Option<Btf<'a>> {
        if u16::from_le_bytes(b.get(0..2)?.try_into().ok()?) != MAGIC {
            return None;
        }
        let hdr_len = u32_at(b, 4)? as usize;
        let (type_off, type_len) = (u32_at(b, 8)? as usize, u32_at(b, 12)? as usize);
        let (str_off, str_len) = (u32_at(b, 16)? as usize, u32_at(b, 20)? as usize);
        let base = b.get(hdr_len..)?;
        let type_data = base.get(type_off..type_off.checked_add(type_len)?)?;
        let strings = base.get(str_off..str_off.checked_add(str_len)?)?;
        // Type id 0 is void.
        let mut types = vec![Type { name_off: 0, kind: 0, vlen: 0, size_type: 0, extra: 0 }];
        let mut off = 0;
        while off < type_data.len() {
            let name_off = u32_at(type_data, off)?;
            let info = u32_at(type_data, off + 4)?;
            let size_type = u32_at(type_data, off + 8)?;
            let kind = (info >> 24) & 0x1f;
            let vlen = (info & 0xffff) as usize;
            let extra = off + 12;
            let more = match kind {
                INT | VAR | DECL_TAG => 4,
                PTR | FWD | TYPEDEF | VOLATILE | CONST | RESTRICT | FUNC | FLOAT | TYPE_TAG => 0,
                ARRAY => 12,
                STRUCT | UNION | DATASEC | ENUM64 => vlen * 12,
                ENUM | FUNC_PROTO => vlen * 8,
                _ => return None,
            };
            types.push(Type { name_off, kind, vlen, size_type, extra });
            off = extra + more;
        }
        Some(Btf { types, type_data, strings })
    }

    fn name(&self, off: u32) -> &str {
        let s = self.strings.get(off as usize..).unwrap_or_default();
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        std::str::from_utf8(&s[..end]).unwrap_or("")
    }

    fn ty(&self, id: u32) -> Option<&Type> {
        self.types.get(id as usize)
    }

    /// Skips typedefs and qualifiers.
    fn resolve(&self, mut id: u32) -> Option<&Type> {
        for _ in 0..32 {
            let t = self.ty(id)?;
            match t.kind {
                TYPEDEF | VOLATILE | CONST | RESTRICT | TYPE_TAG => id = t.size_type,
                _ => return Some(t),
            }
        }
        None
    }

    /// The size in bytes of a type.
    fn size_of(&self, id: u32, depth: u32) -> Option<u32> {
        if depth > 32 {
            return None;
        }
        let t = self.resolve(id)?;
        match t.kind {
            INT | STRUCT | UNION | ENUM | ENUM64 | FLOAT | DATASEC => Some(t.size_type),
            PTR => Some(8),
            ARRAY => {
                let elem = u32_at(self.type_data, t.extra)?;
                let n = u32_at(self.type_data, t.extra + 8)?;
                self.size_of(elem, depth + 1)?.checked_mul(n)
            }
            _ => None,
        }
    }

    /// `__uint(name, val)`: a pointer to an array of `val` elements.
    fn uint_member(&self, ty: u32) -> Option<u32> {
        let p = self.resolve(ty)?;
        if p.kind != PTR {
            return None;
        }
        let a = self.resolve(p.size_type)?;
        if a.kind != ARRAY {
            return None;
        }
        u32_at(self.type_data, a.extra + 8)
    }

    /// `__type(name, T)`: a pointer to T; its size.
    fn type_member(&self, ty: u32) -> Option<u32> {
        let p = self.resolve(ty)?;
        if p.kind != PTR {
            return None;
        }
        self.size_of(p.size_type, 0)
    }

    /// The maps declared in the `.maps` DATASEC, with their offsets in that section.
    pub fn maps(&self) -> Result<Vec<(u32, MapDef)>, String> {
        let Some(ds) = self.types.iter().find(|t| t.kind == DATASEC && self.name(t.name_off) == ".maps") else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for k in 0..ds.vlen {
            let at = ds.extra + k * 12;
            let (var_id, offset) = (
                u32_at(self.type_data, at).ok_or("truncated BTF")?,
                u32_at(self.type_data, at + 4).ok_or("truncated BTF")?,
            );
            let var = self.ty(var_id).filter(|v| v.kind == VAR).ok_or("a .maps entry is not a variable")?;
            let name = self.name(var.name_off).to_string();
            let st = self
                .resolve(var.size_type)
                .filter(|s| s.kind == STRUCT)
                .ok_or_else(|| format!("map {name}: its BTF type is not a struct"))?;
            let mut def =
                MapDef { name: name.clone(), map_type: 0, key_size: 0, value_size: 0, max_entries: 0, flags: 0 };
            for m in 0..st.vlen {
                let at = st.extra + m * 12;
                let mname = self.name(u32_at(self.type_data, at).ok_or("truncated BTF")?);
                let mty = u32_at(self.type_data, at + 4).ok_or("truncated BTF")?;
                let bad = || format!("map {name}: member {mname} is not in libbpf's __uint/__type form");
                match mname {
                    "type" => def.map_type = self.uint_member(mty).ok_or_else(bad)?,
                    "max_entries" => def.max_entries = self.uint_member(mty).ok_or_else(bad)?,
                    "map_flags" => def.flags = self.uint_member(mty).ok_or_else(bad)?,
                    "key_size" => def.key_size = self.uint_member(mty).ok_or_else(bad)?,
                    "value_size" => def.value_size = self.uint_member(mty).ok_or_else(bad)?,
                    "key" => def.key_size = self.type_member(mty).ok_or_else(bad)?,
                    "value" => def.value_size = self.type_member(mty).ok_or_else(bad)?,
                    "pinning" | "numa_node" | "map_extra" => {
                        self.uint_member(mty).ok_or_else(bad)?;
                    }
                    other => return Err(format!("map {name}: member {other} is not supported")),
                }
            }
            out.push((offset, def));
        }
        Ok(out)
    }
}
