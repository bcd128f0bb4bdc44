//! sr6's tables mirrored into the XDP program's maps (`c/fast.c`), atomically.
//!
//! The maps every device's program shares (`routes6`, `adjs`, `devs`, `cur`, `tx` and the
//! counters) are made here once; [`Mirror::load`] loads one program per device with
//! them and its own `xsks`, `host6`, `host4` and `conf`.
//!
//! A change is applied as a generation switch: each key of `routes6` and `devs` carries
//! a generation, 0 or 1, and `cur` names the one the programs read. [`Mirror::sync`]
//! works out what the maps should hold ([`Tables::offload6`],
//! [`Tables::offload_device`]), writes the difference into the generation not read,
//! switches `cur`, waits until no program can still be reading the old generation
//! ([`Map::wait_for_programs`]), and writes the difference there too. A packet reads
//! `cur` once, so it meets the old tables or the new ones, never a mixture. The HMAC
//! keys (`hmac_keys`, each Key ID's key by its unique id) switch with them; the texts
//! verified under a key (`hmac_ok`) are the workers' to add ([`HmacExport`]), and name
//! the key they were verified with, so a text of a key that is gone is never met.
//!
//! A prefix's entry names its adjacency (`adjs`: a gateway's device and Ethernet
//! addresses while its neighbour is known) and its policy (`policies`) rather than
//! holding what they resolve to, so it depends on the prefix's own route alone (and on
//! which devices the tier sends to). [`Mirror::sync`] lists every prefix of the tables;
//! after a change of routes and neighbours alone, [`Mirror::sync_prefixes`] works out
//! only the changed prefixes' entries ([`Tables::offload6_at`]) besides the
//! adjacencies and policies, so that a route's or a neighbour's change on a full table
//! costs the tier what the change holds, not what the table holds.

use std::collections::BTreeMap;
use std::io;

use rustc_hash::FxHashMap;
use sr6_core::hmac::Verified;
use sr6_core::packet::DevId;
use sr6_core::spec::Prefix;
use sr6_core::tables::{OffloadAct, OffloadPolicy, OffloadRewrite, Tables};
use sr6_io::af_xdp::Program;
use sr6_io::bpf::{Map, MapKind};

use crate::{create_maps, load_xdp_with, Loaded, FAST_OBJECT, FAST_SECTION};

/// The shared maps, by name.
const SHARED: [&str; 13] = [
    "cur",
    "routes6",
    "routes4",
    "local4",
    "devs",
    "adjs",
    "policies",
    "hmac_keys",
    "hmac_ok",
    "tx",
    "sid_stats",
    "tx_stats",
    "rx_stats",
];
/// Slots of the `tx` device map: devices from 256 on are the general path's.
const TX_SLOTS: usize = 256;
/// Entries of `sid_stats`: SIDs from there on are the general path's.
const SID_SLOTS: u32 = 65536;

/// A prefix of `routes6` (FIB, address, length) and its new action (`None`: removed).
type RouteChange = (RouteKey, Option<Act>);
/// Family (6 or 4), FIB (dense index, at most 255), address (IPv4: the low 32 bits),
/// length.
type RouteKey = (u8, u8, u128, u8);
/// What `struct dev_conf` holds: device index, longest IPv6 and IPv4 frames taken,
/// `seg6_require_hmac`.
type DevConf = [u8; 16];
/// An HMAC Key ID as the TLV holds it (network order).
type KeyId = [u8; 4];
/// What `struct act` holds: kind, argument, second argument, Ethernet addresses.
type Act = [u8; 24];
/// What `struct policy` holds: how (`POLICY_*`), the device sent out of, the headers'
/// length, the headers right-aligned in 128 bytes.
type PolicyVal = [u8; 12 + OffloadPolicy::MAX_HEADERS];
/// Entries of `policies` per generation: policies from there on are the general path's.
const POLICY_SLOTS: u32 = 16384;
const POLICY_ENCAP: u32 = 1;
const POLICY_INSERT: u32 = 2;
const POLICY_ENCAP_L2: u32 = 3;

/// Entries of the XSK map (`xsks`): receive queues per device.
const XSK_SLOTS: u32 = 64;
const XDP_PASS: u32 = 2;

const ACT_GENERAL: u32 = 0;
const ACT_FORWARD: u32 = 1;
const ACT_END: u32 = 2;
const ACT_END_X: u32 = 3;
const ACT_DT6: u32 = 4;
const ACT_DX6: u32 = 5;
const ACT_END_PSP: u32 = 6;
const ACT_END_X_PSP: u32 = 7;
const ACT_DT4: u32 = 8;
const ACT_DT46: u32 = 9;
const ACT_DX4: u32 = 10;
const ACT_POLICY: u32 = 11;
const ACT_END_CSID: u32 = 12;
const ACT_END_X_CSID: u32 = 13;
const ACT_FORWARD_ADJ: u32 = 14;
/// Entries of `adjs` per generation: routes through adjacencies from there on are the
/// general path's.
const ADJ_SLOTS: u32 = 65536;
/// FIBs the program knows: those from 256 on are the general path's.
const TABLES: usize = 256;

