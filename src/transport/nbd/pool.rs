//! The connections of a run to each NBD export, opened before each point.
//!
//! Some servers serve a fixed number of clients: `qemu-nbd` started the
//! ordinary way serves one and exits when it leaves, `--shared=N` serves N. A
//! probe connection that is closed before the run starts would use such a
//! server up. So the probe is the first connection the run itself uses: every
//! connection a point needs is opened here before the point starts (a server
//! that will not take that many is a clear error before any load), engines take
//! them, and give back the ones they leave idle, which the next point reuses.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{Connection, CONNECT_TIMEOUT};

/// Why the connections a point needs could not all be opened.
#[derive(Debug)]
pub enum FillError {
    /// Not even one: the server is not there, or refuses lunmark.
    NoConnection(String),
    /// Some but not all: the server limits its clients (the message says how to start it).
    TooFewClients(String),
}

/// Idle connections to one export.
pub struct ConnectionPool {
    pub uri: String,
    idle: Mutex<Vec<Connection>>,
    /// Connections the server accepted in this run so far.
    accepted: AtomicUsize,
}

impl ConnectionPool {
    pub fn new(uri: &str) -> Arc<ConnectionPool> {
        Arc::new(ConnectionPool { uri: uri.to_string(), idle: Mutex::new(Vec::new()), accepted: AtomicUsize::new(0) })
    }

    fn open(&self) -> Result<Connection, String> {
        let c = Connection::open(&self.uri, CONNECT_TIMEOUT)?;
        self.accepted.fetch_add(1, Ordering::Relaxed);
        Ok(c)
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens connections until `wanted` are idle. `why` says what needs them
    /// ("2 workers x 1 connection"), for the message when the server refuses one
    /// after accepting others: then it limits its clients, and the message says
    /// how to start it so that it serves the run.
    pub fn fill(&self, wanted: usize, why: &str) -> Result<(), FillError> {
        let mut idle = self.idle();
        idle.retain(|c| c.idle());
        while idle.len() < wanted {
            match self.open() {
                Ok(c) => idle.push(c),
                Err(e) if !idle.is_empty() => {
                    return Err(FillError::TooFewClients(too_few_clients(&self.uri, idle.len(), wanted, why, &e)))
                }
                // Accepted at an earlier point, gone now: a one-client server
                // exits once its connection closes (one was not handed back).
                Err(e) if self.accepted.load(Ordering::Relaxed) > 0 => return Err(FillError::TooFewClients(gone_after_use(&self.uri, &e))),
                Err(e) => return Err(FillError::NoConnection(e)),
            }
        }
        Ok(())
    }

    /// An idle connection, or a new one when none is left.
    pub fn take(&self) -> Result<Connection, String> {
        let spare = self.idle().pop();
        match spare {
            Some(c) => Ok(c),
            None => self.open(),
        }
    }

    /// A connection with nothing in flight, for the next engine.
    pub fn give_back(&self, c: Connection) {
        self.idle().push(c);
    }

    /// Whether the server accepts trims and flushes, asked on an idle connection.
    pub fn can_trim_and_flush(&self) -> Result<(bool, bool), String> {
        let c = self.take()?;
        let can = c.can_trim_and_flush();
        self.give_back(c);
        Ok(can)
    }

    /// The export's size, asked on an idle connection (opening one if needed, and keeping it).
    pub fn size(&self) -> Result<u64, String> {
        let c = self.take()?;
        let size = c.size();
        self.give_back(c);
        size
    }
}

/// The message for a server that took `accepted` connections but not the next.
fn too_few_clients(uri: &str, accepted: usize, wanted: usize, why: &str, error: &str) -> String {
    let error = error.strip_prefix(uri).map(|e| e.trim_start_matches(':').trim()).unwrap_or(error);
    format!(
        "{uri}: the server accepted {accepted} connection{} but not connection {} ({error}); this run needs {wanted} at once ({why}). \
         The server serves fewer clients than that: start qemu-nbd with --persistent --shared={wanted} (or -t -e {wanted}), \
         or run with fewer --workers or --connections",
        if accepted == 1 { "" } else { "s" },
        accepted + 1
    )
}

/// The message for a server that served this run before and now refuses it.
fn gone_after_use(uri: &str, error: &str) -> String {
    let error = error.strip_prefix(uri).map(|e| e.trim_start_matches(':').trim()).unwrap_or(error);
    format!(
        "{uri}: the server served this run's earlier points but now refuses a connection ({error}). \
         A server that serves one client exits when that client's connection closes: start qemu-nbd with --persistent (or -t)"
    )
}

/// The pools of a run, one per export URI; dropping it closes every idle connection.
#[derive(Default)]
pub struct Pools {
    by_uri: HashMap<String, Arc<ConnectionPool>>,
}

impl Pools {
    pub fn get(&mut self, uri: &str) -> Arc<ConnectionPool> {
        self.by_uri.entry(uri.to_string()).or_insert_with(|| ConnectionPool::new(uri)).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_after_others_says_how_to_start_the_server() {
        let m =
            too_few_clients("nbd+unix:///?socket=/s", 1, 2, "2 workers x 1 connection each", "nbd+unix:///?socket=/s: cannot connect: x");
        assert!(m.starts_with("nbd+unix:///?socket=/s: the server accepted 1 connection but not connection 2 (cannot connect: x)"), "{m}");
        assert!(
            m.contains("needs 2 at once (2 workers x 1 connection each)") && m.contains("--persistent --shared=2") && m.contains("-t -e 2"),
            "{m}"
        );
    }
}
