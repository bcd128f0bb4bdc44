//! zebra's FPM stream (`sr6 run --fpm-listen [ADDR]:PORT`): the routes FRR's zebra
//! sends its `dplane_fpm_nl` module are forwarded by sr6, whether or not zebra also
//! installs them in the kernel.
//!
//! A thread listens (zebra connects: `fpm address ADDR port PORT` in its
//! configuration), frames what the connection delivers ([`FpmStream`]) into the same
//! route and nexthop events the kernel mirror reads, keeps what sr6 can take as the
//! lines that make it, by prefix, as the kernel mirror does, and hands them to
//! [`Control::fpm_routes`], which every build merges under the configuration's, before
//! the kernel's (docs/frr.md, "What wins").
//!
//! One connection at a time (zebra is the only client). When zebra connects, it sends
//! every route it has (its replay); sr6 keeps forwarding by the routes it had until the
//! replay has come (the stream falls quiet for [`QUIET`]), then swaps them for the
//! replayed set, so a zebra restart does not empty the FIB meanwhile. After the replay,
//! every read's events become one new generation of the tables: the routes of the
//! prefixes they touched merged and changed in place where they can be
//! ([`Control::change_outside_routes`], [`super::outside`]), every line merged again after
//! a change of nexthop objects. When the connection
//! ends, the routes stay, as zebra's stay in the kernel when it stops.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sr6_io::netlink::{self, FpmStream, KernelNexthop, KernelRoute, RouteEvent};

use super::control::Control;
use super::kernel_routes;
use super::outside::PrefixKey;
use super::state::lock;

/// How long the thread waits for a connection or bytes before looking at `stop`.
const TICK: Duration = Duration::from_millis(50);
/// A replay is over when the stream has been quiet this long.
const QUIET: Duration = Duration::from_millis(200);

/// What the stream has said so far: routes by key, nexthop objects by id; and the
/// prefixes whose routes changed since the last publication (`None`: something else
/// changed too, every line is made again).
struct Fib {
    routes: BTreeMap<kernel_routes::Key, KernelRoute>,
    nexthops: BTreeMap<u32, KernelNexthop>,
    touched: Option<BTreeSet<PrefixKey>>,
}

impl Default for Fib {
    fn default() -> Self {
        Fib { routes: BTreeMap::new(), nexthops: BTreeMap::new(), touched: Some(BTreeSet::new()) }
    }
}

impl Fib {
    fn apply(&mut self, ev: RouteEvent) {
        match ev {
            RouteEvent::New(r) => {
                if let Some(t) = self.touched.as_mut() {
                    t.insert(kernel_routes::prefix_of(&r));
                }
                self.routes.insert(kernel_routes::key(&r), r);
            }
            RouteEvent::Del(r) => {
                if let Some(t) = self.touched.as_mut() {
                    t.insert(kernel_routes::prefix_of(&r));
                }
                self.routes.remove(&kernel_routes::key(&r));
            }
            RouteEvent::NewNexthop(n) => {
                self.nexthops.insert(n.id, n);
                self.touched = None;
            }
            RouteEvent::DelNexthop(n) => {
                kernel_routes::forget_nexthop(&mut self.nexthops, &mut self.routes, n.id);
                self.touched = None;
            }
            // zebra's stream carries no link or address messages (zebra replaces the
            // routes itself).
            RouteEvent::LinkDown(_) | RouteEvent::NewAddr(_) | RouteEvent::DelAddr(_) => {}
            RouteEvent::Undecodable(e) => eprintln!("sr6: warning: an FPM message sr6 cannot read: {e}"),
            RouteEvent::Overrun => {}
        }
    }
}

/// `--fpm-listen`'s value: `ADDR:PORT` (`[ADDR]:PORT` for IPv6), or `:PORT` for the
/// loopback address zebra connects to by default (127.0.0.1).
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    let full = match s.strip_prefix(':') {
        Some(port) => format!("127.0.0.1:{port}"),
        None => s.to_string(),
    };
    full.parse().map_err(|_| {
        format!(
            "`{s}` is not ADDR:PORT (for example 127.0.0.1:{p}, [::1]:{p}, or :{p} for 127.0.0.1)",
            p = netlink::fpm::DEFAULT_PORT
        )
    })
}

/// Binds the listening socket (before the router starts, so that a bad address is an
/// error at start).
pub fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let l = TcpListener::bind(addr)?;
    l.set_nonblocking(true)?;
    Ok(l)
}

/// Serves zebra's connections on `listener` until `stop` (see the module docs).
pub fn run(control: Arc<Mutex<Control>>, listener: TcpListener, verbose: bool) {
    let shared = lock(&control).shared.clone();
    let mut refused = BTreeSet::new();
    while !shared.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((conn, peer)) => {
                eprintln!("sr6: FPM: zebra connected from {peer}");
                let end = serve(&control, conn, &mut refused, verbose);
                eprintln!("sr6: FPM: connection from {peer} ended ({end}); its routes are kept");
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(TICK),
            Err(e) => {
                eprintln!("sr6: warning: FPM: accepting a connection: {e}");
                std::thread::sleep(TICK);
            }
        }
    }
}