/// How much a [`Mirror::sync`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Prefixes now in the maps (IPv6 and IPv4).
    pub routes: usize,
    /// Prefixes added, changed or removed.
    pub route_changes: usize,
    /// Devices the tier takes frames from.
    pub devices: usize,
    /// Whether the generation was switched (false: nothing changed).
    pub switched: bool,
}

/// The tier's counters, summed over the CPUs: packets and bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TierCounts {
    /// By SID index.
    pub sids: Vec<(u64, u64)>,
    /// By device index: received and forwarded by the tier.
    pub rx: Vec<(u64, u64)>,
    /// By device index: sent by the tier.
    pub tx: Vec<(u64, u64)>,
}

/// What one [`Mirror::sync`] writes into each generation.
struct Changes<'a> {
    routes: &'a [RouteChange],
    adjs: &'a [(u32, Option<Act>)],
    devs: &'a [(u32, Option<DevConf>)],
    policies: &'a [(u32, Option<PolicyVal>)],
    keys: &'a [(KeyId, Option<u64>)],
}

/// What the generation the programs no longer read lacks after a switch, written into
/// it once they have all let go of it ([`Mirror::settle`]): the switch's changes, and
/// the device slots and local addresses no generation names any more.
struct Behind {
    /// Ends when every program running at the switch has finished.
    waiter: std::thread::JoinHandle<io::Result<()>>,
    routes: Vec<RouteChange>,
    adjs: Vec<(u32, Option<Act>)>,
    devs: Vec<(u32, Option<DevConf>)>,
    policies: Vec<(u32, Option<PolicyVal>)>,
    keys: Vec<(KeyId, Option<u64>)>,
    /// `tx` slots to delete.
    tx_gone: Vec<u32>,
    /// `local4` addresses to delete.
    local4_gone: Vec<u32>,
}

impl std::fmt::Debug for Behind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Behind {{ {} routes, {} adjacencies, .. }}", self.routes.len(), self.adjs.len())
    }
}

/// A worker's handle on the texts the XDP tier takes HMACs for (`hmac_ok`): each
/// [`Verified`] the general path hands on ([`sr6_core::hmac::drain_verified`]).
#[derive(Debug)]
pub struct HmacExport {
    map: Map,
}

impl HmacExport {
    /// Adds `v` (the least recently used text goes when the map is full).
    pub fn insert(&self, v: &Verified) -> io::Result<()> {
        let (k, t) = hmac_entry(v);
        self.map.update(&k, &t)
    }
}

/// `struct hmac_seen` and `struct hmac_text` for a verified text.
fn hmac_entry(v: &Verified) -> ([u8; 64], [u8; 132]) {
    let mut k = [0u8; 64];
    k[..8].copy_from_slice(&v.key_uid.to_ne_bytes());
    k[8..12].copy_from_slice(&v.key_id.to_be_bytes());
    k[12..28].copy_from_slice(&v.src);
    k[28..60].copy_from_slice(&v.mac);
    let mut t = [0u8; 132];
    t[0] = v.last_entry;
    t[1] = v.flags;
    t[4..].copy_from_slice(&v.segments);
    (k, t)
}

/// The shared maps and what both generations of them hold.
#[derive(Debug)]
pub struct Mirror {
    maps: Vec<(String, Map)>,
    /// The map-of-maps whose update waits for the programs, and its inner map.
    wait: std::sync::Arc<(Map, Map)>,
    /// The generation the programs read.
    active: u8,
    /// What the other generation lacks until the programs let go of it.
    behind: Option<Behind>,
    /// The prefixes in the maps.
    routes: BTreeMap<RouteKey, Act>,
    /// Everything else they hold.
    side: Side,
}

/// Which devices the tier takes frames from and sends to (see [`Mirror::sync`]).
struct Targets<'a> {
    ifindex: &'a [Option<u32>],
    target: &'a [bool],
}

impl Targets<'_> {
    /// The ifindex the tier sends to for device `d`, if it may.
    fn tx_of(&self, d: DevId) -> Option<u32> {
        let i = usize::from(d);
        if i >= TX_SLOTS || !self.target.get(i).copied().unwrap_or(false) {
            return None;
        }
        self.ifindex.get(i).copied().flatten()
    }
}

