//! Every flag of every subcommand, read from clap's own command tree, is
//! applied or refused (issue 13 item 1): given a value it would take in use,
//! it changes what the subcommand does (its output, its exit, the files it
//! writes) or the subcommand refuses it with a message. `run` and the labs are
//! walked through their dry run (`lab_flags::every_flag_changes_the_dry_run_or_is_refused`);
//! this walks the others by what they print and write, each invocation on
//! its own copy of a store holding two real results.

use std::path::Path;
use std::process::Output;

use crate::common::*;

/// Commands walked through their dry run in lab_flags.rs.
const DRY_RUN_WALKED: &[&str] = &["run", "lab protocols", "lab cache"];

/// Commands that are not walked, each with why. Keep it short.
const NOT_WALKED_COMMANDS: &[(&str, &str)] =
    &[("", "lunmark alone is the default run: run's flags are walked with `run`, --store with each subcommand"), ("help", "clap's own")];

/// Flags the walk does not judge, each with why. Keep it short.
const NOT_WALKED: &[(&str, &str, &str)] = &[
    ("*", "help", "clap's own"),
    ("*", "version", "clap's own"),
    (
        "cache-curve",
        "exact",
        "the default up to 20M block accesses, so it changes only a trace too long for a test (cache_curve's tests cover the choice)",
    ),
];

/// What every invocation of a command is given (positionals, required flags),
/// unless a sample gives its own. `{ID_A}`/`{ID_B}`: the store's two results;
/// `{dir}`: the fixtures; `{out}`: the invocation's own directory.
const BASES: &[(&str, &[&str])] = &[
    ("results", &[]),
    ("results list", &[]),
    ("results show", &["{ID_A}"]),
    ("results export", &["{ID_A}"]),
    ("results import", &["{dir}/b.json"]),
    ("results delete", &["{ID_A}"]),
    ("results percentiles", &["{ID_A}", "--from", "0", "--to", "1"]),
    ("compare", &["{ID_A}", "{ID_B}"]),
    ("report", &["{ID_A}", "-o", "{out}/r.html"]),
    ("verify", &["{dir}/lun", "--journal", "{dir}/journal"]),
    ("cache-curve", &["{dir}/trace.csv"]),
    ("lab", &["cache", "--dry-run", "--lun-size", "8m"]),
    ("profiles", &[]),
    ("profiles show", &["quick"]),
    ("profiles import-fio", &["{dir}/job.fio"]),
];

/// A flag with a value it would take in use; `base` replaces the command's
/// base when a flag needs other input to show (None: the command's).
struct Sample {
    command: &'static str,
    flag: &'static str,
    base: Option<&'static [&'static str]>,
    args: &'static [&'static str],
}

const fn s(command: &'static str, flag: &'static str, args: &'static [&'static str]) -> Sample {
    Sample { command, flag, base: None, args }
}

