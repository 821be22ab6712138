//! What `lab cache --dry-run` and `lab protocols --dry-run` print before the
//! workload: the study's runs, what serves each, where the results go. Pure:
//! the lab fills a view (and renders the workload with the plan text), this
//! writes the words.

use std::fmt::Write;

/// `lab cache --dry-run`.
pub struct CacheStudyView<'a> {
    /// The labels' prefix (`--label X` gives "X: ").
    pub prefix: &'a str,
    pub lun_size: &'a str,
    /// The array, short, as each result's label ends ("4 disks x (+8ms read, +1ms write)").
    pub backend: &'a str,
    /// The lab's model in a line ("model: ...").
    pub model: &'a str,
    /// The cache sizes, % of the LUN.
    pub sizes: &'a [f64],
    pub json: Option<&'a str>,
    /// With cache flags given: (mode, where its frames live, block bytes).
    pub cache: Option<(String, String, u32)>,
    /// The workload, as the plan text writes it.
    pub workload: &'a str,
    /// The whole study's ramp and measurement (every size's), when each size's run is timed.
    pub total: Option<&'a str>,
}

/// The cache study's dry run.
pub fn cache_study(v: &CacheStudyView) -> String {
    let mut text = String::from("lab cache (dry run: no server started, nothing run)\n");
    let _ = writeln!(text, "{}", v.model);
    text.push_str(
        "each cache size runs the workload below flat out as a result of its own, recording its I/O stream for the prediction:\n",
    );
    for pct in v.sizes {
        let _ = writeln!(text, "  {}lab cache: {pct}% of the LUN, {}", v.prefix, v.backend);
    }
    if let Some(json) = v.json {
        let _ = writeln!(text, "--json {json}: the list of the sizes' results");
    }
    if let Some((mode, place, block)) = &v.cache {
        let _ = writeln!(text, "the cache of each size: {mode}, in {place}, {block}-byte blocks");
    }
    let _ = writeln!(text, "workload of each size (shown against mem:{}; the lab runs it on its LUN through the cache):", v.lun_size);
    text.push_str(v.workload);
    if let Some(total) = v.total {
        // The workload's duration line is one size's; a user planning the study needs the sum.
        let _ = writeln!(text, "the whole study: {total} of ramp and measurement over {} sizes, plus set-up", v.sizes.len());
    }
    text
}

/// `lab protocols --dry-run`.
pub struct ProtocolStudyView<'a> {
    pub prefix: &'a str,
    pub size: &'a str,
    /// Each leg: its label and what serves it.
    pub legs: Vec<(String, String)>,
    /// The shaped links the TCP legs cross: a line each.
    pub links: Vec<String>,
    /// What each NBD target is held to (`--port-limit`), if anything.
    pub port_limit: Option<String>,
    /// Where lunmark and the servers run (CPUs apart or shared).
    pub cpus: &'a str,
    pub json: Option<&'a str>,
    /// The workload, as the plan text writes it.
    pub workload: &'a str,
}

/// The protocol study's dry run.
pub fn protocol_study(v: &ProtocolStudyView) -> String {
    let mut text = String::from("lab protocols (dry run: no server started, nothing run)\n");
    text.push_str("each leg runs the workload below as a result of its own, kept in the store:\n");
    for (label, what) in &v.legs {
        let _ = writeln!(text, "  {}lab protocols: {label}  <- {what}", v.prefix);
    }
    for link in &v.links {
        let _ = writeln!(text, "{link}");
    }
    if let Some(limit) = &v.port_limit {
        let _ = writeln!(text, "each NBD target is held to a port's limit: {limit}");
    }
    let _ = writeln!(text, "{}", v.cpus);
    if let Some(json) = v.json {
        let _ = writeln!(text, "--json {json}: the list of the legs' results");
    }
    let _ = writeln!(text, "workload of each leg (shown against mem:{}; each leg runs it on its own target and engine):", v.size);
    text.push_str(v.workload);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::check_golden;

    #[test]
    fn the_cache_study_reads_as_its_snapshot() {
        let text = cache_study(&CacheStudyView {
            prefix: "port 1: ",
            lun_size: "256m",
            backend: "4 disks x (+8ms read, +1ms write)",
            model: "model: a 256m LUN striped over an array of 4 disks",
            sizes: &[0.0, 25.0, 100.0],
            json: Some("study.json"),
            cache: Some(("writeback".into(), "RAM".into(), 4096)),
            workload: "point 1/1\n  workload: ...\n",
            total: Some("48s"),
        });
        check_golden("lab-cache-plan.txt", &text);
    }

    #[test]
    fn the_protocol_study_reads_as_its_snapshot() {
        let legs = vec![
            ("mem: (lunmark alone)".to_string(), "mem:1g, inside lunmark".to_string()),
            ("NBD TCP 10gbe link".to_string(), "nbdkit memory 1g on 10gbe link".to_string()),
        ];
        let text = protocol_study(&ProtocolStudyView {
            prefix: "",
            size: "1g",
            legs,
            links: vec!["the nbd-tcp leg crosses a veth pair shaped to 10gbe each way".into()],
            port_limit: Some("one I/O at a time, 1 ms each (at most 1000 IOPS)".into()),
            cpus: "CPUs apart: lunmark (the initiator) on CPUs 0-1, the target servers on CPUs 2-3: the initiator's CPU below is that of its own CPUs",
            json: None,
            workload: "point 1/1\n  workload: ...\n",
        });
        check_golden("lab-protocols-plan.txt", &text);
    }
}
