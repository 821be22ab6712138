//! The part of libiscsi's C API (iscsi/iscsi.h and scsi-lowlevel.h, 1.19) the
//! iSCSI engine uses. Only what is called is declared; structs are mirrored only
//! as far as lunmark reads them.

use std::ffi::{c_char, c_int, c_void};

#[repr(C)]
pub struct IscsiContext {
    _private: [u8; 0],
}

/// `struct scsi_task`: lunmark only passes it back to libiscsi.
#[repr(C)]
pub struct ScsiTask {
    pub status: c_int,
}

/// `struct scsi_iovec`, laid out like POSIX `struct iovec`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ScsiIovec {
    pub iov_base: *mut c_void,
    pub iov_len: usize,
}

const MAX_STRING: usize = 256;

/// `struct iscsi_url` as iscsi_parse_full_url fills it.
#[repr(C)]
pub struct IscsiUrl {
    pub portal: [c_char; MAX_STRING],
    pub target: [c_char; MAX_STRING],
    pub user: [c_char; MAX_STRING],
    pub passwd: [c_char; MAX_STRING],
    pub target_user: [c_char; MAX_STRING],
    pub target_passwd: [c_char; MAX_STRING],
    pub lun: c_int,
    pub iscsi: *mut IscsiContext,
    pub transport: c_int,
}

/// The first fields of `struct scsi_readcapacity16`.
#[repr(C)]
pub struct ReadCapacity16 {
    pub returned_lba: u64,
    pub block_length: u32,
    pub p_type: u8,
    pub prot_en: u8,
    pub p_i_exp: u8,
    pub lbppbe: u8,
    /// Logical block provisioning management enabled: the LUN is thin and takes UNMAP.
    pub lbpme: u8,
}

/// `struct unmap_list`: one range of an UNMAP command.
#[repr(C)]
pub struct UnmapList {
    pub lba: u64,
    pub num: u32,
}

pub type CommandCallback = unsafe extern "C" fn(iscsi: *mut IscsiContext, status: c_int, command_data: *mut c_void, private: *mut c_void);

pub const SCSI_STATUS_GOOD: c_int = 0;
pub const SCSI_STATUS_CANCELLED: c_int = 0x0f00_0000;
pub const SCSI_STATUS_TIMEOUT: c_int = 0x0f00_0002;
pub const ISCSI_SESSION_NORMAL: c_int = 2;

extern "C" {
    pub fn iscsi_create_context(initiator_name: *const c_char) -> *mut IscsiContext;
    pub fn iscsi_destroy_context(iscsi: *mut IscsiContext) -> c_int;
    pub fn iscsi_get_error(iscsi: *mut IscsiContext) -> *const c_char;
    pub fn iscsi_parse_full_url(iscsi: *mut IscsiContext, url: *const c_char) -> *mut IscsiUrl;
    pub fn iscsi_destroy_url(url: *mut IscsiUrl);
    pub fn iscsi_set_targetname(iscsi: *mut IscsiContext, name: *const c_char) -> c_int;
    pub fn iscsi_set_session_type(iscsi: *mut IscsiContext, session_type: c_int) -> c_int;
    pub fn iscsi_set_initiator_username_pwd(iscsi: *mut IscsiContext, user: *const c_char, passwd: *const c_char) -> c_int;
    pub fn iscsi_set_noautoreconnect(iscsi: *mut IscsiContext, state: c_int);
    pub fn iscsi_set_timeout(iscsi: *mut IscsiContext, seconds: c_int) -> c_int;
    pub fn iscsi_full_connect_sync(iscsi: *mut IscsiContext, portal: *const c_char, lun: c_int) -> c_int;
    pub fn iscsi_readcapacity16_sync(iscsi: *mut IscsiContext, lun: c_int) -> *mut ScsiTask;
    pub fn scsi_datain_unmarshall(task: *mut ScsiTask) -> *mut c_void;
    pub fn scsi_free_scsi_task(task: *mut ScsiTask);
    pub fn iscsi_get_fd(iscsi: *mut IscsiContext) -> c_int;
    pub fn iscsi_which_events(iscsi: *mut IscsiContext) -> c_int;
    pub fn iscsi_service(iscsi: *mut IscsiContext, revents: c_int) -> c_int;
    #[allow(clippy::too_many_arguments)]
    pub fn iscsi_read16_iov_task(
        iscsi: *mut IscsiContext,
        lun: c_int,
        lba: u64,
        datalen: u32,
        blocksize: c_int,
        rdprotect: c_int,
        dpo: c_int,
        fua: c_int,
        fua_nv: c_int,
        group_number: c_int,
        cb: CommandCallback,
        private: *mut c_void,
        iov: *mut ScsiIovec,
        niov: c_int,
    ) -> *mut ScsiTask;
    pub fn iscsi_synchronizecache16_task(
        iscsi: *mut IscsiContext,
        lun: c_int,
        lba: u64,
        num_blocks: u32,
        syncnv: c_int,
        immed: c_int,
        cb: CommandCallback,
        private: *mut c_void,
    ) -> *mut ScsiTask;
    #[allow(clippy::too_many_arguments)]
    pub fn iscsi_unmap_task(
        iscsi: *mut IscsiContext,
        lun: c_int,
        anchor: c_int,
        group: c_int,
        list: *mut UnmapList,
        list_len: c_int,
        cb: CommandCallback,
        private: *mut c_void,
    ) -> *mut ScsiTask;
    #[allow(clippy::too_many_arguments)]
    pub fn iscsi_write16_iov_task(
        iscsi: *mut IscsiContext,
        lun: c_int,
        lba: u64,
        data: *mut u8,
        datalen: u32,
        blocksize: c_int,
        wrprotect: c_int,
        dpo: c_int,
        fua: c_int,
        fua_nv: c_int,
        group_number: c_int,
        cb: CommandCallback,
        private: *mut c_void,
        iov: *mut ScsiIovec,
        niov: c_int,
    ) -> *mut ScsiTask;
}

/// Copies a NUL-terminated C string (null: empty).
pub(crate) fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: p is non-null and, as every caller passes, points at a
    // NUL-terminated string that libiscsi owns for at least this call.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The context's last error message.
pub(crate) fn last_error(iscsi: *mut IscsiContext) -> String {
    // SAFETY: iscsi is a live context; the returned string is owned by it and
    // copied at once.
    let text = c_text(unsafe { iscsi_get_error(iscsi) });
    if text.is_empty() {
        "unknown libiscsi error".into()
    } else {
        text
    }
}
