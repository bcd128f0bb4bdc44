//! Loading a configuration file into tables, with file:line errors.

use std::path::{Path, PathBuf};

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
        Some(n) => t
            .device_id(n)
            .ok_or_else(|| anyhow!("--in-dev {n}: no such device in the config (devices: {})", device_names(t))),
        None if t.devices.is_empty() => Err(anyhow!("the config names no device; nothing can receive frames")),
        None => Ok(0),
    }
}

/// The devices of the config, for an error message.
fn device_names(t: &Tables) -> String {
    let names: Vec<&str> = t.devices.iter().map(|d| d.name.as_str()).collect();
    names.join(", ")
}

/// An `--in [DEV=]FILE` argument of `sr6 pcap` (or `--warmup` of `sr6 bench`; `flag`): the device its frames arrive on and
/// the file. A Linux device name may itself hold a `=` (only `/`, `:` and white space
/// are refused), so the argument is split at the first `=` whose left part is a device
/// of the config; without one it is a file received on [`in_dev`] (`--in-dev`, else the
/// first device). A `=` with neither a device before it nor a file of that whole name
/// is an unknown device, named in the error with the devices there are.
pub fn input(t: &Tables, flag: &str, arg: &Path, default_dev: Option<&str>) -> Result<(DevId, PathBuf)> {
    if let Some(s) = arg.to_str() {
        for (i, _) in s.match_indices('=') {
            if let Some(d) = t.device_id(&s[..i]) {
                return Ok((d, PathBuf::from(&s[i + 1..])));
            }
        }
        if let Some((dev, _)) = s.split_once('=') {
            if !arg.exists() {
                return Err(anyhow!(
                    "{flag} {s}: no device {dev} in the config (devices: {}), nor a file of that name",
                    device_names(t)
                ));
            }
        }
    }
    Ok((in_dev(t, default_dev)?, arg.to_path_buf()))
}
