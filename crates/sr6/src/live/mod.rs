//! The live router behind `sr6 run`: workers forwarding between Linux devices, the
//! control side that builds and swaps tables, neighbours resolved at run time, and the
//! control socket of `sr6 ctl`.
//!
//! Data flows one way: port (receive) -> batch -> pipeline -> port (transmit), in each
//! worker ([`worker`]). The control side ([`control`]) never touches a packet: it builds
//! complete new tables and publishes them with one atomic pointer store
//! ([`state::Shared::publish`]); a worker picks them up between two batches, so a
//! change loses nothing in flight. Plain route changes are made in place instead, on
//! the copy of the tables the workers have let go of ([`in_place`]). The link follower ([`links`]) watches the devices:
//! one that disappears has its port closed, one that comes back (same name, new
//! ifindex) gets a new port, handed to each worker through [`link_state::Links`].

pub mod absent;
pub mod backend;
pub mod control;
pub mod ctl;
pub mod fast_tier;
pub mod fpm;
pub mod fw_ctl;
pub mod ids;
pub mod in_place;
pub mod kernel_routes;
pub mod link_state;
pub mod links;
pub mod neigh;
pub mod outside;
pub mod overload;
pub mod pending;
pub mod show;
pub mod state;
pub mod worker;

#[cfg(test)]
mod tests;
