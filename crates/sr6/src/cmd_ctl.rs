//! `sr6 ctl`: sends one command to a running `sr6 run` over its control socket and
//! prints the answer. Exit status 1 if the daemon refused the command.

use std::path::Path;

use anyhow::{anyhow, Result};

use crate::live::ctl;

pub fn run(socket: &Path, args: &[String]) -> Result<()> {
    if let [bpf, events, rest @ ..] = args {
        if bpf == "bpf" && events == "events" {
            return crate::bpf_events::stream(socket, rest).map_err(|e| anyhow!(e));
        }
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let args = match args {
        [batch, file] if batch == "batch" => vec![batch.clone(), batch_text(file, &cwd)?],
        _ => absolute_objects(args, &cwd),
    };
    let r = ctl::request(socket, &args).map_err(|e| anyhow!(e))?;
    if r.ok {
        if !r.output.is_empty() {
            println!("{}", r.output.trim_end());
        }
        Ok(())
    } else {
        Err(anyhow!("{}", r.output.trim_end()))
    }
}

/// The lines of `sr6 ctl batch FILE` (`-`: standard input), each with its objects made
/// absolute as a single command's are.
fn batch_text(file: &str, cwd: &Path) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    if file == "-" {
        std::io::stdin().read_to_string(&mut text).map_err(|e| anyhow!("standard input: {e}"))?;
    } else {
        text = std::fs::read_to_string(file).map_err(|e| anyhow!("{file}: {e}"))?;
    }
    Ok(text
        .lines()
        .map(|l| {
            let words: Vec<String> = l.split_whitespace().map(String::from).collect();
            absolute_objects(&words, cwd).join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// The command with End.BPF's object (`endpoint obj FILE`, the mode word as iproute2
/// reads it) and the LWT hooks' (`encap bpf in|out|xmit obj FILE`) made absolute against the client's working directory `cwd`, so that a
/// relative `FILE` means what it means in the shell that typed it, not in the router's
/// directory.
fn absolute_objects(args: &[String], cwd: &Path) -> Vec<String> {
    let mut out = args.to_vec();
    for i in 0..out.len().saturating_sub(2) {
        let mode = out[i + 1].as_str();
        let object = mode == "obj" || (!mode.is_empty() && "object-file".starts_with(mode));
        let kw = matches!(out[i].as_str(), "endpoint" | "in" | "out" | "xmit");
        if kw && object && Path::new(&out[i + 2]).is_relative() {
            out[i + 2] = cwd.join(&out[i + 2]).display().to_string();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_objects_become_absolute() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let cwd = Path::new("/home/op");
        let line = "route add fc00::1/128 encap seg6local action End.BPF endpoint obj p.o sec s dev eth0";
        assert_eq!(absolute_objects(&words(line), cwd), words(&line.replace(" p.o", " /home/op/p.o")));
        let abs = "route add fc00::1/128 encap seg6local action End.BPF endpoint o /x/p.o dev eth0";
        assert_eq!(absolute_objects(&words(abs), cwd), words(abs));
        let lwt = "route add fc00:9::/64 encap bpf in obj a.o sec s xmit obj b.o dev eth0";
        let want = lwt.replace(" a.o", " /home/op/a.o").replace(" b.o", " /home/op/b.o");
        assert_eq!(absolute_objects(&words(lwt), cwd), words(&want));
        let other = "route add fc00::1/128 encap seg6local action End.BPF endpoint pinned p dev eth0";
        assert_eq!(absolute_objects(&words(other), cwd), words(other));
    }
}
