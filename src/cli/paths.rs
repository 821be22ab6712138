//! Every argument of every subcommand that takes a path, and what lunmark does
//! with it: reads it, writes it (an output), benchmarks it (a target) or keeps
//! results in it (the store). Before any subcommand runs, `check` puts every
//! output given on the command line through the guard of `crate::output_path`,
//! so a device node, a FIFO or a directory named as an output is refused
//! before anything runs. A test walks clap's command tree and fails on any
//! argument that takes a path but is missing from `PATH_ARGS`: a new output
//! flag cannot be added without saying how it is written.

use std::path::{Path, PathBuf};

use clap::{ArgMatches, Command};

use crate::output_path::{self, Mode, OutputError};
use crate::results::store;

/// What a subcommand does with a path argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Written by lunmark: checked before the run, written through `output_path`.
    /// `stdout`: `-` writes to stdout instead.
    Output { mode: Mode, stdout: bool },
    /// Only read.
    Input,
    /// A benchmark target (or the cache's device): the target safety rules
    /// (`--destructive`, `--force`, the in-use checks) govern it, not this guard.
    Target,
    /// The result store (the global `--store`).
    Store,
    /// A directory that must exist, into which the command writes files of its
    /// own naming (`report --charts DIR`); each of those is judged by
    /// `output_path` as it is named, before any is written.
    OutputDir,
}

/// Any subcommand: `--store` is global.
pub const ANY: &str = "*";

const JSON: Role = Role::Output { mode: Mode::Replace, stdout: true };
const STREAM: Role = Role::Output { mode: Mode::Stream, stdout: false };
const REPLACED: Role = Role::Output { mode: Mode::Replace, stdout: false };

/// (subcommand path, clap argument id, role). The subcommand path is the names
/// from the top, space-separated ("run", "lab cache", "results import").
pub const PATH_ARGS: &[(&str, &str, Role)] = &[
    (ANY, "store", Role::Store),
    // run (and the labs, which flatten the same flags: see RUN_FLAGS_IN).
    ("run", "json", JSON),
    ("run", "trace", STREAM),
    ("run", "journal", STREAM),
    ("run", "hdr_log", REPLACED),
    ("run", "live_json", Role::Output { mode: Mode::Stream, stdout: true }),
    ("run", "profile_file", Role::Input),
    ("run", "fio", Role::Input),
    ("run", "power_log", Role::Input),
    ("run", "replay", Role::Input),
    ("run", "targets", Role::Target),
    ("run", "cache_dev", Role::Target),
    ("report", "output", REPLACED),
    ("report", "charts", Role::OutputDir),
    ("cache-curve", "json", REPLACED),
    ("cache-curve", "file", Role::Input),
    ("verify", "target", Role::Target),
    ("verify", "journal", Role::Input),
    ("verify", "from", Role::Input),
    ("results import", "file", Role::Input),
    ("profiles import-fio", "file", Role::Input),
];

/// Subcommands that never open the result store (the others check its path).
pub const WITHOUT_STORE: &[&str] = &["verify", "cache-curve", "profiles"];

/// Subcommands that take `run`'s flags as they are: their path arguments are
/// `run`'s entries of `PATH_ARGS`.
const RUN_FLAGS_IN: &[&str] = &["lab protocols", "lab cache"];

/// The role of `id` in the subcommand at `command_path`, if it takes a path.
pub fn role(command_path: &str, id: &str) -> Option<Role> {
    let command_path = if RUN_FLAGS_IN.contains(&command_path) { "run" } else { command_path };
    PATH_ARGS.iter().find(|(c, a, _)| (*c == command_path || *c == ANY) && *a == id).map(|(_, _, r)| *r)
}

/// How a user names an argument in messages: `--json`, `-o`/`--output`, or `FILE`.
pub fn flag_name(arg: &clap::Arg) -> String {
    match (arg.get_long(), arg.get_short()) {
        (Some(long), Some(short)) => format!("-{short}/--{long}"),
        (Some(long), None) => format!("--{long}"),
        (None, Some(short)) => format!("-{short}"),
        (None, None) => arg.get_value_names().and_then(|v| v.first()).map(|v| v.to_string()).unwrap_or_else(|| arg.get_id().to_string()),
    }
}

/// An input as messages name it: `--replay r.trace`, or `the FILE argument t.trace`.
fn input_name(arg: &clap::Arg, value: &str) -> String {
    if arg.is_positional() {
        format!("the {} argument {value}", flag_name(arg))
    } else {
        format!("{} {value}", flag_name(arg))
    }
}

