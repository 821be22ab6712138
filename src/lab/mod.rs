//! Labs: real targets started on loopback and a study run against them.

pub mod cache;
pub mod link;
pub mod plan_view;
pub mod protocols;
pub mod servers;

/// What `--label` puts before the label of each of a lab's results ("" without it).
pub fn label_prefix(args: &crate::cli::run::RunArgs) -> String {
    args.label.as_ref().map(|l| format!("{l}: ")).unwrap_or_default()
}
