//! Loading a configuration file into tables, with file:line errors.

use std::path::Path;

use anyhow::{anyhow, Result};
use sr6_core::packet::DevId;
use sr6_core::tables::Tables;

/// Parses and builds `path`; warnings go to stderr.
pub fn tables(path: &Path) -> Result<Tables> {
    let spec = sr6_config::parse_file(path).map_err(|e| anyhow!("{e}"))?;
    let (t, warnings) = Tables::build(&spec).map_err(|e| anyhow!("{}:{}:1: {}", path.display(), e.line, e.message))?;
    for w in warnings {
        eprintln!("sr6: warning: {}: {w}", path.display());
    }
    Ok(t)
}

/// The ingress device: the one named, else the first the config names.
pub fn in_dev(t: &Tables, name: Option<&str>) -> Result<DevId> {
    match name {
        Some(n) => t.device_id(n).ok_or_else(|| {
            let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
            anyhow!("--in-dev {n}: no such device in the config (devices: {})", names.join(", "))
        }),
        None if t.devices.is_empty() => Err(anyhow!("the config names no device; nothing can receive frames")),
        None => Ok(0),
    }
}
