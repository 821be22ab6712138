//! `--metrics-listen ADDR:PORT`: a Prometheus text-format endpoint while the
//! run goes (docs/telemetry.md). The run's observer keeps a snapshot of the
//! figures (each measured second added as the result stores it); a small
//! HTTP/1.1 server on a thread of its own renders it for `GET /metrics`. A
//! scraper that stalls holds only that thread (each connection has a time
//! limit), never the run. The listener is bound before anything runs and
//! closed when the run ends.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::metrics::histogram::LatencyHistogram;
use crate::results::model::RunResult;
use crate::run::live::LiveFigures;
use crate::run::{RunObserver, RunPlan};

/// The latency buckets' upper bounds, in seconds: fixed, so that series from
/// any run (and any host) aggregate.
pub const BUCKETS_S: &[f64] =
    &[0.00001, 0.00002, 0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0];

/// How long one connection may take to send its request or take the answer.
const CONNECTION_LIMIT: Duration = Duration::from_secs(2);

/// The address `--metrics-listen` names: a bare port or `:PORT` is the
/// loopback address; another address only when written out.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let refuse = |why: &str| {
        format!("--metrics-listen {text}: {why}; give PORT or :PORT (127.0.0.1), or ADDR:PORT (0.0.0.0:9464, [::1]:9464, localhost:9464)")
    };
    let port = |p: &str| p.parse::<u16>().map_err(|_| refuse(&format!("the port '{p}' is not a whole number from 0 to 65535")));
    if text.chars().all(|c| c.is_ascii_digit()) && !text.is_empty() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port(text)?)));
    }
    let Some((host, p)) = text.rsplit_once(':') else { return Err(refuse("no port")) };
    let port = port(p)?;
    if host.is_empty() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    match (host, port).to_socket_addrs().map(|mut a| a.next()) {
        Ok(Some(a)) => Ok(a),
        _ => Err(refuse(&format!("the address '{host}' is not an IP address or a host name that resolves"))),
    }
}

/// Binds the address, or says why not (in use, not this host's), naming the flag.
pub fn bind(text: &str) -> Result<TcpListener, String> {
    let addr = parse_listen(text)?;
    TcpListener::bind(addr).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::AddrInUse => "the address is in use (another program listens there); name a free port".to_string(),
            std::io::ErrorKind::AddrNotAvailable => "no interface of this host has that address".to_string(),
            _ => format!("cannot listen there: {e}"),
        };
        format!("--metrics-listen {text} ({addr}): {why}")
    })
}

/// A target's index among the point's targets and its URI: the index tells
/// apart a URI given twice.
type TargetKey = (usize, String);

/// What the endpoint shows, as of the last second the run told.
#[derive(Default)]
struct Snapshot {
    state: &'static str,
    point: usize,
    points: usize,
    /// ((target index, URI), operation) -> (I/Os, bytes).
    counters: std::collections::BTreeMap<(TargetKey, &'static str), (u64, u64)>,
    latency: Option<LatencyHistogram>,
    latency_sum_s: f64,
    in_flight: u64,
    /// Under MPI: each rank's I/Os of the seconds told (rank -> I/Os).
    by_rank: std::collections::BTreeMap<u32, u64>,
}

/// The endpoint: serves while it lives, stops (the port closed) when dropped.
pub struct MetricsEndpoint {
    snapshot: Arc<Mutex<Snapshot>>,
    stop: Arc<AtomicBool>,
    server: Option<JoinHandle<()>>,
    pub addr: SocketAddr,
}

impl MetricsEndpoint {
    pub fn serve(listener: TcpListener) -> std::io::Result<MetricsEndpoint> {
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let snapshot = Arc::new(Mutex::new(Snapshot { state: "starting", ..Default::default() }));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (snapshot.clone(), stop.clone());
        let server = std::thread::Builder::new().name("lunmark-metrics".into()).spawn(move || accept_loop(listener, &s, &st))?;
        Ok(MetricsEndpoint { snapshot, stop, server: Some(server), addr })
    }