/// What the maps hold besides the prefixes, as the tables say.
#[derive(Debug, Clone, Default, PartialEq)]
struct Side {
    /// By adjacency: where it forwards (an `ACT_FORWARD`), if the tier sends to it.
    adjs: FxHashMap<u32, Act>,
    policies: FxHashMap<u32, PolicyVal>,
    devs: FxHashMap<u32, DevConf>,
    local4: FxHashMap<u32, ()>,
    /// By Key ID: the key's [`HmacKey::uid`](sr6_core::hmac::HmacKey::uid).
    keys: FxHashMap<KeyId, u64>,
    /// By device index: the ifindex in the device map (0: none).
    tx: Vec<u32>,
    /// The kernel table id of each FIB, by the dense index the prefixes' keys hold.
    fibs: Vec<u32>,
}

impl Side {
    fn of(t: &Tables, to: &Targets) -> Side {
        let mut policies: FxHashMap<u32, PolicyVal> = FxHashMap::default();
        for p in t.offload_policies() {
            if p.index < POLICY_SLOTS && to.tx_of(p.out).is_some() {
                if let Some(v) = policy_val(&p) {
                    policies.insert(p.index, v);
                }
            }
        }
        let mut adjs: FxHashMap<u32, Act> = FxHashMap::default();
        for adj in 0..t.adjacencies.len().min(ADJ_SLOTS as usize) as u32 {
            if let Some((dev, eth)) = t.offload_adjacency(adj).filter(|(d, _)| to.tx_of(*d).is_some()) {
                adjs.insert(adj, act_bytes(ACT_FORWARD, dev.into(), 0, &eth));
            }
        }
        let local4: FxHashMap<u32, ()> = t.local_addrs4().into_iter().map(|a| (a, ())).collect();
        let mut devs: FxHashMap<u32, DevConf> = FxHashMap::default();
        let max_len = t.fast_max_len().min(u32::MAX as usize) as u32;
        for (d, ix) in to.ifindex.iter().enumerate() {
            let (Some(ix), Ok(dev)) = (ix, DevId::try_from(d)) else { continue };
            let (v6, v4) = (t.offload_device(dev), t.offload_device4(dev));
            if *ix < DEVS_IFINDEX_MAX && (v6 || v4) {
                let require_hmac = t.devices.get(d).map_or(0, |x| i32::from(x.require_hmac));
                let mut v = [0u8; 16];
                v[..4].copy_from_slice(&u32::from(dev).to_ne_bytes());
                v[4..8].copy_from_slice(&(if v6 { max_len } else { 0 }).to_ne_bytes());
                v[8..12].copy_from_slice(&(if v4 { max_len } else { 0 }).to_ne_bytes());
                v[12..].copy_from_slice(&require_hmac.to_ne_bytes());
                devs.insert(*ix, v);
            }
        }
        let tx: Vec<u32> = (0..TX_SLOTS).map(|d| to.tx_of(d as DevId).unwrap_or(0)).collect();
        let keys: FxHashMap<KeyId, u64> = t.hmac.keys.iter().map(|(id, k)| (id.to_be_bytes(), k.uid())).collect();
        Side { adjs, policies, devs, local4, keys, tx, fibs: t.table_ids.clone() }
    }
}

/// What `struct act` holds for an IPv6 prefix of FIB `table` whose action is `act`.
/// It depends on the prefix's own route and on which devices the tier sends to (`to`),
/// nothing else: an adjacency's or a policy's state is in its own map (`adjs`,
/// `policies`), so their changes leave every prefix's entry as it is.
fn act6(act: OffloadAct, table: u8, to: &Targets) -> Act {
    match act {
        OffloadAct::Forward { dev, eth } if to.tx_of(dev).is_some() => act_bytes(ACT_FORWARD, dev.into(), 0, &eth),
        OffloadAct::ForwardAdj { adj } if adj < ADJ_SLOTS => act_bytes(ACT_FORWARD_ADJ, adj, 0, &[0; 12]),
        OffloadAct::End { sid, table: next, psp } if sid < SID_SLOTS && next < TABLES => {
            act_bytes(if psp { ACT_END_PSP } else { ACT_END }, sid, next as u32, &[0; 12])
        }
        OffloadAct::EndX { sid, adj, psp } if sid < SID_SLOTS && adj < ADJ_SLOTS => {
            act_bytes(if psp { ACT_END_X_PSP } else { ACT_END_X }, sid, adj, &[0; 12])
        }
        OffloadAct::Dt6 { sid, table: next } if sid < SID_SLOTS && next < TABLES => {
            act_bytes(ACT_DT6, sid, next as u32, &[0; 12])
        }
        OffloadAct::Dx6 { sid, adj } if sid < SID_SLOTS && adj < ADJ_SLOTS => act_bytes(ACT_DX6, sid, adj, &[0; 12]),
        OffloadAct::Dt4 { sid, table: next } if sid < SID_SLOTS && next < TABLES => {
            act_bytes(ACT_DT4, sid, next as u32, &[0; 12])
        }
        OffloadAct::Dt46 { sid, table: next } if sid < SID_SLOTS && next < TABLES => {
            act_bytes(ACT_DT46, sid, next as u32, &[0; 12])
        }
        OffloadAct::Dx4 { sid, adj } if sid < SID_SLOTS && adj < ADJ_SLOTS => act_bytes(ACT_DX4, sid, adj, &[0; 12]),
        // The SID's index (under SID_SLOTS: 16 bits) and the container's lengths.
        OffloadAct::EndCsid { sid, table: next, lblen, nflen } if sid < SID_SLOTS && next < TABLES => {
            act_bytes(ACT_END_CSID, csid_arg(sid, lblen, nflen), next as u32, &[0; 12])
        }
        OffloadAct::EndXCsid { sid, adj, lblen, nflen } if sid < SID_SLOTS && adj < ADJ_SLOTS => {
            act_bytes(ACT_END_X_CSID, csid_arg(sid, lblen, nflen), adj, &[0; 12])
        }
        // (Acted on in the main FIB only, as on the fast path.)
        OffloadAct::Policy { policy } if table == 0 && policy < POLICY_SLOTS => {
            act_bytes(ACT_POLICY, policy, 0, &[0; 12])
        }
        _ => act_bytes(ACT_GENERAL, 0, 0, &[0; 12]),
    }
}

