//! An iSCSI session through libiscsi: login with a deadline (CHAP secret from
//! the URI or libiscsi's variables) and the LUN's capacity. The iSCSI engine
//! drives I/O on these sessions; the target layer opens one to size a LUN.

pub mod ffi;

use std::ffi::{c_int, CString};
use std::time::Duration;

use crate::transport::credentials;
use ffi::IscsiContext;

/// How long connecting and logging in may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one command may take before it fails with a timeout.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// The name lunmark logs in with (targets may restrict access by it).
const INITIATOR_NAME: &str = "iqn.2026-11.org.lunmark:initiator";

/// One logged-in iSCSI session to one LUN; logged out and freed on drop.
pub struct Session {
    pub(crate) ctx: *mut IscsiContext,
    pub(crate) lun: c_int,
    /// The URI without its CHAP secret, for messages.
    pub uri: String,
    pub block_size: u32,
    pub size: u64,
    /// The LUN is thin (READ CAPACITY 16's LBPME): it takes UNMAP.
    pub thin: bool,
}

// SAFETY: a libiscsi context has no thread affinity; lunmark uses each one from
// the single worker thread that owns it.
unsafe impl Send for Session {}

impl Session {
    /// Logs in to `uri` (CHAP secret from the URI or from libiscsi's
    /// LIBISCSI_CHAP_* variables) and reads the LUN's capacity.
    pub fn open(uri: &str) -> Result<Session, String> {
        let fail = |what: &str, why: String| Err(format!("{uri}: {what}: {}", credentials::scrub(&why)));
        let name = CString::new(INITIATOR_NAME).expect("no NUL in the initiator name");
        // SAFETY: name is a NUL-terminated string; the context is owned by the
        // Session below and destroyed once in Drop.
        let ctx = unsafe { ffi::iscsi_create_context(name.as_ptr()) };
        if ctx.is_null() {
            return fail("libiscsi could not create a context", "out of memory?".into());
        }
        let mut s = Session { ctx, lun: 0, uri: uri.to_string(), block_size: 512, size: 0, thin: false };
        let full = CString::new(credentials::reveal(uri)).map_err(|_| format!("{uri}: the URI contains a NUL byte"))?;
        // SAFETY: ctx is live, full is NUL-terminated; the returned url (or null)
        // is read here and freed with iscsi_destroy_url before leaving the block.
        let portal = unsafe {
            let url = ffi::iscsi_parse_full_url(ctx, full.as_ptr());
            if url.is_null() {
                return fail("not an iSCSI URI libiscsi accepts (iscsi://[user[%secret]@]host[:port]/IQN/LUN)", ffi::last_error(ctx));
            }
            let u = &*url;
            s.lun = u.lun;
            ffi::iscsi_set_targetname(ctx, u.target.as_ptr());
            ffi::iscsi_set_session_type(ctx, ffi::ISCSI_SESSION_NORMAL);
            if u.user[0] != 0 {
                ffi::iscsi_set_initiator_username_pwd(ctx, u.user.as_ptr(), u.passwd.as_ptr());
            }
            let portal = CString::from(std::ffi::CStr::from_ptr(u.portal.as_ptr()));
            ffi::iscsi_destroy_url(url);
            portal
        };
        // SAFETY: ctx is live; these only set fields of the context.
        unsafe {
            ffi::iscsi_set_noautoreconnect(ctx, 1);
            ffi::iscsi_set_timeout(ctx, CONNECT_TIMEOUT.as_secs() as c_int);
        }
        // SAFETY: ctx is live and portal NUL-terminated.
        if unsafe { ffi::iscsi_full_connect_sync(ctx, portal.as_ptr(), s.lun) } != 0 {
            return fail("cannot log in", ffi::last_error(ctx));
        }
        // SAFETY: ctx is logged in; the task returned (or null) is freed below and
        // the capacity is copied out of it before that.
        unsafe {
            let task = ffi::iscsi_readcapacity16_sync(ctx, s.lun);
            if task.is_null() || (*task).status != ffi::SCSI_STATUS_GOOD {
                let why = ffi::last_error(ctx);
                if !task.is_null() {
                    ffi::scsi_free_scsi_task(task);
                }
                return fail("READ CAPACITY(16) failed", why);
            }
            let cap = ffi::scsi_datain_unmarshall(task) as *const ffi::ReadCapacity16;
            if cap.is_null() {
                ffi::scsi_free_scsi_task(task);
                return fail("READ CAPACITY(16) failed", "the reply could not be decoded".into());
            }
            s.block_size = (*cap).block_length;
            s.thin = (*cap).lbpme != 0;
            s.size = ((*cap).returned_lba + 1) * (*cap).block_length as u64;
            ffi::scsi_free_scsi_task(task);
            ffi::iscsi_set_timeout(ctx, COMMAND_TIMEOUT.as_secs() as c_int);
        }
        Ok(s)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: the context was created by iscsi_create_context and is destroyed
        // once. Commands still in flight complete with SCSI_STATUS_CANCELLED in
        // their callbacks during this call, which is why IscsiEngine destroys its
        // sessions before the completion list and the buffers (see its Drop).
        unsafe { ffi::iscsi_destroy_context(self.ctx) };
    }
}
