//! fio job files, the syntax: fio's INI dialect read with fio's own rules, and
//! fio's units. A file is a list of sections; `[global]` sections set defaults
//! for the job sections after them (a later `[global]` changes the defaults of
//! the jobs that follow it, as in fio); a line is `key=value` or a bare `key`
//! (a switch); a `;` or `#` ends the line (fio cuts there wherever it stands);
//! `${VAR}` is replaced by the environment variable VAR, then fio's `$ncpus`,
//! `$pagesize` and `$mb_memory`, with bc's arithmetic when one of them is there;
//! `include FILE` reads another file's options in place. What the options mean
//! to lunmark is `fio_map`'s job; this module only reads them.

use std::time::Duration;

use thiserror::Error;

/// One `key[=value]` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub key: String,
    /// None for a bare switch (`direct`, `time_based`, `stonewall`).
    pub value: Option<String>,
    /// 1-based line in the job file.
    pub line: usize,
    /// The included file the line is in (as `include` named it); None: the job file itself.
    pub file: Option<String>,
}

impl Setting {
    /// "line N" or "FILE, line N" for a line of an included file.
    pub fn place(&self) -> String {
        match &self.file {
            Some(f) => format!("{f}, line {}", self.line),
            None => format!("line {}", self.line),
        }
    }
}

/// A job section with every setting that applies to it: the `[global]`
/// settings in force where it starts, then its own, in file order (a later
/// setting of the same key wins, as in fio).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSection {
    /// The section name (`[name]`).
    pub name: String,
    pub line: usize,
    pub settings: Vec<Setting>,
}

impl JobSection {
    /// The setting in force for `key` (the last one given).
    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.settings.iter().rev().find(|s| s.key == key)
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error("{origin}, line {line}: {message}")]
pub struct SyntaxError {
    pub origin: String,
    pub line: usize,
    pub message: String,
}

/// fio's built-in variables (`$ncpus`, `$pagesize`, `$mb_memory`), as fio
/// reads them from the host: online CPUs, the page size, physical memory in MiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostVars {
    pub ncpus: u64,
    pub pagesize: u64,
    pub mb_memory: u64,
}

impl HostVars {
    /// This host's, read as fio reads them (sysconf).
    pub fn of_this_host() -> HostVars {
        // SAFETY: sysconf only reads system configuration values; it has no preconditions.
        let conf = |name| unsafe { libc::sysconf(name) }.max(0) as u64;
        let pagesize = conf(libc::_SC_PAGESIZE).max(1);
        HostVars {
            ncpus: conf(libc::_SC_NPROCESSORS_ONLN).max(1),
            pagesize,
            mb_memory: conf(libc::_SC_PHYS_PAGES).saturating_mul(pagesize) / (1 << 20),
        }
    }
}

/// An included file's text, and the name its lines are reported under.
pub struct Included {
    /// The file as the user should see it (the path from the including file).
    pub shown: String,
    /// The file's identity, for finding cycles (its canonical path).
    pub identity: String,
    pub text: String,
}

/// Deepest chain of `include`s followed (fio has no limit and loops until it
/// runs out of file descriptors on a cycle; lunmark refuses cycles apart).
pub const MAX_INCLUDE_DEPTH: usize = 8;

/// What reading a job file needs from outside: the environment for `${VAR}`,
/// the host's values for `$ncpus` and the like, and the reading of an
/// `include FILE` line (`include(name, including)`: `name` as written, the
/// identity of the file that includes it).
pub struct Context<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub host: HostVars,
    pub include: &'a dyn Fn(&str, &str) -> Result<Included, String>,
}

/// Where parsed lines go: before any section, into `[global]`, or into the last job.
struct Sink {
    globals: Vec<Setting>,
    jobs: Vec<JobSection>,
    in_global: Option<bool>,
}

/// Reads a job file (its `include`d files too) with fio's rules.
pub fn parse(text: &str, origin: &str, ctx: &Context) -> Result<Vec<JobSection>, SyntaxError> {
    parse_as(text, origin, origin, ctx)
}

/// `parse` of a file whose identity (for finding include cycles, and for
/// resolving its includes) is `identity`, shown to the user as `origin`.
pub fn parse_as(text: &str, origin: &str, identity: &str, ctx: &Context) -> Result<Vec<JobSection>, SyntaxError> {
    let mut sink = Sink { globals: Vec::new(), jobs: Vec::new(), in_global: None };
    let mut chain = vec![identity.to_string()];
    parse_into(text, origin, None, ctx, &mut chain, &mut sink)?;
    Ok(sink.jobs)
}