/// What `struct act` holds for an IPv4 prefix whose action is `act`.
fn act4(act: OffloadAct, to: &Targets) -> Act {
    match act {
        OffloadAct::Forward { dev, eth } if to.tx_of(dev).is_some() => act_bytes(ACT_FORWARD, dev.into(), 0, &eth),
        OffloadAct::ForwardAdj { adj } if adj < ADJ_SLOTS => act_bytes(ACT_FORWARD_ADJ, adj, 0, &[0; 12]),
        _ => act_bytes(ACT_GENERAL, 0, 0, &[0; 12]),
    }
}

/// `addr` (left-aligned in `width` bits of a `u128`: 128, or 32 for IPv4 in the low
/// bits) with the bits past `len` clear.
fn masked(addr: u128, len: u8, width: u32) -> u128 {
    let host = width.saturating_sub(u32::from(len));
    if host >= 128 {
        0
    } else {
        addr & !((1u128 << host) - 1)
    }
}

/// `struct route_key` (IPv6) or `struct route4_key`: the prefix length counts the
/// generation and FIB bytes too.
fn route_key(gen: u8, (fam, table, addr, len): RouteKey) -> Vec<u8> {
    let mut k = (16 + u32::from(len)).to_ne_bytes().to_vec();
    k.extend_from_slice(&[gen, table]);
    if fam == 4 {
        k.extend_from_slice(&(addr as u32).to_be_bytes());
    } else {
        k.extend_from_slice(&addr.to_be_bytes());
    }
    k
}

/// Bytes of `struct route_key`.
const ROUTE_KEY: usize = 22;
/// Bytes of `struct route4_key`.
const ROUTE4_KEY: usize = 10;

/// The argument of a NEXT-C-SID action: SID `sid` (below [`SID_SLOTS`]), the
/// Locator-Block's and C-SIDs' lengths in bits.
fn csid_arg(sid: u32, lblen: u8, nflen: u8) -> u32 {
    sid | u32::from(lblen) << 16 | u32::from(nflen) << 24
}

/// The bytes of `struct policy` for `p`, if its headers fit.
fn policy_val(p: &OffloadPolicy) -> Option<PolicyVal> {
    let n = p.headers.len();
    if n > OffloadPolicy::MAX_HEADERS {
        return None;
    }
    let kind = match p.rewrite {
        OffloadRewrite::Encap => POLICY_ENCAP,
        OffloadRewrite::Insert => POLICY_INSERT,
        OffloadRewrite::EncapL2 => POLICY_ENCAP_L2,
    };
    let mut v = [0u8; 12 + OffloadPolicy::MAX_HEADERS];
    v[..4].copy_from_slice(&kind.to_ne_bytes());
    v[4..8].copy_from_slice(&u32::from(p.out).to_ne_bytes());
    v[8..12].copy_from_slice(&(n as u32).to_ne_bytes());
    v[12 + OffloadPolicy::MAX_HEADERS - n..].copy_from_slice(&p.headers);
    Some(v)
}

fn act_bytes(kind: u32, arg: u32, arg2: u32, eth: &[u8; 12]) -> Act {
    let mut v = [0u8; 24];
    v[..4].copy_from_slice(&kind.to_ne_bytes());
    v[4..8].copy_from_slice(&arg.to_ne_bytes());
    v[8..12].copy_from_slice(&arg2.to_ne_bytes());
    v[12..].copy_from_slice(eth);
    v
}

