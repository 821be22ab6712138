//! IPMI DCMI: the whole-server power an inline meter would give, read with
//! `ipmitool dcmi power reading`. `LUNMARK_IPMITOOL` names another binary
//! (tests use a script that prints recorded output).

use std::process::Command;
use std::sync::atomic::AtomicBool;

use super::command;
use super::sampler::{command_failure, SampleError};

#[derive(Clone, Debug)]
pub struct Ipmi {
    pub tool: String,
}

fn tool() -> String {
    std::env::var("LUNMARK_IPMITOOL").unwrap_or_else(|_| "ipmitool".into())
}

impl Ipmi {
    pub fn discover() -> Result<Ipmi, String> {
        let ipmi = Ipmi { tool: tool() };
        ipmi.read(&AtomicBool::new(false)).map(|_| ipmi).map_err(|e| e.reason)
    }

    /// One reading, watts, within `command::READING_TIMEOUT`.
    pub fn read(&self, abort: &AtomicBool) -> Result<f64, SampleError> {
        let mut cmd = Command::new(&self.tool);
        cmd.args(["dcmi", "power", "reading"]);
        let out = command::run(cmd, command::READING_TIMEOUT, abort).map_err(|f| match f {
            command::Failure::Spawn(e) if e.kind() == std::io::ErrorKind::NotFound => {
                "no IPMI: ipmitool is not installed (apt-get install ipmitool) or no BMC is present".to_string().into()
            }
            f => command_failure(&format!("no IPMI: `{} dcmi power reading`", self.tool), f),
        })?;
        if !out.success {
            return Err(format!("no IPMI: `{} dcmi power reading` failed: {}", self.tool, out.stderr.trim()).into());
        }
        parse_reading(&out.stdout).map_err(SampleError::from)
    }
}

/// Watts from `ipmitool dcmi power reading` output (the "Instantaneous power
/// reading" line), or FreeIPMI's `ipmi-dcmi` ("Current Power"). A BMC that says
/// its reading is deactivated gives no figure, and neither does one that reports
/// 0 W: no running server draws nothing, and some BMCs advertise DCMI without
/// ever filling in the reading.
pub fn parse_reading(text: &str) -> Result<f64, String> {
    let state = text.lines().find(|l| l.to_ascii_lowercase().contains("power reading state")).map(|l| l.to_ascii_lowercase());
    if state.as_deref().is_some_and(|s| s.contains("deactivated") || s.contains("not available")) {
        return Err("the BMC says DCMI power reading is deactivated: enable it in the BMC (ipmitool dcmi power activate)".into());
    }
    let line = text
        .lines()
        .find(|l| {
            let l = l.trim_start().to_ascii_lowercase();
            l.starts_with("instantaneous power reading") || l.starts_with("current power")
        })
        .ok_or_else(|| format!("no 'Instantaneous power reading' line in the ipmitool output: {}", text.trim()))?;
    let after = line.split_once(':').map(|(_, v)| v).unwrap_or("");
    let number: String = after.trim().chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let watts: f64 = number.parse().map_err(|_| format!("cannot read watts from '{}'", line.trim()))?;
    if !after.to_ascii_lowercase().contains("watt") {
        return Err(format!("the reading '{}' is not in watts", line.trim()));
    }
    if watts == 0.0 {
        return Err("the BMC reports 0 W: it advertises DCMI but does not fill in the reading; use --power-cmd or --power-log".into());
    }
    Ok(watts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{}/tests/fixtures/ipmi/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    #[test]
    fn recorded_layouts_parse() {
        assert_eq!(parse_reading(&fixture("ipmitool-activated.txt")), Ok(220.0));
        assert_eq!(parse_reading(&fixture("freeipmi-dcmi.txt")), Ok(285.0));
        assert!(parse_reading(&fixture("ipmitool-deactivated.txt")).unwrap_err().contains("deactivated"));
        assert!(parse_reading(&fixture("ipmitool-zero-activated.txt")).unwrap_err().contains("0 W"));
        assert!(parse_reading("garbage").is_err());
    }
}