/// Checks every output (and the store) the command line names, before anything
/// runs. `command` is the tree `matches` came from.
pub fn check(command: &Command, matches: &ArgMatches) -> Result<(), OutputError> {
    let mut path: Vec<String> = Vec::new();
    let (mut cmd, mut m) = (command, matches);
    let mut store_flag: Option<PathBuf> = None;
    // With --no-store the store is not opened, so its path is not judged either.
    let mut no_store = false;
    // Files the command writes and files it benchmarks, to catch one named as both.
    let mut outputs: Vec<(String, PathBuf)> = Vec::new();
    let mut targets: Vec<(String, PathBuf)> = Vec::new();
    // Files the command reads: an output naming one would destroy it.
    let mut inputs: Vec<(String, PathBuf)> = Vec::new();
    loop {
        let here = path.join(" ");
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            let Some(role) = role(&here, id) else { continue };
            let Ok(Some(values)) = m.try_get_raw(id) else { continue };
            for value in values {
                match role {
                    Role::Output { mode, stdout } if value == "-" => {
                        output_path::destination(&flag_name(arg), "-", stdout, mode)?;
                    }
                    Role::Output { mode, .. } => {
                        output_path::check(&flag_name(arg), Path::new(value), mode)?;
                        outputs.push((flag_name(arg), PathBuf::from(value)));
                    }
                    Role::Store => store_flag = Some(PathBuf::from(value)),
                    Role::OutputDir => {}
                    Role::Target => {
                        if let Some(path) = target_file(&value.to_string_lossy()) {
                            targets.push((format!("{} {}", flag_name(arg), value.to_string_lossy()), path));
                        }
                    }
                    // `-` (stdin, where a flag offers it) is no file an output can name.
                    Role::Input if value == "-" => {}
                    Role::Input => inputs.push((input_name(arg, &value.to_string_lossy()), PathBuf::from(value))),
                }
            }
        }
        no_store |= matches!(m.try_get_one::<bool>("no_store"), Ok(Some(true)));
        match m.subcommand() {
            Some((name, sub)) => {
                let Some(next) = cmd.find_subcommand(name) else { break };
                path.push(name.to_string());
                cmd = next;
                m = sub;
            }
            None => break,
        }
    }
    let top = path.first().map(String::as_str).unwrap_or("run");
    if !WITHOUT_STORE.contains(&top) && !no_store {
        let store = check_store(store_flag.as_deref()).map_err(|mut e| {
            if matches!(top, "run" | "lab") {
                // The same ways out as a store that fails its write test (cli::run::ResultStore::open, in src/cli/run/mod.rs).
                e.problem += ". Nothing was run. Give --store PATH for a store you can write, \
                              or --no-store to keep the result only in the printed summary and --json FILE";
            }
            e
        })?;
        outputs.push((if store_flag.is_some() { "--store".into() } else { "the store".into() }, store));
    }
    no_shared_files(&outputs, &targets, &inputs)
}

/// The file or device a target URI names (None for mem:, null: and network targets).
fn target_file(uri: &str) -> Option<PathBuf> {
    match crate::targets::uri::parse(uri) {
        Ok(crate::targets::uri::TargetUri::File(p) | crate::targets::uri::TargetUri::Device(p)) => Some(p),
        _ => None,
    }
}

/// An output that is also a target would overwrite the data being measured (or
/// be overwritten by it); an output that is also an input (a trace to replay, a
/// job file, a result to import) would destroy what the command reads; two
/// outputs in one file would overwrite each other.
fn no_shared_files(outputs: &[(String, PathBuf)], targets: &[(String, PathBuf)], inputs: &[(String, PathBuf)]) -> Result<(), OutputError> {
    for (i, (flag, path)) in outputs.iter().enumerate() {
        let refuse = |problem: String| OutputError { flag: flag.clone(), path: path.display().to_string(), problem };
        if let Some((target, _)) = targets.iter().find(|(_, t)| same_file(path, t)) {
            return Err(refuse(format!(
                "that is also the target ({target}): lunmark would overwrite the data it measures; name another file"
            )));
        }
        if let Some((input, _)) = inputs.iter().find(|(_, f)| same_file(path, f)) {
            return Err(refuse(format!(
                "that is also the file this command reads ({input}): writing it would destroy that input; name another file"
            )));
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, o)| same_file(path, o)) {
            return Err(refuse(format!("that is also the file of {other}: two outputs would overwrite each other; name another file")));
        }
    }
    Ok(())
}