    fn with(&self, f: impl FnOnce(&mut Snapshot)) {
        f(&mut self.snapshot.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.server.take() {
            let _ = t.join();
        }
    }
}

impl RunObserver for MetricsEndpoint {
    fn started(&mut self, plan: &RunPlan) {
        self.with(|s| s.points = plan.points.len());
    }
    fn tick(&mut self, f: &LiveFigures<'_>) {
        self.with(|s| {
            s.state = if f.phase == "ramp" { "ramp" } else { "run" };
            (s.point, s.points) = (f.point, f.points);
            let Some(m) = f.measured else { return };
            // Each target's own counts, however the workers share the targets.
            // A target's index is its place (a URI given twice is two targets).
            m.per_target.iter().enumerate().for_each(|(t, (uri, _, slice))| count(s, (t, uri), slice));
            // Under MPI each rank's share (its rows hold rates: I/Os are rate x length, whole numbers).
            for (rank, i) in &m.ranks {
                *s.by_rank.entry(*rank).or_default() += (i.iops * i.duration_s).round() as u64;
            }
            let latency = m.slice.latency();
            s.latency.get_or_insert_with(|| LatencyHistogram::with_digits(2)).add(&latency);
            s.latency_sum_s += latency.mean_ns() * latency.count() as f64 / 1e9;
            s.in_flight = m.in_flight;
        });
    }
    fn finished(&mut self, _result: &RunResult) {
        self.with(|s| {
            s.state = "finished";
            s.in_flight = 0;
        });
    }
}

/// Adds a second's counts to the target's counters.
fn count(s: &mut Snapshot, target: (usize, &str), sl: &crate::metrics::IntervalSlice) {
    for (op, ios, bytes) in [("read", sl.ios_read, sl.bytes_read), ("write", sl.ios_written, sl.bytes_written), ("trim", sl.ios_trimmed, 0)]
    {
        let c = s.counters.entry(((target.0, target.1.to_string()), op)).or_default();
        (c.0, c.1) = (c.0 + ios, c.1 + bytes);
    }
}

/// Accepts connections until told to stop, one at a time.
fn accept_loop(listener: TcpListener, snapshot: &Mutex<Snapshot>, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((conn, _)) => {
                let _ = answer(conn, snapshot);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Reads one request and answers it: GET /metrics, else 404 (another path) or 405 (another method).
fn answer(mut conn: TcpStream, snapshot: &Mutex<Snapshot>) -> std::io::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(CONNECTION_LIMIT))?;
    conn.set_write_timeout(Some(CONNECTION_LIMIT))?;
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
        let n = conn.read(&mut buf)?;
        if n == 0 {
            break;
        }
        request.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&request);
    let mut words = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, body, extra) = match (method, path) {
        ("GET", "/metrics") => {
            // Rendered under the lock, written after it: a slow scraper holds no lock.
            let text = render(&snapshot.lock().unwrap_or_else(|p| p.into_inner()), cpu_seconds());
            ("200 OK", text, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n")
        }
        (_, "/metrics") => ("405 Method Not Allowed", "only GET /metrics is served\n".to_string(), "Allow: GET\r\n"),
        _ => ("404 Not Found", "lunmark serves only GET /metrics\n".to_string(), ""),
    };
    let head = format!("HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    conn.write_all(head.as_bytes())?;
    conn.write_all(body.as_bytes())
}

/// lunmark's own CPU time so far (user, system), in seconds.
fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we pass; no other memory is touched.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(u.ru_utime), s(u.ru_stime))
}

/// A label value in the text format: backslash, quote and newline escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// A metric family's HELP and TYPE lines.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
}

/// The Prometheus text exposition of a snapshot (pure).
fn render(s: &Snapshot, cpu: (f64, f64)) -> String {
    let mut out = String::new();
    family(&mut out, "lunmark_ios_total", "counter", "I/Os completed in the measured seconds (ramp excluded), by operation and target.");
    for (((index, target), op), (ios, _)) in &s.counters {
        out.push_str(&format!("lunmark_ios_total{{op=\"{op}\",target=\"{}\",target_index=\"{index}\"}} {ios}\n", label(target)));
    }
    family(&mut out, "lunmark_bytes_total", "counter", "Bytes transferred in the measured seconds, by operation and target.");
    for (((index, target), op), (_, bytes)) in s.counters.iter().filter(|((_, op), _)| *op != "trim") {
        out.push_str(&format!("lunmark_bytes_total{{op=\"{op}\",target=\"{}\",target_index=\"{index}\"}} {bytes}\n", label(target)));
    }
    if !s.by_rank.is_empty() {
        family(&mut out, "lunmark_rank_ios_total", "counter", "Under MPI: I/Os each rank completed in the measured seconds told.");
        for (rank, ios) in &s.by_rank {
            out.push_str(&format!("lunmark_rank_ios_total{{rank=\"{rank}\"}} {ios}\n"));
        }
    }
    out.push_str(&latency_family(s));
    family(&mut out, "lunmark_in_flight_ios", "gauge", "I/Os in flight over all workers at their last reports.");
    out.push_str(&format!("lunmark_in_flight_ios {}\n", s.in_flight));
    family(&mut out, "lunmark_cpu_seconds_total", "counter", "CPU time the lunmark process has used, by mode.");
    out.push_str(&format!(
        "lunmark_cpu_seconds_total{{mode=\"user\"}} {}\nlunmark_cpu_seconds_total{{mode=\"system\"}} {}\n",
        cpu.0, cpu.1
    ));
    family(&mut out, "lunmark_run_state", "gauge", "The run's state: 1 for the current one, 0 for the others.");
    for state in ["starting", "ramp", "run", "finished"] {
        out.push_str(&format!("lunmark_run_state{{state=\"{state}\"}} {}\n", u8::from(s.state == state)));
    }
    family(&mut out, "lunmark_point", "gauge", "The point running, counted from 1 (0 before the first).");
    out.push_str(&format!("lunmark_point {}\n", s.point));
    family(&mut out, "lunmark_points", "gauge", "The points of the run.");
    out.push_str(&format!("lunmark_points {}\n", s.points));
    out
}

