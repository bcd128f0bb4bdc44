//! `sr6-bpf`: the eBPF runtime behind End.BPF (the CoNEXT'18 End.BPF paper; Linux's
//! `seg6local` action `End.BPF`, net/ipv6/seg6_local.c): programs written in C, compiled
//! with `clang -O2 -target bpf`, bound to a SID and run per packet.
//!
//! - [`elf`]: the loader of clang's ELF objects (program sections, relocations of map
//!   references, BPF-to-BPF calls and global data; maps from `.maps` (BTF, [`btf`]) or the
//!   legacy `maps` section).
//! - [`clang`]: compiling C programs into objects with clang (tests, `sr6 perf`).
//! - [`verifier`]: the load-time checks on the instruction stream ("verifier-lite").
//! - [`vm`]: the interpreter; every memory access bounds-checked at run time.
//! - [`maps`]: array and hash maps (and their per-CPU variants, as one copy), LPM tries,
//!   perf event arrays.
//! - [`events`]: `bpf_perf_event_output`'s events and the bounded ring a reader drains.
//! - [`helpers`]: helper ids and which program type may call which.
//! - [`bytes`]: a packet's bytes and how helpers resize them ([`bytes::PacketBytes`]).
//! - [`skb`]: the packet interface the helpers act on ([`skb::Skb`]).
//! - [`lwt`]: the LWT hooks of routes (`encap bpf in|out|xmit`, net/core/lwt_bpf.c) and
//!   `bpf_lwt_push_encap`.
//! - [`seg6`]: End.BPF itself over a plain packet: the SRH state of the helpers
//!   `bpf_lwt_seg6_store_bytes`, `_adjust_srh`, `_action` (net/core/filter.c) and the
//!   run of `input_action_end_bpf`.
//!
//! - [`jit`]: the x86-64 JIT, differentially tested against the interpreter.
//!
//! Unsafe code only in [`jit`] (executable memory, entering the machine code); nothing a
//! program does can panic the caller.
#![deny(unsafe_code)]

pub mod btf;
pub mod bytes;
pub mod clang;
pub mod elf;
pub mod events;
mod helper_names;
pub mod helpers;
pub mod insn;
#[allow(unsafe_code)]
pub mod jit;
pub mod lwt;
pub mod maps;
pub mod seg6;
pub mod skb;
pub mod verifier;
pub mod vm;

pub use elf::{load_object, LoadError, Object};
pub use vm::{run, run_with, Engine, Fault, Program, RunOpts, Scratch};