/// The same file: the same inode when both exist, else the same absolute path.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        (Err(_), Err(_)) => std::path::absolute(a).ok() == std::path::absolute(b).ok(),
        _ => false,
    }
}

/// Checks the result store's path (from `--store`, `LUNMARK_STORE` or the
/// default) before the store is opened.
pub fn check_store(flag: Option<&Path>) -> Result<PathBuf, OutputError> {
    let path = store::default_path(flag);
    let name = if flag.is_some() {
        "--store"
    } else if std::env::var_os("LUNMARK_STORE").is_some_and(|v| !v.is_empty()) {
        "the store (LUNMARK_STORE)"
    } else {
        "the store"
    };
    if path == Path::new("-") {
        output_path::destination(name, "-", false, Mode::Store)?;
    }
    // Only the default store's directory is made: one given with --store must
    // exist, as for every other output flag (a typo makes no directory tree).
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if flag.is_some() && !dir.exists() && !dir.ancestors().any(|a| a.is_file()) {
        return Err(OutputError { flag: name.into(), path: path.display().to_string(), problem: output_path::no_such_directory(dir) });
    }
    output_path::check(name, &path, Mode::Store)?;
    Ok(path)
}

/// The subcommand paths and argument ids of every argument in the tree that
/// takes a path: a `PathBuf` value, or a value named FILE, PATH, DIR, TARGET or URI.
pub fn path_arguments(command: &Command) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    walk(command, &mut Vec::new(), &mut found);
    found
}

