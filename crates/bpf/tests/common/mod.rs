//! Shared by sr6-bpf's integration tests: compiling the C programs in tests/progs with
//! clang (`-O2 -g -target bpf`, as iproute2's documentation does), and building IPv6 +
//! SRH packets byte by byte from RFC 8200 §3 and RFC 8754 §2.
#![allow(dead_code)]

use std::path::PathBuf;

/// Compiles tests/progs/NAME.c to an object under the target's test directory. Panics,
/// with what to do, when clang is missing: these tests never skip.
pub fn compile(name: &str) -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/progs").join(format!("{name}.c"));
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bpf-progs");
    std::fs::create_dir_all(&out_dir).expect("create the objects' directory");
    let out = out_dir.join(format!("{name}.o"));
    sr6_bpf::clang::compile(&src, &out, &[]).unwrap_or_else(|e| panic!("{e}"));
    out
}

pub fn addr(last: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0xfc;
    a[15] = last;
    a
}

pub const SRC: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

/// An IPv6 header (traffic class 0x12, flow label 0x34567, hop limit 64).
pub fn ipv6(nexthdr: u8, payload_len: usize, src: [u8; 16], dst: [u8; 16]) -> Vec<u8> {
    let mut h = vec![0x61, 0x23, 0x45, 0x67];
    h.extend_from_slice(&(payload_len as u16).to_be_bytes());
    h.push(nexthdr);
    h.push(64);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h
}

/// An SRH: `segs` in Segment List order ([0] is the last segment), then `tlvs`.
pub fn srh(nexthdr: u8, sl: u8, flags: u8, tag: u16, segs: &[[u8; 16]], tlvs: &[u8]) -> Vec<u8> {
    let len = 8 + segs.len() * 16 + tlvs.len();
    assert_eq!(len % 8, 0);
    let mut s = vec![nexthdr, (len / 8 - 1) as u8, 4, sl, (segs.len() - 1) as u8, flags];
    s.extend_from_slice(&tag.to_be_bytes());
    for a in segs {
        s.extend_from_slice(a);
    }
    s.extend_from_slice(tlvs);
    s
}

/// The inner packet: IPv6 from 2001:db8::1 to fc00::99 carrying `proto` with 8 bytes.
pub fn inner(proto: u8) -> Vec<u8> {
    let mut p = ipv6(proto, 8, SRC, addr(0x99));
    p.extend_from_slice(&[0x30, 0x39, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00]);
    p
}

/// The segments of the test packets: the SID fc00::1 first, then fc00::2, then fc00::d.
pub fn segs() -> Vec<[u8; 16]> {
    vec![addr(0xd), addr(2), addr(1)]
}

/// Outer IPv6 + SRH(sl, flags, tag, tlvs) + inner, with the destination Segment List[sl].
pub fn packet(sl: u8, flags: u8, tag: u16, tlvs: &[u8], inner_proto: u8) -> Vec<u8> {
    let segs = segs();
    let s = srh(41, sl, flags, tag, &segs, tlvs);
    let i = inner(inner_proto);
    let mut p = ipv6(43, s.len() + i.len(), SRC, segs[sl as usize]);
    p.extend_from_slice(&s);
    p.extend_from_slice(&i);
    p
}
