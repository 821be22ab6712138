//! `{rank}`, `{host}` and `{local_rank}` in target URIs, replaced by each rank
//! before its targets are parsed (`-t /dev/shm/lun{rank}` gives every rank its
//! own file). A run without MPI is rank 0 of one on this host.

/// Where a process sits in the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// Its rank in the job (0 without MPI).
    pub rank: u32,
    /// Its index among the ranks on its host (0 without MPI).
    pub local_rank: u32,
    /// The host name it runs on.
    pub host: String,
}

/// The placeholders a target URI may hold.
pub const NAMES: [&str; 3] = ["rank", "host", "local_rank"];

/// `uri` with every placeholder replaced; an unknown `{name}` or an unclosed
/// brace is refused, naming what is allowed.
pub fn expand(uri: &str, place: &Place) -> Result<String, String> {
    let mut out = String::with_capacity(uri.len());
    let mut rest = uri;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Err(format!("target {uri}: a '{{' without its '}}'; placeholders are {{rank}}, {{host}} and {{local_rank}}"));
        };
        match &after[..close] {
            "rank" => out.push_str(&place.rank.to_string()),
            "local_rank" => out.push_str(&place.local_rank.to_string()),
            "host" => out.push_str(&place.host),
            other => {
                return Err(format!(
                    "target {uri}: unknown placeholder {{{other}}}; placeholders are {{rank}}, {{host}} and {{local_rank}}"
                ))
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Every URI of `uris` expanded (the `-t` targets, or a profile's own `targets`);
/// `whose` names where they came from in an error ("the profile's targets").
pub fn expand_all(uris: &[String], place: &Place, whose: &str) -> Result<Vec<String>, String> {
    uris.iter().map(|t| expand(t, place).map_err(|e| format!("{whose}: {e}"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_and_unknown_ones_refused() {
        let place = Place { rank: 3, local_rank: 1, host: "node7".into() };
        assert_eq!(expand("/dev/shm/lun{rank}", &place).unwrap(), "/dev/shm/lun3");
        assert_eq!(expand("iscsi://array/iqn.x:t/{local_rank}", &place).unwrap(), "iscsi://array/iqn.x:t/1");
        assert_eq!(expand("/data/{host}-{rank}.dat", &place).unwrap(), "/data/node7-3.dat");
        assert_eq!(expand("mem:1g", &place).unwrap(), "mem:1g");
        assert!(expand("/x/{ranks}", &place).unwrap_err().contains("unknown placeholder {ranks}"));
        assert!(expand("/x/{rank", &place).unwrap_err().contains("without its"));
    }

    #[test]
    fn a_list_is_expanded_whole_and_its_errors_say_whose_it_is() {
        let place = Place { rank: 2, local_rank: 0, host: "n1".into() };
        let uris = vec!["/d/a{rank}".to_string(), "mem:1m".to_string()];
        assert_eq!(expand_all(&uris, &place, "the profile's targets").unwrap(), vec!["/d/a2", "mem:1m"]);
        let bad = vec!["/d/{node}".to_string()];
        let err = expand_all(&bad, &place, "the profile's targets").unwrap_err();
        assert!(err.starts_with("the profile's targets: target /d/{node}: unknown placeholder {node}"), "{err}");
    }
}