/// One file's lines into `sink`. `file` is None for the job file itself, else the
/// included file's shown name (it may hold options only: fio refuses sections there).
fn parse_into(
    text: &str,
    origin: &str,
    file: Option<&str>,
    ctx: &Context,
    chain: &mut Vec<String>,
    sink: &mut Sink,
) -> Result<(), SyntaxError> {
    let err = |line: usize, message: String| SyntaxError { origin: file.unwrap_or(origin).to_string(), line, message };
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = strip_comment(raw);
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix('[') {
            if file.is_some() {
                return Err(err(line, format!("'{t}': an included file may hold options only, not sections (fio refuses them too)")));
            }
            let Some(name) = rest.strip_suffix(']') else {
                return Err(err(line, format!("'{t}' opens a section but does not close it: write [name]")));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(err(line, "a section needs a name: [global] or [jobname]".into()));
            }
            if name == "global" {
                sink.in_global = Some(true);
            } else {
                sink.in_global = Some(false);
                sink.jobs.push(JobSection { name: name.to_string(), line, settings: sink.globals.clone() });
            }
            continue;
        }
        if let Some(name) = t.strip_prefix("include").filter(|r| r.starts_with([' ', '\t'])).map(str::trim) {
            if sink.in_global.is_none() {
                return Err(err(line, format!("'{t}' comes before any section: include it under [global] or a [job] section")));
            }
            include(name, line, origin, file, ctx, chain, sink)?;
            continue;
        }
        let (key, value) = match t.split_once('=') {
            Some((k, v)) => (k.trim(), Some(value_of(v.trim(), ctx).map_err(|m| err(line, m))?)),
            None => (t, None),
        };
        if key.is_empty() {
            return Err(err(line, format!("'{t}' has no option name before '='")));
        }
        let setting = Setting { key: key.to_string(), value, line, file: file.map(str::to_string) };
        match sink.in_global {
            None => return Err(err(line, format!("'{t}' comes before any section: put options under [global] or a [job] section"))),
            Some(true) => sink.globals.push(setting),
            Some(false) => sink.jobs.last_mut().expect("a job section is open").settings.push(setting),
        }
    }
    Ok(())
}

/// `include NAME`: the other file's options go where the line is, as in fio.
fn include(
    name: &str,
    line: usize,
    origin: &str,
    file: Option<&str>,
    ctx: &Context,
    chain: &mut Vec<String>,
    sink: &mut Sink,
) -> Result<(), SyntaxError> {
    let err = |message: String| SyntaxError { origin: file.unwrap_or(origin).to_string(), line, message };
    if name.is_empty() {
        return Err(err("include needs a file name: include other.fio".into()));
    }
    let including = chain.last().expect("the job file is first").clone();
    let inc = (ctx.include)(name, &including).map_err(|m| err(format!("include {name}: {m}")))?;
    if chain.contains(&inc.identity) {
        return Err(err(format!("include {name}: {} includes itself (through {}): fio would loop here", inc.shown, chain.join(" -> "))));
    }
    if chain.len() > MAX_INCLUDE_DEPTH {
        return Err(err(format!("include {name}: more than {MAX_INCLUDE_DEPTH} nested includes: put the options in fewer files")));
    }
    chain.push(inc.identity.clone());
    parse_into(&inc.text, origin, Some(&inc.shown), ctx, chain, sink)?;
    chain.pop();
    Ok(())
}

/// The line without fio's comments: fio cuts it at the first `;` or `#`
/// (wherever it stands, even inside a value: `filename=/a#b` is `/a` in fio
/// 3.33 too), then drops the blanks around what is left.
fn strip_comment(raw: &str) -> &str {
    let end = raw.find([';', '#']).unwrap_or(raw.len());
    raw[..end].trim()
}

/// A value as fio reads it: `${VAR}` from the environment, then fio's
/// built-in variables; when one of those was there and the value holds
/// arithmetic, fio hands it to bc (whole numbers, no units), and so does this.
fn value_of(raw: &str, ctx: &Context) -> Result<String, String> {
    let v = substitute(raw, ctx.env)?;
    let mut out = v.clone();
    let mut replaced = false;
    for (word, n) in [("$pagesize", ctx.host.pagesize), ("$mb_memory", ctx.host.mb_memory), ("$ncpus", ctx.host.ncpus)] {
        if out.contains(word) {
            out = out.replace(word, &n.to_string());
            replaced = true;
        }
    }
    if !replaced || !out.contains(['+', '-', '*', '/']) {
        return Ok(out);
    }
    let n = arith::eval(&out).map_err(|m| {
        format!("'{raw}' is '{out}' with fio's variables; fio hands that to bc, which {m}: write plain numbers (bc knows no k, m or g)")
    })?;
    Ok(n.to_string())
}

