//! What makes a block device unsafe to write: a mount, a holder (LVM, md, dm),
//! partitions, or an on-disk signature (partition table, filesystem, swap, RAID,
//! LVM, LUKS). Checked before any write; reads never need this.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

/// Signatures looked for, as (what, byte offset, magic bytes). The list covers
/// what Linux installs commonly leave on a disk; `blkid -p` knows more.
const SIGNATURES: &[(&str, u64, &[u8])] = &[
    ("GPT partition table", 512, b"EFI PART"),
    ("GPT partition table (4K sectors)", 4096, b"EFI PART"),
    ("ext2/3/4 filesystem", 1080, &[0x53, 0xEF]),
    ("XFS filesystem", 0, b"XFSB"),
    ("Btrfs filesystem", 65600, b"_BHRfS_M"),
    ("swap space", 4086, b"SWAPSPACE2"),
    ("LUKS encrypted volume", 0, b"LUKS\xba\xbe"),
    ("LVM2 physical volume", 536, b"LVM2 001"),
    ("Linux RAID (md 1.2) member", 4096, &[0xfc, 0x4e, 0x2b, 0xa9]),
    ("NTFS filesystem", 3, b"NTFS    "),
    ("FAT32 filesystem", 82, b"FAT32   "),
    ("ISO9660 filesystem", 32769, b"CD001"),
    ("F2FS filesystem", 1024, &[0x10, 0x20, 0xF5, 0xF2]),
    ("bcache device", 4120, &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca]),
];

/// Reasons a device is in use or holds data, each a sentence for the error message.
pub fn findings(device: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(meta) = std::fs::metadata(device) else { return found };
    let (major, minor) = (libc::major(meta.rdev()), libc::minor(meta.rdev()));
    let sys = format!("/sys/dev/block/{major}:{minor}");

    let mut devnums = vec![(major, minor)];
    if let Ok(entries) = std::fs::read_dir(&sys) {
        for e in entries.flatten() {
            let dev = std::fs::read_to_string(e.path().join("dev")).unwrap_or_default();
            if e.path().join("partition").exists() {
                found.push(format!("it has partition {}", e.file_name().to_string_lossy()));
                if let Some((a, b)) = dev.trim().split_once(':') {
                    devnums.push((a.parse().unwrap_or(0), b.parse().unwrap_or(0)));
                }
            }
        }
    }
    if let Ok(holders) = std::fs::read_dir(format!("{sys}/holders")) {
        for h in holders.flatten() {
            found.push(format!("it is held by {} (device mapper, LVM or md RAID)", h.file_name().to_string_lossy()));
        }
    }
    if let Ok(mountinfo) = std::fs::read_to_string("/proc/self/mountinfo") {
        for line in mountinfo.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            if fields.len() > 4 {
                if let Some((a, b)) = fields[2].split_once(':') {
                    let num = (a.parse().unwrap_or(u32::MAX), b.parse().unwrap_or(u32::MAX));
                    if devnums.contains(&num) {
                        found.push(format!("it is mounted on {}", fields[4]));
                    }
                }
            }
        }
    }
    if let Ok(swaps) = std::fs::read_to_string("/proc/swaps") {
        let canon = std::fs::canonicalize(device).unwrap_or(device.to_path_buf());
        if swaps.lines().skip(1).any(|l| l.split_whitespace().next() == Some(&*canon.to_string_lossy())) {
            found.push("it is in use as swap".into());
        }
    }
    if let Ok(file) = File::open(device) {
        found.extend(signatures(&file));
    }
    found
}

/// On-disk signatures found at the start of a device or file.
pub fn signatures(file: &File) -> Vec<String> {
    let mut head = vec![0u8; 70 * 1024];
    let n = read_up_to(file, &mut head);
    let head = &head[..n];
    let mut found = Vec::new();
    for (what, offset, magic) in SIGNATURES {
        let at = *offset as usize;
        if head.len() >= at + magic.len() && &head[at..at + magic.len()] == *magic {
            found.push(format!("it holds a {what} signature at byte {offset}"));
        }
    }
    // An MBR (or a FAT boot sector) ends its first sector with 55 AA.
    if head.len() >= 512 && head[510] == 0x55 && head[511] == 0xAA && !found.iter().any(|f| f.contains("GPT")) {
        found.push("it holds an MBR partition table or boot sector (55 AA at byte 510)".into());
    }
    found
}

fn read_up_to(file: &File, buf: &mut [u8]) -> usize {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], done as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => done += n,
        }
    }
    done
}