/// What changes `have` into `want`: each key whose value is new (`Some`) or gone (`None`).
fn diff<K: Copy + Eq + std::hash::Hash, V: Copy + PartialEq>(
    want: &FxHashMap<K, V>,
    have: &FxHashMap<K, V>,
) -> Vec<(K, Option<V>)> {
    let mut v: Vec<(K, Option<V>)> =
        want.iter().filter(|(k, x)| have.get(k) != Some(x)).map(|(k, x)| (*k, Some(*x))).collect();
    v.extend(have.keys().filter(|k| !want.contains_key(k)).map(|k| (*k, None)));
    v
}

/// [`diff`] of two lists sorted by key, each key once: one walk, no hashing (the FIB's
/// prefixes, up to millions, are compared at each change).
fn diff_sorted<K: Copy + Ord, V: Copy + PartialEq>(
    want: &[(K, V)],
    have: impl IntoIterator<Item = (K, V)>,
) -> Vec<(K, Option<V>)> {
    let mut v = Vec::new();
    let mut have = have.into_iter().peekable();
    let mut want = want.iter().copied().peekable();
    loop {
        match (want.peek().copied(), have.peek().copied()) {
            (Some(w), Some(h)) if w.0 == h.0 => {
                if w.1 != h.1 {
                    v.push((w.0, Some(w.1)));
                }
                want.next();
                have.next();
            }
            (Some(w), Some(h)) if w.0 < h.0 => {
                v.push((w.0, Some(w.1)));
                want.next();
            }
            (Some(w), None) => {
                v.push((w.0, Some(w.1)));
                want.next();
            }
            (_, Some(h)) => {
                v.push((h.0, None));
                have.next();
            }
            (None, None) => return v,
        }
    }
}

/// `v` sorted by key, the last entry of each key kept (as a map's inserts would).
fn sorted_unique<K: Copy + Ord, V>(mut v: Vec<(K, V)>) -> Vec<(K, V)> {
    // Stable: entries of one key keep their order, and the last one stays.
    v.sort_by_key(|e| e.0);
    let mut out: Vec<(K, V)> = Vec::with_capacity(v.len());
    for e in v {
        match out.last_mut() {
            Some(l) if l.0 == e.0 => *l = e,
            _ => out.push(e),
        }
    }
    out
}

/// Devices from this ifindex on are the general path's (`devs` is an array).
const DEVS_IFINDEX_MAX: u32 = 65536;

/// The index of `devs` for a device and generation.
fn dev_key(ifindex: u32, gen: u8) -> [u8; 4] {
    (ifindex << 1 | u32::from(gen & 1)).to_ne_bytes()
}

impl Mirror {
    /// Makes the shared maps, empty: every program loaded with them hands every frame
    /// to the general path until the first [`sync`](Self::sync).
    pub fn new() -> io::Result<Mirror> {
        let maps = create_maps(FAST_OBJECT, FAST_SECTION, &SHARED)?;
        let wait_inner = Map::create(MapKind::Array, 4, 4, 1, "sr6_wait_in")?;
        let wait = Map::create_wait(&wait_inner, "sr6_wait")?;
        Ok(Mirror {
            maps,
            wait: std::sync::Arc::new((wait, wait_inner)),
            active: 0,
            behind: None,
            routes: BTreeMap::new(),
            side: Side { tx: vec![0; TX_SLOTS], ..Side::default() },
        })
    }

    /// The shared map `name` (of `c/fast.c`).
    pub fn map(&self, name: &str) -> &Map {
        match self.maps.iter().find(|(n, _)| n == name) {
            Some((_, m)) => m,
            // SHARED lists every name this module asks for.
            None => unreachable!("no shared map {name}"),
        }
    }

    /// Loads the fast-path program for one device, with the shared maps; what it hands
    /// to sr6 when the queue has no socket goes to the kernel (`XDP_PASS`, in `conf`).
    pub fn load(&self) -> io::Result<Loaded> {
        let shared: Vec<(&str, &Map)> = self.maps.iter().map(|(n, m)| (n.as_str(), m)).collect();
        let l = load_xdp_with(FAST_OBJECT, FAST_SECTION, &shared)?;
        if let Some(conf) = l.map("conf") {
            conf.update(&0u32.to_ne_bytes(), &XDP_PASS.to_ne_bytes())?;
        }
        Ok(l)
    }

    /// [`load`](Self::load), as a program for [`XdpAttachment::attach_program`]
    /// (its XSK map and host address maps handed over).
    pub fn program(&self) -> io::Result<Program> {
        let mut l = self.load()?;
        let missing = || io::Error::other("the XDP object lacks a map the attachment needs");
        let xsks = l.take("xsks").ok_or_else(missing)?;
        let host6 = l.take("host6").ok_or_else(missing)?;
        let host4 = l.take("host4").ok_or_else(missing)?;
        Ok(Program { prog: l.prog, xsks, host6, host4, max_queues: XSK_SLOTS })
    }

