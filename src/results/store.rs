//! The embedded result store: SQLite (bundled), one file, no server.
//!
//! A run is saved after every point, each save one transaction, in WAL mode: a
//! process killed at any moment (even SIGKILL) leaves the database readable with
//! every finished point in it. The run row holds the result without its points
//! (as JSON, plus a few columns to list and search by); each point is a row of
//! its own. The schema version is SQLite's `user_version`; `MIGRATIONS[i]` takes
//! a database from version i to i + 1, so older stores move forward on open.
//!
//! Migrations run in one `BEGIN IMMEDIATE` transaction that re-reads the
//! version inside it, under a busy timeout: runs that create one store at the
//! same moment wait for each other instead of creating its tables twice.
//! Commands that only read (list, show, export, compare, report) open the store
//! read-only, so a store on read-only media or in a read-only file still serves them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};

use super::model::{Point, RunResult};

const MIGRATIONS: &[&str] = &[
    // 0 -> 1
    "CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        status TEXT NOT NULL,
        label TEXT,
        profile TEXT,
        targets TEXT NOT NULL,
        engine TEXT NOT NULL,
        result TEXT NOT NULL
    );
    CREATE TABLE points (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        point TEXT NOT NULL,
        PRIMARY KEY (run_id, idx)
    );
    CREATE INDEX runs_started ON runs(started_at);",
];

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Where results go: `--store`, else `LUNMARK_STORE`, else
/// `$XDG_DATA_HOME/lunmark/results.db` (default `~/.local/share/lunmark/results.db`).
pub fn default_path(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    if let Some(p) = std::env::var_os("LUNMARK_STORE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| ".".into())).join(".local/share"));
    data.join("lunmark").join("results.db")
}

/// Runs `f` again while SQLite says the store is busy, up to the busy timeout.
/// Needed where SQLite does not wait itself: switching a new store to WAL while
/// another process holds a lock it wants to upgrade returns "locked" at once
/// (SQLite's deadlock avoidance), so the wait happens here.
fn when_not_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// The store file and its directory take writes: SQLite creates its -wal and
/// -shm files beside the store, so a writable file in a read-only directory is
/// as unusable as a read-only file. Checked with the operating system's own
/// words ("Read-only file system", "Operation not permitted").
fn check_files_writable(path: &Path) -> Result<()> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .context("the file cannot be opened for writing")?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let probe = path.with_file_name(format!(".{name}.write-test-{}", std::process::id()));
    std::fs::File::create(&probe).with_context(|| {
        format!("its directory does not take new files ({}), and SQLite keeps the store's -wal and -shm files there", probe.display())
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// `file:PATH?immutable=1`, the path percent-encoded where URI syntax needs it.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match *b {
            b'?' | b'#' | b'%' => uri.push_str(&format!("%{b:02X}")),
            b if b.is_ascii() => uri.push(b as char),
            b => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri + "?immutable=1"
}

fn newer_schema(path: &Path, version: usize) -> String {
    format!(
        "{}: the store has schema version {version}, newer than this lunmark knows ({}): use a newer lunmark",
        path.display(),
        MIGRATIONS.len()
    )
}

/// What a database file is, judged by its tables before anything is written.
enum Kind {
    /// No tables yet: an empty file or a new store.
    New,
    /// It has lunmark's tables (`runs` and `points` with their columns).
    Lunmark,
    /// It has tables, not lunmark's: another program's database (its tables named).
    Foreign(Vec<String>),
}

/// The columns of version 1 that every later version keeps.
const RUNS_COLUMNS: &[&str] = &["id", "started_at", "status", "label", "profile", "targets", "engine", "result"];
const POINTS_COLUMNS: &[&str] = &["run_id", "idx", "point"];

fn kind(conn: &Connection) -> rusqlite::Result<Kind> {
    let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")?;
    let tables: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    if tables.is_empty() {
        return Ok(Kind::New);
    }
    let columns = |table: &str| -> rusqlite::Result<Vec<String>> {
        let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
        let names = stmt.query_map([table], |r| r.get(0))?.collect();
        names
    };
    let has = |table: &str, wanted: &[&str]| -> rusqlite::Result<bool> {
        let found = columns(table)?;
        Ok(wanted.iter().all(|w| found.iter().any(|f| f == w)))
    };
    if has("runs", RUNS_COLUMNS)? && has("points", POINTS_COLUMNS)? {
        Ok(Kind::Lunmark)
    } else {
        Ok(Kind::Foreign(tables))
    }
}

/// SQLite's quick check of the whole file (every page's structure, not the
/// indexes' contents): Err with the first problems it names.
fn integrity(conn: &Connection) -> Result<(), String> {
    let found: rusqlite::Result<Vec<String>> =
        conn.prepare("PRAGMA quick_check(4)").and_then(|mut stmt| stmt.query_map([], |r| r.get(0))?.collect());
    match found {
        Ok(lines) if lines == ["ok"] => Ok(()),
        // Its first line names the schema ("*** in database main ***"); the problems follow.
        Ok(lines) => Err(lines.iter().flat_map(|l| l.lines()).filter(|l| !l.starts_with("***")).collect::<Vec<_>>().join("; ")),
        Err(e) => Err(e.to_string()),
    }
}

fn foreign(path: &Path, tables: &[String]) -> String {
    let mut named = tables.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if tables.len() > 5 {
        named += &format!(" and {} more", tables.len() - 5);
    }
    format!(
        "{} is not a lunmark result store: it is a SQLite database of another program (its tables: {named}), \
         and lunmark leaves it as it is. Give --store the path of a lunmark store or of a new file",
        path.display()
    )
}

fn not_sqlite(path: &Path, e: rusqlite::Error) -> anyhow::Error {
    anyhow::anyhow!("{} is not a lunmark result store: SQLite cannot read it ({e})", path.display())
}

/// `why` says what was found: SQLite's check, or a row not as lunmark wrote it.
fn damaged(path: &Path, why: &str) -> String {
    format!(
        "the result store {} is damaged ({why}): its figures cannot be trusted, so none is shown \
         and nothing is added to it. Restore it from a backup, or save what is readable with `sqlite3 {} .recover`, \
         and give --store another path meanwhile",
        path.display(),
        path.display()
    )
}

/// One line of `results list`.
#[derive(Clone, Debug)]
pub struct Listing {
    pub id: String,
    pub started_at: String,
    pub status: String,
    pub label: Option<String>,
    pub profile: Option<String>,
    pub targets: String,
    pub points: usize,
    /// The headline point: the one with the highest IOPS (1-based; 0 when the
    /// run has no point). Its sweep values are `headline_params` ("qd=8 bs=4k").
    pub headline_point: usize,
    pub headline_params: String,
    /// IOPS, MB/s and p99 latency (us), all three of the headline point.
    pub iops: f64,
    pub mbps: f64,
    pub p99_us: f64,
}

/// How long a store locked by another lunmark (a run saving a point, another
/// run creating the store) is waited for before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

impl Store {
    /// Opens the store for reading and writing, creating it (and its directory)
    /// when missing and moving its schema forward. What the file is comes
    /// first: another program's database, a damaged store or a file that is
    /// not SQLite is refused before anything in it changes (no tables added,
    /// its journal mode and `user_version` as they were).
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating the store directory {}", dir.display()))?;
        }
        let conn = Connection::open(path).with_context(|| format!("opening the result store {}", path.display()))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        match kind(&conn).map_err(|e| not_sqlite(path, e))? {
            Kind::Foreign(tables) => bail!(foreign(path, &tables)),
            Kind::New => {}
            Kind::Lunmark => {
                if let Err(found) = integrity(&conn) {
                    bail!(damaged(path, &format!("SQLite's check finds: {found}")));
                }
            }
        }
        when_not_busy(|| conn.pragma_update(None, "journal_mode", "WAL"))
            .with_context(|| format!("{}: setting WAL mode", path.display()))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let mut store = Store { conn, path: path.to_path_buf() };
        store.migrate()?;
        Ok(store)
    }

    /// Opens the store for a run and proves it can be written (one committed
    /// write of the header's schema version, which changes nothing): a store
    /// that cannot keep a result is found before anything is measured, not after.
    pub fn open_writable(path: &Path) -> Result<Store> {
        if let Some(file) = path.parent().and_then(|d| d.ancestors().find(|a| a.is_file())) {
            bail!("{} is a file, so it cannot hold the store's directory", file.display());
        }
        let opened = (|| {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| format!("creating the store directory {}", dir.display()))?;
            }
            check_files_writable(path)?;
            let mut store = Store::open(path)?;
            if store.conn.is_readonly(rusqlite::DatabaseName::Main)? {
                bail!("the file can only be read (the file or its filesystem is read-only)");
            }
            store.write_test().context("a test write failed")?;
            Ok(store)
        })();
        opened
    }

    fn write_test(&mut self) -> Result<()> {
        // Immediate: the write lock is taken (waiting for other writers) before
        // reading, so no other run's commit in between can make it fail.
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
        Ok(())
    }

    /// Opens the store only to read it: nothing is created or written, so a
    /// store on read-only media, or a read-only file, can be listed and shown.
    /// A store that does not exist yet reads as empty.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        let empty = || -> Result<Store> {
            let mut store = Store { conn: Connection::open_in_memory()?, path: path.to_path_buf() };
            store.migrate()?;
            Ok(store)
        };
        if !path.exists() {
            return empty();
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let read_version = |conn: &Connection| conn.pragma_query_value(None, "user_version", |r| r.get::<_, usize>(0));
        let conn =
            Connection::open_with_flags(path, flags).with_context(|| format!("opening the result store {} to read it", path.display()))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let (conn, version) = match read_version(&conn) {
            Ok(v) => (conn, v),
            // A WAL store needs its -shm file, which a read-only filesystem
            // cannot create: nothing can write such a store either, so it is
            // read as immutable (no locks, no -shm).
            Err(e) if std::fs::OpenOptions::new().write(true).open(path).is_err() => {
                let conn = Connection::open_with_flags(immutable_uri(path), flags)
                    .with_context(|| format!("opening the result store {} to read it", path.display()))?;
                let v = read_version(&conn)
                    .map_err(|_| e)
                    .with_context(|| format!("{} is not a lunmark result store (SQLite) or cannot be read", path.display()))?;
                (conn, v)
            }
            Err(e) => {
                return Err(e).with_context(|| format!("{} is not a lunmark result store (SQLite) or cannot be read", path.display()))
            }
        };
        match kind(&conn).map_err(|e| not_sqlite(path, e))? {
            Kind::Foreign(tables) => bail!(foreign(path, &tables)),
            Kind::New => return empty(),
            Kind::Lunmark => {}
        }
        match version {
            0 => empty(),
            v if v > MIGRATIONS.len() => bail!(newer_schema(path, v)),
            v if v < MIGRATIONS.len() => bail!(
                "{}: the store has schema version {v} and this lunmark reads version {}: open it once where it can be written (any `lunmark run --store {}`) to move it forward",
                path.display(),
                MIGRATIONS.len(),
                path.display()
            ),
            _ => Ok(Store { conn, path: path.to_path_buf() }),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the schema forward inside one immediate transaction: the version is
    /// read again once the write lock is held, so of several processes creating
    /// the store at once, one creates the tables and the others find them.
    fn migrate(&mut self) -> Result<()> {
        let version: usize = self.conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version == MIGRATIONS.len() {
            return Ok(());
        }
        if version > MIGRATIONS.len() {
            bail!(newer_schema(&self.path, version));
        }
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: usize = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version > MIGRATIONS.len() {
            bail!(newer_schema(&self.path, version));
        }
        for (v, sql) in MIGRATIONS.iter().enumerate().skip(version) {
            tx.execute_batch(sql).with_context(|| format!("migrating the store to version {}", v + 1))?;
        }
        tx.pragma_update(None, "user_version", MIGRATIONS.len())?;
        tx.commit()?;
        Ok(())
    }

    /// Saves a run as it stands (insert or update), with all its points, in one transaction.
    pub fn save(&mut self, result: &RunResult) -> Result<()> {
        self.save_as(result, false).map(|_| ())
    }

    /// Saves a run again that was saved before: false, and nothing written,
    /// when its row is gone (`results delete` during the run), so that a
    /// deleted result does not come back with the next point.
    pub fn save_again(&mut self, result: &RunResult) -> Result<bool> {
        self.save_as(result, true)
    }

    fn save_as(&mut self, result: &RunResult, only_if_stored: bool) -> Result<bool> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if only_if_stored && tx.query_row("SELECT 1 FROM runs WHERE id = ?1", [&result.id], |_| Ok(())).optional()?.is_none() {
            return Ok(false);
        }
        let mut head = result.clone();
        head.points.clear();
        let targets = result.targets.iter().map(|t| t.uri.clone()).collect::<Vec<_>>().join(", ");
        let targets = if targets.is_empty() { result.workload.targets.join(", ") } else { targets };
        tx.execute(
            "INSERT INTO runs (id, started_at, status, label, profile, targets, engine, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(id) DO UPDATE SET status = excluded.status, label = excluded.label, targets = excluded.targets, result = excluded.result",
            params![
                result.id,
                result.started_at,
                serde_json::to_value(result.status)?.as_str().unwrap_or("unknown"),
                result.label,
                result.profile,
                targets,
                result.engine,
                serde_json::to_string(&head)?
            ],
        )?;
        for (i, p) in result.points.iter().enumerate() {
            tx.execute(
                "INSERT OR REPLACE INTO points (run_id, idx, point) VALUES (?1, ?2, ?3)",
                params![result.id, i as i64, serde_json::to_string(p)?],
            )?;
        }
        tx.commit()?;
        Ok(true)
    }

    /// Marks how a run ended when its whole result could not be saved (a
    /// full disk): the smallest write there is, the status column alone,
    /// which `load` and `list` read over the JSON's.
    pub fn mark_ended(&mut self, id: &str, status: super::model::Status) -> Result<()> {
        let status = serde_json::to_value(status)?;
        self.conn.execute("UPDATE runs SET status = ?2 WHERE id = ?1", params![id, status.as_str().unwrap_or("failed")])?;
        Ok(())
    }

    /// What the store holds of a run: its status and how many points, None
    /// when it holds nothing of it.
    pub fn kept(&self, id: &str) -> Result<Option<(String, usize)>> {
        let row = self
            .conn
            .query_row("SELECT status, (SELECT count(*) FROM points WHERE run_id = ?1) FROM runs WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get::<_, i64>(1)? as usize))
            })
            .optional();
        row.map_err(|e| self.read_failed(&format!("result {id}"), e))
    }

    /// The full id for a unique prefix (like git's short hashes).
    pub fn resolve(&self, prefix: &str) -> Result<String> {
        if prefix.is_empty() || !prefix.chars().all(|c| c.is_ascii_alphanumeric()) {
            bail!("'{prefix}' is not a result id: ids are hex digits, see `lunmark results list`");
        }
        let rows: Vec<(String, String, Option<String>)> = self
            .conn
            .prepare("SELECT id, started_at, label FROM runs WHERE id LIKE ?1 || '%' ORDER BY started_at")
            .and_then(|mut stmt| stmt.query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
            .map_err(|e| self.read_failed("the ids of results", e))?;
        match rows.len() {
            0 => bail!("no result with id '{prefix}' in {}: `lunmark results list` shows the ids", self.path.display()),
            1 => Ok(rows[0].0.clone()),
            _ => bail!(
                "'{prefix}' matches {} results: {}; give more digits",
                rows.len(),
                rows.iter()
                    .map(|(id, at, label)| format!("{id} ({at}{})", label.as_deref().map(|l| format!(", {l}")).unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// A read that failed. The store is checked then: a damaged one is said to
    /// be damaged, by its path, instead of passing SQLite's words on alone. A
    /// row whose text is not valid (bytes changed inside it, which the check
    /// does not see) is damage too: lunmark only ever writes valid text.
    fn read_failed(&self, what: &str, e: rusqlite::Error) -> anyhow::Error {
        match integrity(&self.conn) {
            Err(found) => anyhow::anyhow!(damaged(&self.path, &format!("SQLite's check finds: {found}"))),
            Ok(()) if matches!(e, rusqlite::Error::FromSqlConversionFailure(..) | rusqlite::Error::Utf8Error(_)) => {
                anyhow::anyhow!(damaged(&self.path, &format!("{what} is not text as lunmark wrote it: {e}")))
            }
            Ok(()) => anyhow::anyhow!("the result store {} cannot be read ({what}): {e}", self.path.display()),
        }
    }

    /// A stored row parsed: one that is not the JSON lunmark wrote is damage.
    fn parse<T: serde::de::DeserializeOwned>(&self, what: &str, text: &str) -> Result<T> {
        serde_json::from_str(text).map_err(|e| anyhow::anyhow!(damaged(&self.path, &format!("{what} is not the JSON lunmark wrote: {e}"))))
    }

    /// A result's points as stored (text), in order.
    fn point_rows(&self, id: &str) -> Result<Vec<String>> {
        let what = format!("a point of result {id}");
        let rows = self
            .conn
            .prepare_cached("SELECT point FROM points WHERE run_id = ?1 ORDER BY idx")
            .and_then(|mut stmt| stmt.query_map([id], |r| r.get(0))?.collect::<rusqlite::Result<Vec<String>>>());
        rows.map_err(|e| self.read_failed(&what, e))
    }

    pub fn load(&self, prefix: &str) -> Result<RunResult> {
        let id = self.resolve(prefix)?;
        let (head, status): (String, String) = self
            .conn
            .query_row("SELECT result, status FROM runs WHERE id = ?1", [&id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.read_failed(&format!("result {id}"), e))?;
        let mut result: RunResult = self.parse(&format!("result {id}"), &head)?;
        // The column is the last word: a run that could not save its whole
        // result at the end (a full disk) still marks how it ended there.
        if let Ok(Some(s)) = serde_json::from_value(serde_json::Value::String(status)) {
            result.status = s;
        }
        let rows = self.point_rows(&id)?;
        result.points =
            rows.iter().enumerate().map(|(i, p)| self.parse(&format!("point {} of result {id}", i + 1), p)).collect::<Result<_>>()?;
        Ok(result)
    }

    /// Removes a result: its id and the status it had (`running` while a run
    /// may still be saving it, which then saves nothing more: `save_again`).
    pub fn delete(&mut self, prefix: &str) -> Result<(String, String)> {
        let id = self.resolve(prefix)?;
        let status = self.kept(&id)?.map(|(s, _)| s).unwrap_or_default();
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM points WHERE run_id = ?1", [&id])?;
        tx.execute("DELETE FROM runs WHERE id = ?1", [&id])?;
        tx.commit()?;
        Ok((id, status))
    }

    /// Every run, oldest first. A row that cannot be read fails the listing
    /// (naming the store and the damage): a run is never shown with figures
    /// made up for what could not be read.
    pub fn list(&self) -> Result<Vec<Listing>> {
        let heads = self.conn.prepare("SELECT id, started_at, status, label, profile, targets FROM runs ORDER BY started_at, id").and_then(
            |mut stmt| {
                stmt.query_map([], |r| {
                    Ok(Listing {
                        id: r.get(0)?,
                        started_at: r.get(1)?,
                        status: r.get(2)?,
                        label: r.get(3)?,
                        profile: r.get(4)?,
                        targets: r.get(5)?,
                        points: 0,
                        headline_point: 0,
                        headline_params: String::new(),
                        iops: 0.0,
                        mbps: 0.0,
                        p99_us: 0.0,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            },
        );
        let mut out = heads.map_err(|e| self.read_failed("the list of results", e))?;
        for l in &mut out {
            let rows = self.point_rows(&l.id)?;
            let points: Vec<Point> = rows
                .iter()
                .enumerate()
                .map(|(i, p)| self.parse(&format!("point {} of result {}", i + 1, l.id), p))
                .collect::<Result<_>>()?;
            // One point gives all three headline figures, so they describe the same run of I/O.
            let best = points.iter().enumerate().max_by(|a, b| a.1.summary.iops.total_cmp(&b.1.summary.iops));
            l.points = points.len();
            if let Some((i, p)) = best {
                l.headline_point = i + 1;
                l.headline_params =
                    p.params.iter().map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"'))).collect::<Vec<_>>().join(" ");
                l.iops = p.summary.iops;
                l.mbps = p.summary.mbps;
                l.p99_us = p.summary.latency_us.all.p99;
            }
        }
        Ok(out)
    }

    /// Whether a run with this exact id is stored.
    pub fn contains(&self, id: &str) -> Result<bool> {
        let found = self.conn.query_row("SELECT 1 FROM runs WHERE id = ?1", [id], |_| Ok(())).optional();
        Ok(found.map_err(|e| self.read_failed(&format!("result {id}"), e))?.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_store_reads_as_empty_and_is_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none").join("results.db");
        let store = Store::open_read_only(&path).unwrap();
        assert!(store.list().unwrap().is_empty());
        assert!(store.resolve("abc").unwrap_err().to_string().contains("no result with id 'abc'"));
        assert!(!path.exists() && !path.parent().unwrap().exists());
    }

    #[test]
    fn a_store_under_a_file_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        let e = Store::open_writable(&file.join("sub").join("results.db")).err().unwrap();
        assert_eq!(e.to_string(), format!("{} is a file, so it cannot hold the store's directory", file.display()));
    }

    #[test]
    fn a_newer_store_is_refused_and_an_open_store_is_not_migrated_twice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        drop(Store::open_writable(&path).unwrap());
        drop(Store::open_writable(&path).unwrap());
        Connection::open(&path).unwrap().pragma_update(None, "user_version", 99).unwrap();
        for e in [Store::open(&path).err().unwrap(), Store::open_read_only(&path).err().unwrap()] {
            assert!(e.to_string().contains("schema version 99, newer than this lunmark knows"), "{e}");
        }
    }
}