/// Replaces every `${VAR}` with the environment variable VAR.
fn substitute(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("'{value}' opens ${{ without a closing }}"));
        };
        let name = &after[..end];
        match env(name) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(format!("'{value}' uses ${{{name}}}, which is not set in the environment: export {name}=... before running"))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// bc's whole-number arithmetic (bc without -l: scale 0, division truncates):
/// `+ - * / %`, parentheses and unary minus.
mod arith {
    pub fn eval(text: &str) -> Result<i128, String> {
        let tokens: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut p = Parser { t: &tokens, at: 0 };
        let v = p.sum()?;
        if p.at != tokens.len() {
            return Err(format!("cannot read '{}'", tokens[p.at..].iter().collect::<String>()));
        }
        Ok(v)
    }

    struct Parser<'a> {
        t: &'a [char],
        at: usize,
    }

    impl Parser<'_> {
        fn peek(&self) -> Option<char> {
            self.t.get(self.at).copied()
        }

        fn sum(&mut self) -> Result<i128, String> {
            let mut v = self.product()?;
            while let Some(op @ ('+' | '-')) = self.peek() {
                self.at += 1;
                let r = self.product()?;
                v = if op == '+' { v.checked_add(r) } else { v.checked_sub(r) }.ok_or("overflows")?;
            }
            Ok(v)
        }

        fn product(&mut self) -> Result<i128, String> {
            let mut v = self.unary()?;
            while let Some(op @ ('*' | '/' | '%')) = self.peek() {
                self.at += 1;
                let r = self.unary()?;
                v = match op {
                    '*' => v.checked_mul(r).ok_or("overflows")?,
                    _ if r == 0 => return Err("divides by zero".into()),
                    '/' => v / r,
                    _ => v % r,
                };
            }
            Ok(v)
        }

        fn unary(&mut self) -> Result<i128, String> {
            match self.peek() {
                Some('-') => {
                    self.at += 1;
                    Ok(-self.unary()?)
                }
                Some('(') => {
                    self.at += 1;
                    let v = self.sum()?;
                    if self.peek() != Some(')') {
                        return Err("misses a closing parenthesis".into());
                    }
                    self.at += 1;
                    Ok(v)
                }
                Some(c) if c.is_ascii_digit() => {
                    let start = self.at;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.at += 1;
                    }
                    let digits: String = self.t[start..self.at].iter().collect();
                    digits.parse().map_err(|_| "overflows".to_string())
                }
                Some(c) => Err(format!("cannot read '{c}'")),
                None => Err("misses a number at the end".into()),
            }
        }
    }
}

/// Splits a `filename` list on `:` the way fio does: `\:` is a colon inside a
/// name (`iscsi\://host/...`), the other colons separate names.
pub fn split_filenames(value: &str) -> Vec<String> {
    let mut names = vec![String::new()];
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                names.last_mut().expect("never empty").push(':');
            }
            ':' => names.push(String::new()),
            c => names.last_mut().expect("never empty").push(c),
        }
    }
    names.into_iter().filter(|n| !n.is_empty()).collect()
}