/// One connection, until it ends or sr6 stops: why it ended.
fn serve(control: &Mutex<Control>, mut conn: TcpStream, refused: &mut BTreeSet<String>, verbose: bool) -> String {
    let shared = lock(control).shared.clone();
    if let Err(e) = conn.set_nonblocking(false).and_then(|()| conn.set_read_timeout(Some(TICK))) {
        return format!("cannot set up the socket: {e}");
    }
    let mut stream = FpmStream::new();
    let mut fib = Fib::default();
    let mut buf = vec![0u8; 64 * 1024];
    // Until the replay is over, the routes from before stay published.
    let mut replaying = true;
    let mut last_data = Instant::now();
    let mut changed = false;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return "sr6 stops".into();
        }
        match conn.read(&mut buf) {
            Ok(0) => {
                if changed {
                    publish(control, &mut fib, replaying, refused, verbose);
                }
                return "closed by zebra".into();
            }
            Ok(n) => {
                let events = match stream.feed(&buf[..n]) {
                    Ok(ev) => ev,
                    Err(e) => return e,
                };
                last_data = Instant::now();
                changed |= !events.is_empty();
                for ev in events {
                    fib.apply(ev);
                }
                if !replaying && changed {
                    publish(control, &mut fib, false, refused, verbose);
                    changed = false;
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return e.to_string(),
        }
        if replaying && last_data.elapsed() >= QUIET {
            replaying = false;
            if verbose {
                eprintln!("sr6: FPM: zebra's replay is in: {} route(s), {} frame(s)", fib.routes.len(), stream.frames);
            }
            publish(control, &mut fib, true, refused, verbose);
            changed = false;
        }
    }
}

/// Hands the stream's routes to the control side, which publishes new tables if they
/// changed: the lines of the prefixes touched since the last time, made in place where
/// they can be ([`Control::change_outside_routes`]), or every line
/// ([`Control::replace_outside_routes`]) after other changes or with `whole`.
fn publish(control: &Mutex<Control>, fib: &mut Fib, whole: bool, refused: &mut BTreeSet<String>, verbose: bool) {
    let name = kernel_routes::names();
    let touched = fib.touched.replace(BTreeSet::new());
    let res = match touched.filter(|_| !whole) {
        Some(t) => {
            let updates: Vec<_> =
                t.iter().map(|&p| (p, kernel_routes::prefix_lines(&fib.routes, p, &name, refused))).collect();
            lock(control).change_outside_routes(|c| &mut c.fpm_routes, updates)
        }
        None => {
            let lines = kernel_routes::kernel_lines(&Default::default(), &fib.nexthops, &fib.routes, &name, refused);
            lock(control).replace_outside_routes(|c| &mut c.fpm_routes, lines)
        }
    };
    match res {
        Some(Ok(id)) if verbose => {
            eprintln!("sr6: FPM: {} line(s) from zebra (tables generation {id})", lock(control).fpm_routes.len())
        }
        Some(Err(e)) => eprintln!("sr6: warning: zebra's routes are not taken: {e}"),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(parse_listen(":2620").unwrap(), "127.0.0.1:2620".parse().unwrap());
        assert_eq!(parse_listen("[::1]:2621").unwrap(), "[::1]:2621".parse().unwrap());
        assert_eq!(parse_listen("0.0.0.0:2620").unwrap(), "0.0.0.0:2620".parse().unwrap());
        for bad in ["2620", "localhost:2620", ":", ":99999", "::1:2620"] {
            assert!(parse_listen(bad).unwrap_err().contains("is not ADDR:PORT"), "{bad}");
        }
    }

    /// A stream's routes become lines sr6 parses; a nexthop object's removal takes the
    /// routes through it.
    #[test]
    fn events_keep_the_stream_fib() {
        let r = |dst: &str, nh: Option<u32>| KernelRoute {
            dst: dst.parse().unwrap(),
            prefix_len: 48,
            table: 254,
            protocol: 11,
            kind: netlink::RouteKind::Unicast,
            metric: None,
            nexthops: Vec::new(),
            nh_id: nh,
            encap: None,
        };
        let mut fib = Fib::default();
        fib.apply(RouteEvent::New(r("fc00:1::", None)));
        fib.apply(RouteEvent::New(r("fc00:2::", Some(7))));
        assert_eq!(fib.routes.len(), 2);
        fib.apply(RouteEvent::Del(r("fc00:1::", None)));
        assert_eq!(fib.routes.len(), 1);
        let nh = KernelNexthop {
            id: 7,
            v6: Some(true),
            protocol: 11,
            kind: netlink::nexthop::NexthopKind::Blackhole,
            encap: None,
            fdb: false,
        };
        fib.apply(RouteEvent::DelNexthop(nh));
        assert!(fib.routes.is_empty(), "the routes through nexthop 7 went with it");
    }
}