    /// Forgets every device, so that every frame goes to the general path (after an
    /// error left the maps in a state not known: the way back to a known one is a
    /// [`sync`](Self::sync) that succeeds).
    pub fn disable(&mut self) {
        // (Whatever the other generation lacked is zeroed with the rest.)
        if let Some(b) = self.behind.take() {
            let _ = b.waiter.join();
        }
        let m = self.map("devs");
        for k in 0..2 * DEVS_IFINDEX_MAX {
            let _ = m.update(&k.to_ne_bytes(), &[0; 16]);
        }
        let r = self.map("routes6");
        if let Ok(keys) = r.keys::<ROUTE_KEY>() {
            for k in keys {
                let _ = r.delete(&k);
            }
        }
        let r = self.map("routes4");
        if let Ok(keys) = r.keys::<ROUTE4_KEY>() {
            for k in keys {
                let _ = r.delete(&k);
            }
        }
        // Zeros in every slot of the arrays routes name (in no state known either): the
        // next sync writes what the tables have.
        let m = self.map("adjs");
        for k in 0..2 * ADJ_SLOTS {
            let _ = m.update(&k.to_ne_bytes(), &[0; 24]);
        }
        let m = self.map("policies");
        for k in 0..2 * POLICY_SLOTS {
            let _ = m.update(&k.to_ne_bytes(), &[0; 12 + OffloadPolicy::MAX_HEADERS]);
        }
        self.side.devs.clear();
        self.routes.clear();
        self.side.adjs.clear();
        self.side.policies.clear();
    }

    /// Makes the maps hold what `t` says, switching generations if anything changed.
    /// `ifindex[d]` is device `d`'s interface index if it runs this tier's program
    /// (frames received there are taken) and can be sent to by it (`target[d]`):
    /// routes out of any other device are the general path's.
    pub fn sync(&mut self, t: &Tables, ifindex: &[Option<u32>], target: &[bool]) -> io::Result<SyncStats> {
        let to = Targets { ifindex, target };
        let side = Side::of(t, &to);
        let (offload6, offload4) = (t.offload6(), t.offload4());
        let mut want: Vec<(RouteKey, Act)> = Vec::with_capacity(offload6.len() + offload4.len());
        for o in offload6 {
            let Ok(table) = u8::try_from(o.table) else { continue };
            want.push(((6, table, o.addr, o.len), act6(o.act, table, &to)));
        }
        for o in offload4 {
            let Ok(table) = u8::try_from(o.table) else { continue };
            want.push(((4, table, u128::from(o.addr), o.len), act4(o.act, &to)));
        }
        let want = sorted_unique(want);
        let changed = diff_sorted(&want, self.routes.iter().map(|(k, v)| (*k, *v)));
        let routes = want.len();
        let switched = self.switch(side, &changed)?;
        if switched {
            // (Built from sorted entries at once.)
            self.routes = want.into_iter().collect();
        }
        Ok(SyncStats { routes, route_changes: changed.len(), devices: self.side.devs.len(), switched })
    }

    /// [`sync`](Self::sync) after a change that alters the entries of `prefixes` alone
    /// (each a FIB's dense index and a prefix): routes added, replaced or deleted
    /// there, and anything that is not a prefix's — neighbours (the adjacencies'
    /// entries; an on-link /128 to a neighbour is a prefix of its own), policies,
    /// devices, keys, local addresses. Only those prefixes' entries are worked out and
    /// compared, not every prefix of the tables. If what every prefix's entry depends
    /// on differs — the devices the tier sends to, the FIBs themselves — it syncs
    /// everything instead.
    pub fn sync_prefixes(
        &mut self,
        t: &Tables,
        ifindex: &[Option<u32>],
        target: &[bool],
        prefixes: &[(usize, Prefix)],
    ) -> io::Result<SyncStats> {
        let to = Targets { ifindex, target };
        let side = Side::of(t, &to);
        // (What `act6` and `act4` read besides the prefix's own route.)
        if side.tx != self.side.tx || side.fibs != self.side.fibs {
            return self.sync(t, ifindex, target);
        }
        let mut changed: Vec<RouteChange> = Vec::with_capacity(prefixes.len());
        for &(fib, prefix) in prefixes {
            let Ok(table) = u8::try_from(fib) else { continue };
            let (key, act) = match prefix {
                Prefix::V6(a, len) => {
                    let addr = masked(u128::from(a), len.min(128), 128);
                    let o = t.offload6_at(fib, addr, len);
                    ((6, table, addr, len), o.map(|o| act6(o.act, table, &to)))
                }
                Prefix::V4(a, len) => {
                    let addr = masked(u128::from(u32::from(a)), len.min(32), 32);
                    let o = t.offload4_at(fib, addr as u32, len);
                    ((4, table, addr, len), o.map(|o| act4(o.act, &to)))
                }
            };
            if self.routes.get(&key) != act.as_ref() {
                changed.push((key, act));
            }
        }
        // (The last word on a prefix named twice is the same: both read `t`.)
        changed.sort_by_key(|c| c.0);
        changed.dedup_by_key(|c| c.0);
        let switched = self.switch(side, &changed)?;
        if switched {
            for (k, v) in &changed {
                match v {
                    Some(v) => self.routes.insert(*k, *v),
                    None => self.routes.remove(k),
                };
            }
        }
        Ok(SyncStats {
            routes: self.routes.len(),
            route_changes: changed.len(),
            devices: self.side.devs.len(),
            switched,
        })
    }