fn walk(cmd: &Command, path: &mut Vec<String>, found: &mut Vec<(String, String, String)>) {
    let path_parser = clap::builder::ValueParser::path_buf().type_id();
    for arg in cmd.get_arguments() {
        if !arg.get_action().takes_values() {
            continue;
        }
        let named_like_a_path = arg
            .get_value_names()
            .into_iter()
            .flatten()
            .flat_map(|n| n.as_str().split(|c: char| !c.is_ascii_alphabetic()).map(str::to_string).collect::<Vec<_>>())
            .any(|word| ["FILE", "PATH", "DIR", "TARGET", "URI", "DEV", "DEVICE", "SOCKET"].contains(&word.as_str()));
        if arg.get_value_parser().type_id() == path_parser || named_like_a_path {
            found.push((path.join(" "), arg.get_id().to_string(), flag_name(arg)));
        }
    }
    for sub in cmd.get_subcommands() {
        path.push(sub.get_name().to_string());
        walk(sub, path, found);
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_argument_that_takes_a_path_says_whether_lunmark_writes_it() {
        let tree = crate::cli::Cli::command();
        let found = path_arguments(&tree);
        assert!(found.len() >= PATH_ARGS.len() - 1, "the walk finds the path arguments: {found:?}");
        let unclassified: Vec<_> = found.iter().filter(|(c, id, _)| role(c, id).is_none()).collect();
        assert!(
            unclassified.is_empty(),
            "these arguments take a path but are not in cli::paths::PATH_ARGS (say if lunmark reads or writes them): {unclassified:?}"
        );
        // And nothing listed is stale: each entry is an argument of that subcommand.
        for (cmd, id, _) in PATH_ARGS {
            let listed = found.iter().any(|(c, i, _)| (c == cmd || *cmd == ANY) && i == id);
            assert!(listed, "PATH_ARGS lists '{id}' of '{cmd}', which is not an argument that takes a path there");
        }
    }

    #[test]
    fn a_new_path_flag_is_found_and_has_no_role_until_listed() {
        // What the walk sees when someone adds `--dump FILE` to a subcommand.
        let tree = Command::new("lunmark").subcommand(
            Command::new("run")
                .arg(clap::Arg::new("dump").long("dump").value_name("FILE"))
                .arg(clap::Arg::new("log").long("log").value_parser(clap::value_parser!(PathBuf)))
                .arg(clap::Arg::new("label").long("label")),
        );
        let found = path_arguments(&tree);
        let ids: Vec<&str> = found.iter().map(|(_, id, _)| id.as_str()).collect();
        assert_eq!(ids, ["dump", "log"], "FILE-named and PathBuf-typed arguments are found, others not");
        assert!(found.iter().all(|(c, id, _)| role(c, id).is_none()), "so the classification test fails for them");
    }

    #[test]
    fn an_output_that_is_a_target_or_another_output_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.bin");
        std::fs::write(&data, "x").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&data, &link).unwrap();
        let fresh = dir.path().join("new.json");
        let outs = |v: &[(&str, &Path)]| v.iter().map(|(f, p)| (f.to_string(), p.to_path_buf())).collect::<Vec<_>>();
        let e = no_shared_files(&outs(&[("--json", &link)]), &outs(&[("-t/--target data.bin", &data)]), &[]).unwrap_err();
        assert!(e.problem.starts_with("that is also the target (-t/--target data.bin)"), "{e}");
        let e = no_shared_files(&outs(&[("--trace", &fresh), ("--json", &fresh)]), &[], &[]).unwrap_err();
        assert_eq!(e.flag, "--json");
        assert!(e.problem.contains("--trace"), "{e}");
        no_shared_files(&outs(&[("--trace", &fresh), ("--json", &data)]), &[], &[]).unwrap();
    }

    /// Every output (and the store) of a subcommand against every file it
    /// reads, named through a symbolic link and through a `./` form: each pair
    /// is refused before anything runs, the message naming both flags and the file.
    #[test]
    fn an_output_that_names_an_input_of_the_same_command_is_refused_for_every_pair() {
        let tree = crate::cli::Cli::command();
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("input.file");
        std::fs::write(&input, "what the command reads").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let dotted = dir.path().join(".").join("input.file");
        let commands = ["run", "lab protocols", "lab cache", "cache-curve", "verify", "results import", "profiles import-fio"];
        let mut pairs = 0;
        for command in commands {
            let words: Vec<&str> = command.split(' ').collect();
            let sub = words.iter().fold(&tree, |c, w| c.find_subcommand(w).unwrap());
            let top = words[0];
            let args_with = |want: fn(Role) -> bool| -> Vec<&clap::Arg> {
                sub.get_arguments().filter(|a| role(command, a.get_id().as_str()).is_some_and(want)).collect()
            };
            let ins = args_with(|r| r == Role::Input);
            let mut outs: Vec<Option<&clap::Arg>> = args_with(|r| matches!(r, Role::Output { .. })).into_iter().map(Some).collect();
            if !WITHOUT_STORE.contains(&top) {
                outs.push(None); // the global --store
            }
            for input_arg in &ins {
                for output_arg in &outs {
                    for output in [&link, &dotted] {
                        let mut argv: Vec<String> = vec!["lunmark".into()];
                        let out_flag = match output_arg {
                            None => {
                                argv.extend(["--store".into(), output.display().to_string()]);
                                "--store".to_string()
                            }
                            Some(_) => String::new(),
                        };
                        argv.extend(words.iter().map(|w| w.to_string()));
                        let mut push = |arg: &clap::Arg, value: &Path| match arg.get_long() {
                            Some(long) => argv.extend([format!("--{long}"), value.display().to_string()]),
                            None => argv.push(value.display().to_string()),
                        };
                        push(input_arg, &input);
                        let out_flag = match output_arg {
                            Some(a) => {
                                push(a, output);
                                flag_name(a)
                            }
                            None => out_flag,
                        };
                        if top == "verify" {
                            argv.push("mem:1m".into());
                        }
                        let matches = tree.clone().try_get_matches_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
                        let e = check(&tree, &matches).expect_err(&format!("{argv:?} is refused"));
                        let text = e.to_string();
                        let in_name = input_name(input_arg, &input.display().to_string());
                        assert!(text.starts_with(&format!("{out_flag} {}: ", output.display())), "{argv:?}: {text}");
                        assert!(text.contains(&format!("file this command reads ({in_name})")), "{argv:?}: {text}");
                        pairs += 1;
                    }
                }
            }
        }
        // run and each lab: 4 inputs x (3 outputs + the store); cache-curve: 1 x 1; results import: 1 x 1; two forms each.
        assert!(pairs >= 2 * (3 * 16 + 2), "{pairs} pairs walked");
        assert_eq!(std::fs::read(&input).unwrap(), b"what the command reads");
    }

    #[test]
    fn the_output_flags_include_each_subcommands_writers() {
        let tree = crate::cli::Cli::command();
        let outputs: Vec<(String, String)> = path_arguments(&tree)
            .into_iter()
            .filter(|(c, id, _)| matches!(role(c, id), Some(Role::Output { .. })))
            .map(|(c, _, flag)| (c, flag))
            .collect();
        for want in [("run", "--json"), ("run", "--trace"), ("run", "--journal"), ("report", "-o/--output"), ("cache-curve", "--json")] {
            assert!(outputs.iter().any(|(c, f)| c == want.0 && f == want.1), "{want:?} not among {outputs:?}");
        }
    }
}
