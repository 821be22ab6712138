//! The embedded result store: SQLite (bundled), one file, no server.
//!
//! A run is saved after every point, each save one transaction, in WAL mode: a
//! process killed at any moment (even SIGKILL) leaves the database readable with
//! every finished point in it. The run row holds the result without its points
//! (as JSON, plus a few columns to list and search by); each point is a row of
//! its own. The schema version is SQLite's `user_version`; `MIGRATIONS[i]` takes
//! a database from version i to i + 1, so older stores move forward on open.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OptionalExtension};

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
    /// Highest IOPS and MB/s over the points, and the p99 (us) of the point with the highest IOPS.
    pub iops: f64,
    pub mbps: f64,
    pub p99_us: f64,
}

impl Store {
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating the store directory {}", dir.display()))?;
        }
        let conn = Connection::open(path).with_context(|| format!("opening the result store {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL").with_context(|| format!("{}: setting WAL mode", path.display()))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let mut store = Store { conn, path: path.to_path_buf() };
        store.migrate()?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn migrate(&mut self) -> Result<()> {
        let version: usize = self.conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version > MIGRATIONS.len() {
            bail!(
                "{}: the store has schema version {version}, newer than this lunmark knows ({}): use a newer lunmark",
                self.path.display(),
                MIGRATIONS.len()
            );
        }
        for (v, sql) in MIGRATIONS.iter().enumerate().skip(version) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql).with_context(|| format!("migrating the store to version {}", v + 1))?;
            tx.pragma_update(None, "user_version", v + 1)?;
            tx.commit()?;
        }
        Ok(())
    }

    /// Saves a run as it stands (insert or update), with all its points, in one transaction.
    pub fn save(&mut self, result: &RunResult) -> Result<()> {
        let tx = self.conn.transaction()?;
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
        Ok(())
    }

    /// The full id for a unique prefix (like git's short hashes).
    pub fn resolve(&self, prefix: &str) -> Result<String> {
        if prefix.is_empty() || !prefix.chars().all(|c| c.is_ascii_alphanumeric()) {
            bail!("'{prefix}' is not a result id: ids are hex digits, see `lunmark results list`");
        }
        let mut stmt = self.conn.prepare("SELECT id, started_at, label FROM runs WHERE id LIKE ?1 || '%' ORDER BY started_at")?;
        let rows: Vec<(String, String, Option<String>)> =
            stmt.query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<rusqlite::Result<_>>()?;
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

    pub fn load(&self, prefix: &str) -> Result<RunResult> {
        let id = self.resolve(prefix)?;
        let head: String = self.conn.query_row("SELECT result FROM runs WHERE id = ?1", [&id], |r| r.get(0))?;
        let mut result: RunResult = serde_json::from_str(&head).with_context(|| format!("result {id} in the store is not readable"))?;
        let mut stmt = self.conn.prepare("SELECT point FROM points WHERE run_id = ?1 ORDER BY idx")?;
        let points: Vec<String> = stmt.query_map([&id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        result.points = points.iter().map(|p| serde_json::from_str::<Point>(p)).collect::<Result<_, _>>()?;
        Ok(result)
    }

    pub fn delete(&mut self, prefix: &str) -> Result<String> {
        let id = self.resolve(prefix)?;
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM points WHERE run_id = ?1", [&id])?;
        tx.execute("DELETE FROM runs WHERE id = ?1", [&id])?;
        tx.commit()?;
        Ok(id)
    }

    /// Every run, oldest first.
    pub fn list(&self) -> Result<Vec<Listing>> {
        let mut stmt = self.conn.prepare("SELECT id, started_at, status, label, profile, targets FROM runs ORDER BY started_at, id")?;
        let mut out: Vec<Listing> = stmt
            .query_map([], |r| {
                Ok(Listing {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    status: r.get(2)?,
                    label: r.get(3)?,
                    profile: r.get(4)?,
                    targets: r.get(5)?,
                    points: 0,
                    iops: 0.0,
                    mbps: 0.0,
                    p99_us: 0.0,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut stmt = self.conn.prepare("SELECT point FROM points WHERE run_id = ?1 ORDER BY idx")?;
        for l in &mut out {
            let points: Vec<Point> = stmt
                .query_map([&l.id], |r| r.get::<_, String>(0))?
                .filter_map(|p| p.ok().and_then(|p| serde_json::from_str(&p).ok()))
                .collect();
            let best = points.iter().max_by(|a, b| a.summary.iops.total_cmp(&b.summary.iops));
            l.points = points.len();
            l.iops = best.map(|p| p.summary.iops).unwrap_or(0.0);
            l.mbps = points.iter().map(|p| p.summary.mbps).fold(0.0, f64::max);
            l.p99_us = best.map(|p| p.summary.latency_us.all.p99).unwrap_or(0.0);
        }
        Ok(out)
    }

    /// Whether a run with this exact id is stored.
    pub fn contains(&self, id: &str) -> Result<bool> {
        Ok(self.conn.query_row("SELECT 1 FROM runs WHERE id = ?1", [id], |_| Ok(())).optional()?.is_some())
    }
}