/// The latency histogram: every measured I/O so far, in the fixed buckets.
fn latency_family(s: &Snapshot) -> String {
    let mut out = String::from(
        "# HELP lunmark_latency_seconds Latency of the I/Os of the measured seconds (all operations).\n# TYPE lunmark_latency_seconds histogram\n",
    );
    let bounds: Vec<u64> = BUCKETS_S.iter().map(|b| (b * 1e9).round() as u64).collect();
    let counts = s.latency.as_ref().map(|h| h.counts_below(&bounds)).unwrap_or_else(|| vec![0; bounds.len() + 1]);
    let mut cumulative = 0u64;
    for (b, c) in BUCKETS_S.iter().zip(&counts) {
        cumulative += c;
        out.push_str(&format!("lunmark_latency_seconds_bucket{{le=\"{b}\"}} {cumulative}\n"));
    }
    let total: u64 = counts.iter().sum();
    out.push_str(&format!("lunmark_latency_seconds_bucket{{le=\"+Inf\"}} {total}\n"));
    out.push_str(&format!("lunmark_latency_seconds_sum {}\nlunmark_latency_seconds_count {total}\n", s.latency_sum_s));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bare port and :PORT bind the loopback address; another address only
    /// when written; a bad port and a name that does not resolve are refused naming the flag and the value.
    #[test]
    fn the_listen_address_is_loopback_unless_named() {
        assert_eq!(parse_listen("9464").unwrap(), "127.0.0.1:9464".parse().unwrap());
        assert_eq!(parse_listen(":9464").unwrap(), "127.0.0.1:9464".parse().unwrap());
        assert_eq!(parse_listen("0.0.0.0:80").unwrap(), "0.0.0.0:80".parse().unwrap());
        assert_eq!(parse_listen("[::1]:80").unwrap(), "[::1]:80".parse().unwrap());
        let e = parse_listen(":99999").unwrap_err();
        assert!(e.starts_with("--metrics-listen :99999: the port '99999'"), "{e}");
        assert!(parse_listen("127.0.0.1:x").unwrap_err().contains("the port 'x'"));
        assert!(parse_listen("no-such-host.invalid:80").unwrap_err().contains("'no-such-host.invalid'"));
    }

    /// The histogram is cumulative over the fixed buckets and its +Inf bucket
    /// equals the count; a target's quote is escaped in its label.
    #[test]
    fn the_text_has_cumulative_buckets_and_escaped_labels() {
        let mut h = LatencyHistogram::with_digits(2);
        [15_000u64, 15_000, 300_000, 7_000_000_000].iter().for_each(|&ns| h.record(ns));
        let mut s = Snapshot { state: "run", point: 1, points: 1, latency: Some(h), ..Default::default() };
        s.counters.insert(((0, "/tmp/a\"b".into()), "read"), (4, 16384));
        let text = render(&s, (1.5, 0.25));
        assert!(text.contains("lunmark_latency_seconds_bucket{le=\"0.00001\"} 0\n"), "{text}");
        assert!(text.contains("lunmark_latency_seconds_bucket{le=\"0.00002\"} 2\n"), "{text}");
        assert!(text.contains("lunmark_latency_seconds_bucket{le=\"0.0005\"} 3\n"), "{text}");
        assert!(text.contains("lunmark_latency_seconds_bucket{le=\"5\"} 3\n"), "{text}");
        assert!(text.contains("lunmark_latency_seconds_bucket{le=\"+Inf\"} 4\n"), "{text}");
        assert!(text.contains("lunmark_ios_total{op=\"read\",target=\"/tmp/a\\\"b\",target_index=\"0\"} 4\n"), "{text}");
        assert!(text.contains("lunmark_run_state{state=\"run\"} 1\n"), "{text}");
    }
}