    /// Brings the generation the programs do not read up to the one they read, once
    /// every program that read it has finished: the last switch's changes, written
    /// there (see [`switch`](Self::switch)). Waits for them if they have not yet
    /// (one RCU grace period from the switch). Every sync does it first; after it,
    /// both generations hold the same.
    pub fn settle(&mut self) -> io::Result<()> {
        let Some(b) = self.behind.take() else { return Ok(()) };
        b.waiter.join().map_err(|_| io::Error::other("the wait for the XDP programs panicked"))??;
        let c = Changes { routes: &b.routes, adjs: &b.adjs, devs: &b.devs, policies: &b.policies, keys: &b.keys };
        self.write(1 - self.active, &c)?;
        let devmap = self.map("tx");
        for d in &b.tx_gone {
            devmap.delete(&d.to_ne_bytes())?;
        }
        let local4 = self.map("local4");
        for a in &b.local4_gone {
            local4.delete(&a.to_be_bytes())?;
        }
        Ok(())
    }

    /// Writes `changed` and what differs between `side` and the maps' into the
    /// generation not read (after [`settle`](Self::settle)), and switches `cur` to it;
    /// `false` (nothing written) if nothing differs. The generation the programs read
    /// until then gets the same once they have let go of it, which a thread waits for
    /// meanwhile: at the next sync, or [`settle`](Self::settle) — so a change is live
    /// without waiting for the grace period. `self.side` is then `side`; the caller
    /// brings `self.routes` up to date.
    fn switch(&mut self, side: Side, changed: &[RouteChange]) -> io::Result<bool> {
        self.settle()?;
        let dev_changed: Vec<(u32, Option<DevConf>)> = diff(&side.devs, &self.side.devs);
        let adjs_changed = diff(&side.adjs, &self.side.adjs);
        let local4_changed = diff(&side.local4, &self.side.local4);
        let policies_changed = diff(&side.policies, &self.side.policies);
        let keys_changed = diff(&side.keys, &self.side.keys);
        if changed.is_empty()
            && adjs_changed.is_empty()
            && dev_changed.is_empty()
            && local4_changed.is_empty()
            && policies_changed.is_empty()
            && keys_changed.is_empty()
            && side.tx == self.side.tx
        {
            // (The FIBs' table ids may differ: they name nothing the maps hold.)
            self.side.fibs = side.fibs;
            return Ok(false);
        }
        // New local addresses before the switch, old ones after it: a packet from an
        // address local in either tables is left to the general path.
        let local4 = self.map("local4");
        for (a, _) in local4_changed.iter().filter(|(_, v)| v.is_some()) {
            // (The key is the address as the packet holds it.)
            local4.update(&a.to_be_bytes(), &[1])?;
        }
        // New device slots first (routes may name them), old ones once no generation does.
        let devmap = self.map("tx");
        for (d, (&new, &old)) in side.tx.iter().zip(&self.side.tx).enumerate() {
            if new != 0 && new != old {
                devmap.update(&(d as u32).to_ne_bytes(), &new.to_ne_bytes())?;
            }
        }
        let next = 1 - self.active;
        let c = Changes {
            routes: changed,
            adjs: &adjs_changed,
            devs: &dev_changed,
            policies: &policies_changed,
            keys: &keys_changed,
        };
        self.write(next, &c)?;
        self.map("cur").update(&0u32.to_ne_bytes(), &u32::from(next).to_ne_bytes())?;
        self.active = next;
        let wait = std::sync::Arc::clone(&self.wait);
        let waiter =
            std::thread::Builder::new().name("sr6-xdp-wait".into()).spawn(move || wait.0.wait_for_programs(&wait.1))?;
        let tx_gone = side.tx.iter().zip(&self.side.tx).enumerate();
        self.behind = Some(Behind {
            waiter,
            routes: changed.to_vec(),
            adjs: adjs_changed,
            devs: dev_changed,
            policies: policies_changed,
            keys: keys_changed,
            tx_gone: tx_gone.filter(|(_, (&new, &old))| new == 0 && old != 0).map(|(d, _)| d as u32).collect(),
            local4_gone: local4_changed.iter().filter(|(_, v)| v.is_none()).map(|(a, _)| *a).collect(),
        });
        self.side = side;
        Ok(true)
    }