/// A size in fio's units. With `kb_base=1024` (fio's default) k, kb, m, mb, g,
/// gb, t, tb and p are powers of 1024 and kib, mib, gib, tib are powers of
/// 1000 (fio keeps old job files working this way round); with `kb_base=1000`
/// it is the other way round. Case does not matter; a bare number is bytes.
pub fn parse_size(text: &str, kb_base: u64) -> Result<u64, String> {
    let bad = || {
        format!(
            "'{text}' is not a size: use a number with an optional k, m, g or t suffix (fio's units: 4k = 4096 bytes with kb_base=1024)"
        )
    };
    let t = text.trim();
    if t.ends_with('%') {
        return Err(format!("'{text}' is a share of the file: lunmark needs a size in bytes here (for example 1g)"));
    }
    if t.starts_with('(') {
        return Err(format!(
            "'{text}': arithmetic in parentheses needs a fio built with its expression parser (Debian's fio 3.33 refuses it too): write the size, or use $pagesize, $ncpus or $mb_memory, which fio evaluates with bc"
        ));
    }
    if let Some(at) = t.find(['+', '*', '/']).filter(|at| *at > 0) {
        return Err(format!(
            "'{text}': fio evaluates arithmetic only in a value with $pagesize, $ncpus or $mb_memory; here it reads '{}' and drops '{}' without a word: write the size you mean",
            &t[..at],
            &t[at..]
        ));
    }
    let (num, suffix) = if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let v = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
        return Ok(v);
    } else {
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        t.split_at(split)
    };
    if num.is_empty() {
        return Err(bad());
    }
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, base) = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => (0, kb_base),
        "k" | "kb" => (1, kb_base),
        "m" | "mb" => (2, kb_base),
        "g" | "gb" => (3, kb_base),
        "t" | "tb" => (4, kb_base),
        "p" | "pb" => (5, kb_base),
        "kib" => (1, other),
        "mib" => (2, other),
        "gib" => (3, other),
        "tib" => (4, other),
        "pib" => (5, other),
        _ => return Err(bad()),
    };
    let mult = base.checked_pow(pow).ok_or_else(bad)?;
    if let Ok(whole) = num.parse::<u64>() {
        return whole.checked_mul(mult).ok_or_else(bad);
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    let bytes = v * mult as f64;
    if !bytes.is_finite() || bytes.fract() != 0.0 || bytes > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// A share of the file (`size=50%`, `offset=10%`), in percent (0 < p <= 100);
/// None when the value is not one.
pub fn parse_percent(text: &str) -> Option<Result<f64, String>> {
    // fio reads `100%%` as `100%` (a template's escaped percent sign, left as written).
    let t = text.trim();
    let num = t.strip_suffix("%%").or_else(|| t.strip_suffix('%'))?;
    Some(match num.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("'{text}' is not a share of the file: use a percentage from 0 to 100 (for example 50%)")),
    })
}