/// A sample for every flag of every command walked here (a new flag without
/// one fails the walk). `store` of a command that keeps no results is
/// refused; of one that does, an empty store changes what it finds.
const SAMPLES: &[Sample] = &[
    s("*", "store", &["--store", "{out}/other.db"]),
    s("results list", "format", &["--format", "json"]),
    s("results list", "label", &["--label", "m*"]),
    s("results list", "profile", &["--profile", "quick"]),
    s("results list", "target", &["--target", "null:*"]),
    s("results list", "since", &["--since", "2100-01-01"]),
    s("results list", "last", &["--last", "1"]),
    s("results show", "detail", &["--detail"]),
    s("results export", "format", &["--format", "csv"]),
    s("compare", "format", &["--format", "json"]),
    s("compare", "force", &["--force"]),
    s("report", "format", &["--format", "md"]),
    s("report", "title", &["--title", "A title"]),
    s("report", "note", &["--note", "A note"]),
    s("report", "charts", &["--charts", "{out}"]),
    Sample {
        command: "report",
        flag: "charts-format",
        base: Some(&["{ID_A}", "-o", "{out}/r.html", "--charts", "{out}"]),
        args: &["--charts-format", "svg"],
    },
    // The two results differ in transfer size: compared only with --force.
    Sample { command: "report", flag: "force", base: Some(&["{ID_A}", "{ID_B}", "-o", "{out}/r.html"]), args: &["--force"] },
    // The walk's results have no repeats: refused, as there is no picked run to compare.
    s("compare", "pick", &["--pick"]),
    // A copy of the target with a block zeroed: read instead of the target, it is found corrupt.
    s("verify", "from", &["--from", "{dir}/lun-copy"]),
    s("cache-curve", "block-size", &["--block-size", "64k"]),
    s("cache-curve", "sizes", &["--sizes", "10,20"]),
    s("cache-curve", "region", &["--region", "64m"]),
    s("cache-curve", "hit-us", &["--hit-us", "100"]),
    s("cache-curve", "miss-us", &["--miss-us", "5000"]),
    s("cache-curve", "outstanding", &["--outstanding", "8"]),
    s("cache-curve", "sampled", &["--sampled", "0.5"]),
    s("cache-curve", "json", &["--json", "{out}/curve.json"]),
    s("profiles import-fio", "section", &["--section", "b"]),
    s("results percentiles", "op", &["--op", "write"]),
    s("results percentiles", "pct", &["--pct", "75"]),
    // The walk's results have one point: a second is refused.
    s("results percentiles", "point", &["--point", "2"]),
    s("results percentiles", "json", &["--json"]),
    // Without it, a job file with an option lunmark cannot apply is refused.
    Sample { command: "profiles import-fio", flag: "fio-lenient", base: Some(&["{dir}/odd.fio"]), args: &["--fio-lenient"] },
];

/// What an invocation did: its exit, its stdout (its own directory's path
/// written as `{out}`), and the files it wrote in its directory.
#[derive(Debug, PartialEq)]
struct Seen {
    ok: bool,
    stdout: String,
    files: Vec<(String, Vec<u8>)>,
}

struct Walk {
    dir: tempfile::TempDir,
    store: std::path::PathBuf,
    ids: [String; 2],
    count: std::cell::Cell<usize>,
}

impl Walk {
    fn fill(&self, args: &[&str], out: &Path) -> Vec<String> {
        let d = self.dir.path().display().to_string();
        args.iter()
            .map(|a| {
                a.replace("{dir}", &d)
                    .replace("{out}", &out.display().to_string())
                    .replace("{ID_A}", &self.ids[0])
                    .replace("{ID_B}", &self.ids[1])
            })
            .collect()
    }

    /// Runs `lunmark PATH ARGS...` in a directory of its own, on its own copy of the store.
    fn invoke(&self, path: &[&str], args: &[&str]) -> (Output, Seen) {
        self.count.set(self.count.get() + 1);
        let out = self.dir.path().join(format!("inv-{}", self.count.get()));
        std::fs::create_dir(&out).unwrap();
        let store = out.join("store.db");
        std::fs::copy(&self.store, &store).unwrap();
        let output = lunmark().env("LUNMARK_STORE", &store).current_dir(&out).args(path).args(self.fill(args, &out)).output().unwrap();
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name() != "store.db")
            .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap_or_default()))
            .collect();
        files.sort();
        let stdout = stdout(&output).replace(&out.display().to_string(), "{out}");
        let seen = Seen { ok: output.status.success(), stdout, files };
        (output, seen)
    }
}

