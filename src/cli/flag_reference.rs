//! docs/flags.md, the flag reference, made from the command line's own
//! definition (clap), so it cannot go stale: a test renders it and fails when
//! the file differs (`LUNMARK_BLESS=1` rewrites it after a deliberate change).

use clap::{Arg, ArgAction, Command};
use std::fmt::Write;

/// The whole reference: every subcommand, nested ones included, with each flag's
/// value, default, choices and help.
pub fn render(root: &Command) -> String {
    let mut out = String::new();
    out.push_str("# Flag reference\n\n");
    out.push_str(
        "Every subcommand of `lunmark` and its flags, made from the program's own definition \
         (`cargo test` fails when this page and the program differ). `lunmark COMMAND --help` \
         prints the same text.\n\n",
    );
    for sub in root.get_subcommands().filter(|s| !s.is_hide_set()) {
        command(&mut out, sub, &format!("lunmark {}", sub.get_name()));
    }
    let globals: Vec<&Arg> = root.get_arguments().filter(|a| a.is_global_set() && !a.is_hide_set()).collect();
    if !globals.is_empty() {
        out.push_str("## Global flags\n\nAccepted by every subcommand.\n\n");
        for a in globals {
            flag(&mut out, a);
        }
        out.push('\n');
    }
    out
}

fn command(out: &mut String, cmd: &Command, path: &str) {
    let _ = writeln!(out, "## `{path}`\n");
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = writeln!(out, "{}\n", about.to_string().trim());
    }
    let positionals: Vec<&Arg> = cmd.get_positionals().filter(|a| !a.is_hide_set()).collect();
    let flags: Vec<&Arg> =
        cmd.get_arguments().filter(|a| !a.is_positional() && !a.is_hide_set() && !a.is_global_set() && a.get_id() != "help").collect();
    for a in positionals.iter().chain(flags.iter()) {
        flag(out, a);
    }
    if !positionals.is_empty() || !flags.is_empty() {
        out.push('\n');
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        command(out, sub, &format!("{path} {}", sub.get_name()));
    }
}

/// One line: `--name VALUE` (default, choices): help.
fn flag(out: &mut String, a: &Arg) {
    let value = a.get_value_names().map(|v| v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" "));
    let takes_value = matches!(a.get_action(), ArgAction::Set | ArgAction::Append);
    let mut name = match (a.get_long(), a.get_short()) {
        (Some(l), Some(s)) => format!("-{s}, --{l}"),
        (Some(l), None) => format!("--{l}"),
        (None, Some(s)) => format!("-{s}"),
        (None, None) => value.clone().unwrap_or_else(|| a.get_id().to_string().to_uppercase()),
    };
    if a.get_long().is_some() || a.get_short().is_some() {
        if let Some(v) = value.filter(|_| takes_value) {
            let _ = write!(name, " {v}");
        }
    }
    let mut notes = Vec::new();
    let defaults: Vec<String> = a.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
    if !defaults.is_empty() && takes_value {
        notes.push(format!("default {}", defaults.join(",")));
    }
    let choices: Vec<String> = a.get_possible_values().iter().filter(|p| !p.is_hide_set()).map(|p| p.get_name().to_string()).collect();
    if !choices.is_empty() && takes_value {
        notes.push(format!("one of {}", choices.join(", ")));
    }
    let help = a.get_long_help().or(a.get_help()).map(|h| h.to_string()).unwrap_or_default();
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let notes = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) };
    let _ = writeln!(out, "- `{name}`{notes}: {help}");
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The page in docs/ is what the program says of itself.
    #[test]
    fn docs_flags_md_is_the_programs_own_flag_list() {
        let got = super::render(&crate::cli::Cli::command());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/flags.md");
        if std::env::var_os("LUNMARK_BLESS").is_some() {
            std::fs::write(path, &got).unwrap();
        }
        let want = std::fs::read_to_string(path).expect("docs/flags.md: run with LUNMARK_BLESS=1 to make it");
        assert!(got == want, "docs/flags.md differs from the program's flags: rerun the tests with LUNMARK_BLESS=1 to rewrite it");
    }

    /// Every flag of `run` that has a default says it.
    #[test]
    fn the_reference_names_defaults_and_every_subcommand() {
        let got = super::render(&crate::cli::Cli::command());
        for sub in ["## `lunmark run`", "## `lunmark results list`", "## `lunmark lab protocols`", "## `lunmark compare`"] {
            assert!(got.contains(sub), "{sub} missing");
        }
        assert!(got.contains("- `--store PATH`"), "the global --store");
    }
}
