//! `sr6 ctl`: sends one command to a running `sr6 run` over its control socket and
//! prints the answer. Exit status 1 if the daemon refused the command.

use std::path::Path;

use anyhow::{anyhow, Result};

use crate::live::ctl;

pub fn run(socket: &Path, args: &[String]) -> Result<()> {
    let r = ctl::request(socket, args).map_err(|e| anyhow!(e))?;
    if r.ok {
        if !r.output.is_empty() {
            println!("{}", r.output.trim_end());
        }
        Ok(())
    } else {
        Err(anyhow!("{}", r.output.trim_end()))
    }
}