/// A store with two real results (mem: and null:, different transfer sizes,
/// so their workloads differ), a journal of a verified run and its target, a
/// trace, and fio job files.
fn fixtures() -> Walk {
    let dir = shm_dir();
    let d = dir.path().to_path_buf();
    let store = d.join("store.db");
    let mut ids = Vec::new();
    for (target, label, bs) in [("mem:16m", "mem", "4k"), ("null:16m", "null", "8k")] {
        let json = d.join(format!("{label}.json"));
        let out = run(&[
            "run",
            "-q",
            "-t",
            target,
            "--ios",
            "2000",
            "--ramp",
            "0",
            "--bs",
            bs,
            "--label",
            label,
            "--store",
            store.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        ids.push(read_json(&json)["id"].as_str().unwrap().to_string());
    }
    std::fs::copy(d.join("null.json"), d.join("b.json")).unwrap();
    let lun = d.join("lun");
    let out = run(&[
        "run",
        "-q",
        "--no-store",
        "-t",
        lun.to_str().unwrap(),
        "--size",
        "1m",
        "--read",
        "0",
        "--ios",
        "300",
        "--ramp",
        "0",
        "--verify",
        "--journal",
        d.join("journal").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut copy = std::fs::read(&lun).unwrap();
    copy.iter_mut().for_each(|b| *b = 0);
    std::fs::write(d.join("lun-copy"), copy).unwrap();
    // An MSR Cambridge CSV trace: 4k reads and writes over 1 MiB, a hot part read again.
    let mut trace = String::new();
    for i in 0..4000u64 {
        let block = if i % 3 == 0 { i % 16 } else { (i * 7919) % 256 };
        let op = if i % 4 == 0 { "Write" } else { "Read" };
        trace.push_str(&format!("{},h,0,{op},{},4096,10\n", 1000 + i * 10, block * 4096));
    }
    std::fs::write(d.join("trace.csv"), trace).unwrap();
    std::fs::write(d.join("job.fio"), "[a]\nrw=randread\nbs=8k\n[b]\nrw=randwrite\nbs=16k\n").unwrap();
    std::fs::write(d.join("odd.fio"), "[a]\nrw=randread\nbs=8k\nexec_prerun=true\n").unwrap();
    Walk { dir, store, ids: [ids[0].clone(), ids[1].clone()], count: Default::default() }
}

/// Every command of clap's tree, by its path ("results list"), with the long
/// names of its optional flags (a required one is in the command's base: the
/// command does not run without it).
fn commands() -> Vec<(String, Vec<String>)> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &str, globals: &[String], out: &mut Vec<(String, Vec<String>)>) {
        let mut flags: Vec<String> =
            cmd.get_arguments().filter(|a| !a.is_required_set()).filter_map(|a| a.get_long().map(String::from)).collect();
        flags.extend(globals.iter().filter(|g| !flags.contains(g)).cloned().collect::<Vec<_>>());
        out.push((path.to_string(), flags));
        for sub in cmd.get_subcommands() {
            let p = if path.is_empty() { sub.get_name().to_string() } else { format!("{path} {}", sub.get_name()) };
            walk(sub, &p, globals, out);
        }
    }
    let cli = lunmark::cli::Cli::command();
    let globals: Vec<String> = cli.get_arguments().filter(|a| a.is_global_set()).filter_map(|a| a.get_long().map(String::from)).collect();
    let mut out = Vec::new();
    walk(&cli, "", &globals, &mut out);
    out
}

#[test]
fn every_flag_of_every_subcommand_is_applied_or_refused() {
    let walk = fixtures();
    let mut ignored = Vec::new();
    let mut walked = 0;
    for (command, flags) in commands() {
        if DRY_RUN_WALKED.contains(&command.as_str()) || NOT_WALKED_COMMANDS.iter().any(|(c, _)| *c == command) {
            continue;
        }
        let base = BASES.iter().find(|(c, _)| *c == command).unwrap_or_else(|| panic!("`{command}`: add it to BASES")).1;
        let path: Vec<&str> = command.split(' ').collect();
        for flag in flags {
            if NOT_WALKED.iter().any(|(c, f, _)| (*c == "*" || *c == command) && *f == flag) {
                continue;
            }
            let sample = SAMPLES
                .iter()
                .find(|s| s.command == command && s.flag == flag)
                .or_else(|| SAMPLES.iter().find(|s| s.command == "*" && s.flag == flag))
                .unwrap_or_else(|| panic!("--{flag} of `{command}`: add a sample to SAMPLES"));
            let base = sample.base.unwrap_or(base);
            let (_, without) = walk.invoke(&path, base);
            let (with_out, with) = walk.invoke(&path, &[base, sample.args].concat());
            let refused = !with.ok && !stderr(&with_out).trim().is_empty();
            walked += 1;
            if !refused && with == without {
                ignored.push(format!("lunmark {command} {} {}", base.join(" "), sample.args.join(" ")));
            }
        }
    }
    assert!(walked > 20, "only {walked} flags walked");
    assert!(ignored.is_empty(), "accepted and ignored (same exit, output and files; nothing refused):\n{}", ignored.join("\n"));
}

/// The walk's tables name only commands and flags that exist: a renamed flag
/// cannot leave a stale sample that walks nothing.
#[test]
fn the_walk_names_only_commands_and_flags_that_exist() {
    let commands = commands();
    let has = |c: &str, f: &str| commands.iter().any(|(name, flags)| (c == "*" || name == c) && flags.iter().any(|x| x == f));
    for s in SAMPLES {
        assert!(has(s.command, s.flag), "sample for `{} --{}`: no such flag", s.command, s.flag);
    }
    for (c, f, _) in NOT_WALKED.iter().filter(|(c, _, _)| *c != "*") {
        assert!(has(c, f), "NOT_WALKED `{c} --{f}`: no such flag");
    }
    for (c, _) in BASES {
        assert!(commands.iter().any(|(name, _)| name == c), "BASES `{c}`: no such command");
    }
    for c in DRY_RUN_WALKED {
        assert!(commands.iter().any(|(name, _)| name == c), "`{c}`: no such command");
    }
}

/// `run --help` shows each workload flag's default (the values a run from
/// flags alone uses, which a profile may set otherwise).
#[test]
fn run_help_shows_each_flags_default() {
    let out = lunmark().args(["run", "--help"]).output().unwrap();
    // Unwrapped, so a default wrapped onto the next line still reads as one.
    let help = stdout(&out).split_whitespace().collect::<Vec<_>>().join(" ");
    for (flag, default) in [
        ("--qd <N>", "[default: 32;"),
        ("--workers <N|MIN-MAX>", "[default: 1;"),
        ("--bs <SIZE>", "[default: 4k;"),
        ("--read <PCT>", "[default: 70;"),
        ("--random <PCT>", "[default: 100;"),
        ("--time <DURATION>", "[default: 10s;"),
        ("--ramp <DURATION>", "[default: 2s;"),
        ("--seed <N>", "[default: 1]"),
        ("--repeat <N>", "[default: 1]"),
        ("--pick <HOW>", "[default: mean]"),
        ("--engine <ENGINE>", "[default: auto]"),
    ] {
        let at = help.find(&format!("{flag} ")).unwrap_or_else(|| panic!("no {flag}"));
        let next = help[at + flag.len()..].find(" --").map(|n| at + flag.len() + n).unwrap_or(help.len());
        assert!(help[at..next].contains(default), "{flag}: no {default} in {:?}", &help[at..next]);
    }
    // And they are what a run from flags alone uses.
    let dry = lunmark().args(["run", "-t", "mem:16m", "--bs", "4k", "--dry-run", "--no-store"]).output().unwrap();
    assert!(stdout(&dry).contains("ramp: 2s (not measured)   run: 10s measured   seed: 1"), "{}", stdout(&dry));
    assert!(stdout(&dry).contains("1 worker x 1 target x 32 outstanding") && stdout(&dry).contains("70% read / 30% write, 100% random"));
}

/// The global `--store` is listed in the --help of the subcommands that keep
/// or read results, not of those that use none (verify, cache-curve,
/// profiles), which still refuse one given, naming it.
#[test]
fn store_is_listed_only_where_a_store_is_used() {
    let help = |cmd: &[&str]| {
        let out = run(&[cmd, &["--help"]].concat());
        assert!(out.status.success(), "{cmd:?}: {}", stderr(&out));
        stdout(&out).contains("--store")
    };
    for cmd in [&["verify"][..], &["cache-curve"], &["profiles"], &["profiles", "show"], &["profiles", "import-fio"]] {
        assert!(!help(cmd), "{cmd:?} --help lists --store");
    }
    for cmd in [&["run"][..], &["report"], &["compare"], &["results", "list"], &["lab", "protocols"]] {
        assert!(help(cmd), "{cmd:?} --help does not list --store");
    }
    for (cmd, name) in
        [(&["profiles"][..], "profiles"), (&["profiles", "show", "quick"], "profiles"), (&["verify", "x", "--journal", "j"], "verify")]
    {
        let out = run(&[cmd, &["--store", "s.db"]].concat());
        assert_eq!(out.status.code(), Some(1), "{cmd:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(&format!("--store s.db: `lunmark {name}` reads and keeps no results")), "{cmd:?}: {}", stderr(&out));
    }
}
