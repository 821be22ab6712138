//! Polling settings of the io_uring engine, as the user gives them (`--sqpoll[=CPU]`,
//! `--poll`, or `sqpoll`/`poll` in a profile) and as the result records them.
//!
//! - SQ polling (IORING_SETUP_SQPOLL): a kernel thread per ring picks up
//!   submissions, so a worker submits without a system call; pinned to one CPU
//!   (IORING_SETUP_SQ_AFF) when a CPU is given. Its CPU time is the kernel's,
//!   counted in the machine-wide busy CPU like any other.
//! - Completion polling (IORING_SETUP_IOPOLL, fio's `hipri`): the worker polls the
//!   device's poll queues instead of waiting for an interrupt. Only block devices
//!   with poll queues can (`/sys/block/NAME/queue/io_poll` is 1); checked before
//!   the run (`run::polling`).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where the submission-queue poller runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqPoll {
    /// Wherever the scheduler puts it.
    AnyCpu,
    /// Pinned to this CPU.
    Cpu(u32),
}

impl std::str::FromStr for SqPoll {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "" | "any" | "on" | "true" => Ok(SqPoll::AnyCpu),
            n => n.parse().map(SqPoll::Cpu).map_err(|_| {
                format!("'{s}' is not a CPU number: give --sqpoll alone (the poller runs on any CPU) or --sqpoll=N with N a CPU number such as 0 or 1")
            }),
        }
    }
}

impl fmt::Display for SqPoll {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqPoll::AnyCpu => write!(f, "any CPU"),
            SqPoll::Cpu(c) => write!(f, "CPU {c}"),
        }
    }
}

/// In profiles and results: `"any"` or the CPU number.
impl Serialize for SqPoll {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SqPoll::AnyCpu => s.serialize_str("any"),
            SqPoll::Cpu(c) => s.serialize_u32(*c),
        }
    }
}

impl<'de> Deserialize<'de> for SqPoll {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Cpu(u32),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Cpu(c) => Ok(SqPoll::Cpu(c)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The polling a workload asks of its io_uring rings (none by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Polling {
    /// A kernel thread polls each worker's submission queue (--sqpoll).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll: Option<SqPoll>,
    /// Completions are polled from the device's poll queues (--poll).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub poll: bool,
}

impl Polling {
    pub fn is_off(&self) -> bool {
        self.sqpoll.is_none() && !self.poll
    }

    /// The flags that ask for it, as a user types them ("--sqpoll=1 --poll").
    pub fn flags(&self) -> String {
        let mut out = Vec::new();
        match self.sqpoll {
            Some(SqPoll::AnyCpu) => out.push("--sqpoll".to_string()),
            Some(SqPoll::Cpu(c)) => out.push(format!("--sqpoll={c}")),
            None => {}
        }
        if self.poll {
            out.push("--poll".to_string());
        }
        out.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqpoll_reads_any_or_a_cpu_and_names_a_bad_value() {
        assert_eq!("".parse::<SqPoll>().unwrap(), SqPoll::AnyCpu);
        assert_eq!("any".parse::<SqPoll>().unwrap(), SqPoll::AnyCpu);
        assert_eq!("3".parse::<SqPoll>().unwrap(), SqPoll::Cpu(3));
        let e = "x1".parse::<SqPoll>().unwrap_err();
        assert!(e.contains("'x1'") && e.contains("--sqpoll=N"), "{e}");
    }

    #[test]
    fn polling_round_trips_through_toml_and_json() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct Wrap {
            polling: Polling,
        }
        for p in [
            Polling { sqpoll: Some(SqPoll::Cpu(1)), poll: false },
            Polling { sqpoll: Some(SqPoll::AnyCpu), poll: true },
            Polling::default(),
        ] {
            let w = Wrap { polling: p };
            assert_eq!(toml::from_str::<Wrap>(&toml::to_string(&w).unwrap()).unwrap(), w);
            assert_eq!(serde_json::from_str::<Wrap>(&serde_json::to_string(&w).unwrap()).unwrap(), w);
        }
        assert_eq!(toml::from_str::<Wrap>("polling = { sqpoll = 0 }").unwrap().polling.sqpoll, Some(SqPoll::Cpu(0)));
        assert_eq!(toml::from_str::<Wrap>("polling = { sqpoll = \"any\" }").unwrap().polling.sqpoll, Some(SqPoll::AnyCpu));
    }
}