/// A time in fio's units: us/usec, ms/msec, s/sec, m/min, h/hr, d/day; a bare
/// number is in `default_unit` (seconds for runtime, ramp_time, startdelay).
pub fn parse_time(text: &str, default_unit: Duration) -> Result<Duration, String> {
    let bad = || format!("'{text}' is not a time: use a number with an optional us, ms, s, m, h or d suffix (a bare number is seconds)");
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| bad())?;
    let unit = match suffix.trim().to_ascii_lowercase().as_str() {
        "" => default_unit.as_secs_f64(),
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" | "hr" => 3600.0,
        "d" | "day" => 86400.0,
        _ => return Err(bad()),
    };
    let secs = v * unit;
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A switch: a bare key is on; otherwise 1/0 (fio also takes true/false, yes/no, on/off).
pub fn parse_bool(value: Option<&str>) -> Result<bool, String> {
    match value.map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(true),
        Some(v) => match v.as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(format!("'{v}' is not a switch value: use 1 or 0")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    const HOST: HostVars = HostVars { ncpus: 4, pagesize: 4096, mb_memory: 16000 };

    fn no_include(_: &str, _: &str) -> Result<Included, String> {
        Err("no includes here".into())
    }

    fn parse(text: &str, origin: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<JobSection>, SyntaxError> {
        super::parse(text, origin, &Context { env, host: HOST, include: &no_include })
    }

    #[test]
    fn global_sections_apply_to_the_jobs_after_them() {
        let text = "; a comment\n[global]\nbs=4k\n  # another\n[a]\nrw=read\n[global]\nbs=8k\n[b]\nbs=16k\ndirect\n";
        let jobs = parse(text, "t.fio", &no_env).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].name, "a");
        assert_eq!(jobs[0].get("bs").unwrap().value.as_deref(), Some("4k"));
        assert_eq!(jobs[0].get("rw").unwrap().line, 6);
        // The second [global] changes the default; the job's own value wins over it.
        assert_eq!(jobs[1].settings.iter().filter(|s| s.key == "bs").count(), 3);
        assert_eq!(jobs[1].get("bs").unwrap().value.as_deref(), Some("16k"));
        assert_eq!(jobs[1].get("direct").unwrap().value, None);
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e = parse("bs=4k\n[a]\n", "t.fio", &no_env).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("before any section"), "{e}");
        let e = parse("[a]\ninclude other.fio\n", "t.fio", &no_env).unwrap_err();
        assert!(e.line == 2 && e.message.contains("include other.fio: no includes here"), "{e}");
        let e = parse("[a]\nrw=read\n[b\n", "t.fio", &no_env).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().contains("t.fio, line 3"), "{e}");
    }

    #[test]
    fn environment_variables_are_substituted() {
        let env = |k: &str| (k == "DEV").then(|| "/dev/shm/x".to_string());
        let jobs = parse("[a]\nfilename=${DEV}\nsize=${DEV}-${DEV}\n", "t.fio", &env).unwrap();
        assert_eq!(jobs[0].get("filename").unwrap().value.as_deref(), Some("/dev/shm/x"));
        assert_eq!(jobs[0].get("size").unwrap().value.as_deref(), Some("/dev/shm/x-/dev/shm/x"));
        let e = parse("[a]\n\nfilename=${NOPE}\n", "t.fio", &env).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("${NOPE}") && e.message.contains("not set"), "{e}");
    }

    /// Checked against fio 3.33 (`fio --showcmd`): it cuts a line at the first
    /// `;` or `#`, wherever it stands.
    #[test]
    fn comments_end_a_line_wherever_they_start() {
        let text = "[a] ; the job\nruntime=3   # seconds\nnumjobs=2 ; two\nfilename=/tmp/a#b\nrw=read;x\ndescription=hello ; world\n";
        let jobs = parse(text, "t.fio", &no_env).unwrap();
        let v = |k: &str| jobs[0].get(k).unwrap().value.clone().unwrap();
        assert_eq!(jobs[0].name, "a");
        assert_eq!(
            (v("runtime"), v("numjobs"), v("filename"), v("rw"), v("description")),
            ("3".into(), "2".into(), "/tmp/a".into(), "read".into(), "hello".into())
        );
    }

    /// fio replaces $ncpus, $pagesize and $mb_memory and hands arithmetic to bc
    /// (whole numbers, division truncating); `fio --showcmd` prints the results.
    #[test]
    fn fio_variables_and_their_arithmetic() {
        let text = "[a]\nsize=$mb_memory/64\nbs=$pagesize*2\niodepth=$ncpus*4\nnumjobs=$ncpus/3\nrate_iops=($ncpus+1)*10\nthinktime=$pagesize\nfilename=/x/y-z\n";
        let jobs = parse(text, "t.fio", &no_env).unwrap();
        let v = |k: &str| jobs[0].get(k).unwrap().value.clone().unwrap();
        assert_eq!(v("size"), "250");
        assert_eq!(v("bs"), "8192");
        assert_eq!(v("iodepth"), "16");
        assert_eq!(v("numjobs"), "1");
        assert_eq!(v("rate_iops"), "50");
        assert_eq!(v("thinktime"), "4096");
        assert_eq!(v("filename"), "/x/y-z", "no variable: no arithmetic");
        let e = parse("[a]\nbs=1k+$pagesize\n", "t.fio", &no_env).unwrap_err();
        assert!(e.line == 2 && e.message.contains("bc") && e.message.contains("'1k+4096'"), "{e}");
        let e = parse("[a]\nbs=$pagesize/0\n", "t.fio", &no_env).unwrap_err();
        assert!(e.message.contains("divides by zero"), "{e}");
    }

    /// `include FILE` puts the file's options where the line is; it may hold no
    /// sections (fio: "No new sections in included files"); cycles and depth are bounded.
    #[test]
    fn includes_are_read_where_they_stand_and_bounded() {
        let files = |name: &str, _from: &str| -> Result<Included, String> {
            let text = match name {
                "opts.inc" => "bs=8k ; eight\ninclude more.inc\n",
                "more.inc" => "iodepth=4\n",
                "sections.inc" => "[b]\nsize=1m\n",
                "self.inc" => "bs=4k\ninclude self.inc\n",
                "bad.inc" => "bs=4k\nbs=${NOPE}\n",
                n if n.starts_with("deep") => {
                    let d: usize = n[4..].parse().unwrap();
                    return Ok(Included { shown: n.into(), identity: n.into(), text: format!("include deep{}\n", d + 1) });
                }
                _ => return Err("no such file".into()),
            };
            Ok(Included { shown: format!("sub/{name}"), identity: name.into(), text: text.into() })
        };
        let ctx = |t: &str| super::parse(t, "t.fio", &Context { env: &no_env, host: HOST, include: &files });
        let jobs = ctx("[global]\ninclude opts.inc\n[a]\nrw=read\n").unwrap();
        assert_eq!(jobs[0].get("bs").unwrap().value.as_deref(), Some("8k"));
        let d = jobs[0].get("iodepth").unwrap();
        assert_eq!((d.line, d.file.as_deref(), d.place()), (1, Some("sub/more.inc"), "sub/more.inc, line 1".to_string()));
        let e = ctx("[a]\ninclude sections.inc\n").unwrap_err();
        assert!(e.origin == "sub/sections.inc" && e.line == 1 && e.message.contains("options only"), "{e}");
        let e = ctx("[a]\ninclude self.inc\n").unwrap_err();
        assert!(e.message.contains("includes itself") && e.message.contains("t.fio -> self.inc"), "{e}");
        let e = ctx("[a]\ninclude deep0\n").unwrap_err();
        assert!(e.message.contains("more than 8 nested includes"), "{e}");
        let e = ctx("[a]\ninclude missing.inc\n").unwrap_err();
        assert!(e.origin == "t.fio" && e.line == 2 && e.message.contains("include missing.inc: no such file"), "{e}");
        let e = ctx("[a]\ninclude bad.inc\n").unwrap_err();
        assert!(e.to_string().starts_with("sub/bad.inc, line 2:") && e.message.contains("${NOPE}"), "{e}");
        let e = ctx("include opts.inc\n[a]\n").unwrap_err();
        assert!(e.message.contains("before any section"), "{e}");
    }

    #[test]
    fn filenames_split_on_colons_but_not_escaped_ones() {
        assert_eq!(split_filenames("/a:/b"), vec!["/a", "/b"]);
        assert_eq!(
            split_filenames("iscsi\\://127.0.0.1/iqn.2016-02.com.fio\\:system\\:fio/1"),
            vec!["iscsi://127.0.0.1/iqn.2016-02.com.fio:system:fio/1"]
        );
        assert_eq!(split_filenames("/a::/b:"), vec!["/a", "/b"]);
    }

    #[test]
    fn sizes_follow_fio_and_kb_base() {
        // Checked against fio 3.33: with the default kb_base, 4k = 4096 but 4kib = 4000.
        assert_eq!(parse_size("4k", 1024), Ok(4096));
        assert_eq!(parse_size("4K", 1024), Ok(4096));
        assert_eq!(parse_size("4KB", 1024), Ok(4096));
        assert_eq!(parse_size("4kib", 1024), Ok(4000));
        assert_eq!(parse_size("1m", 1024), Ok(1 << 20));
        assert_eq!(parse_size("2g", 1024), Ok(2 << 30));
        assert_eq!(parse_size("4k", 1000), Ok(4000));
        assert_eq!(parse_size("4kib", 1000), Ok(4096));
        assert_eq!(parse_size("512", 1024), Ok(512));
        assert_eq!(parse_size("0x1000", 1024), Ok(4096));
        assert_eq!(parse_size("1.5k", 1024), Ok(1536));
        assert!(parse_size("50%", 1024).unwrap_err().contains("share of the file"));
        assert_eq!(parse_percent("50%"), Some(Ok(50.0)));
        assert!(parse_percent("150%").unwrap().is_err());
        assert_eq!(parse_percent("1g"), None);
        // fio 3.33 reads 4k*2 as 4k and drops the rest; (4k*2) it refuses.
        assert!(parse_size("4k*2", 1024).unwrap_err().contains("reads '4k' and drops '*2'"));
        assert!(parse_size("(4k*2)", 1024).unwrap_err().contains("parentheses"));
        assert!(parse_size("4q", 1024).is_err());
        assert!(parse_size("k", 1024).is_err());
    }

    #[test]
    fn times_default_to_seconds() {
        let s = Duration::from_secs(1);
        assert_eq!(parse_time("30", s), Ok(Duration::from_secs(30)));
        assert_eq!(parse_time("500ms", s), Ok(Duration::from_millis(500)));
        assert_eq!(parse_time("250us", s), Ok(Duration::from_micros(250)));
        assert_eq!(parse_time("2m", s), Ok(Duration::from_secs(120)));
        assert_eq!(parse_time("1h", s), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_time("1d", s), Ok(Duration::from_secs(86400)));
        assert!(parse_time("soon", s).is_err());
        assert_eq!(parse_bool(None), Ok(true));
        assert_eq!(parse_bool(Some("0")), Ok(false));
        assert!(parse_bool(Some("maybe")).is_err());
    }
}