    fn write(&self, gen: u8, c: &Changes) -> io::Result<()> {
        // Adjacencies and policies first: a route written below may name one. (Arrays:
        // zeros for one the tier does not send to or apply, which a route may still
        // name.)
        let m = self.map("adjs");
        for (i, v) in c.adjs {
            m.update(&(i << 1 | u32::from(gen & 1)).to_ne_bytes(), v.as_ref().unwrap_or(&[0; 24]))?;
        }
        let m = self.map("policies");
        for (i, v) in c.policies {
            m.update(
                &(i << 1 | u32::from(gen & 1)).to_ne_bytes(),
                v.as_ref().unwrap_or(&[0; 12 + OffloadPolicy::MAX_HEADERS]),
            )?;
        }
        let (routes6, routes4) = (self.map("routes6"), self.map("routes4"));
        for (key, v) in c.routes {
            let routes = if key.0 == 4 { routes4 } else { routes6 };
            let k = route_key(gen, *key);
            match v {
                Some(v) => routes.update(&k, v)?,
                None => routes.delete(&k)?,
            }
        }
        let m = self.map("devs");
        for (ix, v) in c.devs {
            let k = dev_key(*ix, gen);
            // (An array: "not taken" is a max_len of 0.)
            m.update(&k, v.as_ref().unwrap_or(&[0; 16]))?;
        }
        let m = self.map("hmac_keys");
        for (id, uid) in c.keys {
            let mut k = [0u8; 8];
            k[..4].copy_from_slice(id);
            k[4..].copy_from_slice(&u32::from(gen).to_ne_bytes());
            match uid {
                Some(u) => m.update(&k, &u.to_ne_bytes())?,
                None => m.delete(&k)?,
            }
        }
        Ok(())
    }

    /// A handle on `hmac_ok` for a worker to add the texts it verified to.
    pub fn hmac_export(&self) -> io::Result<HmacExport> {
        Ok(HmacExport { map: self.map("hmac_ok").try_clone()? })
    }

    /// The tier's counters so far, for `sids` SIDs and `devices` devices.
    pub fn counts(&self, sids: usize, devices: usize) -> io::Result<TierCounts> {
        let cpus = sr6_io::bpf::possible_cpus()?;
        let read = |name: &str, n: usize| -> io::Result<Vec<(u64, u64)>> {
            let m = self.map(name);
            let mut buf = vec![0u8; 16 * cpus];
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                m.lookup_percpu(&(i as u32).to_ne_bytes(), &mut buf)?;
                let (mut p, mut b) = (0u64, 0u64);
                for c in buf.chunks_exact(16) {
                    p += u64::from_ne_bytes(c[..8].try_into().unwrap_or_default());
                    b += u64::from_ne_bytes(c[8..].try_into().unwrap_or_default());
                }
                out.push((p, b));
            }
            Ok(out)
        };
        Ok(TierCounts {
            sids: read("sid_stats", sids.min(SID_SLOTS as usize))?,
            rx: read("rx_stats", devices.min(TX_SLOTS))?,
            tx: read("tx_stats", devices.min(TX_SLOTS))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The walk over sorted lists says what the map comparison says.
        #[test]
        fn the_sorted_diff_is_the_map_diff(
            want in proptest::collection::vec((0u8..40, 0u8..4), 0..60),
            have in proptest::collection::vec((0u8..40, 0u8..4), 0..60),
        ) {
            let (want_map, have_map): (FxHashMap<u8, u8>, FxHashMap<u8, u8>) =
                (want.iter().copied().collect(), have.iter().copied().collect());
            let mut by_map = diff(&want_map, &have_map);
            by_map.sort_unstable();
            let mut by_walk = diff_sorted(&sorted_unique(want), sorted_unique(have));
            by_walk.sort_unstable();
            prop_assert_eq!(by_walk, by_map);
        }
    }

    #[test]
    fn host_bits_are_cleared() {
        let a: u128 = "2001:db8:ffff:ffff::1".parse::<std::net::Ipv6Addr>().unwrap().into();
        assert_eq!(masked(a, 32, 128), "2001:db8::".parse::<std::net::Ipv6Addr>().unwrap().into());
        assert_eq!(masked(a, 128, 128), a);
        assert_eq!(masked(a, 0, 128), 0);
        assert_eq!(masked(0xc000_02ff, 24, 32), 0xc000_0200);
        assert_eq!(masked(0xc000_02ff, 0, 32), 0);
        assert_eq!(masked(0xc000_02ff, 32, 32), 0xc000_02ff);
    }

    #[test]
    fn the_last_entry_of_a_key_is_kept() {
        assert_eq!(sorted_unique(vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd')]), [(1, 'd'), (2, 'c')]);
        assert_eq!(diff_sorted(&[(1, 'x'), (3, 'y')], [(1, 'x'), (2, 'z'), (3, 'w')]), [(2, None), (3, Some('y'))]);
    }
}
