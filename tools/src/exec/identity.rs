//! Who runs the shell, for `whoami`: the process's effective user and its groups, read from
//! the system's user and group databases (NSS, through libc), as Hadoop's
//! `ShellBasedUnixGroupsMapping` reads them with `id -gn` and `id -Gn`.

use std::ffi::{CStr, CString};

/// Largest buffer the `get*_r` lookups may grow to, in bytes (they start at 16 KiB and double
/// while libc answers `ERANGE`).
const MAX_LOOKUP_BUFFER_BYTES: usize = 1 << 20;

/// Most groups read for one user (Linux's `NGROUPS_MAX`).
const MAX_GROUPS: usize = 65_536;

/// A user and its groups, as `whoami` prints them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserIdentity {
    /// The user name (the numeric id when the user database has no entry).
    pub name: String,
    /// Group names, the primary group first, each once (numeric ids for unnamed groups).
    pub groups: Vec<String>,
}

impl UserIdentity {
    /// A fixed identity (tests use it so that transcripts do not depend on the machine).
    pub fn new(name: &str, groups: &[&str]) -> UserIdentity {
        UserIdentity {
            name: name.to_owned(),
            groups: groups.iter().map(|group| (*group).to_owned()).collect(),
        }
    }

    /// The effective user of this process and its groups. Falls back to `$USER` (then the
    /// numeric uid) for the name and to the primary group alone when a lookup fails.
    pub fn current() -> UserIdentity {
        // SAFETY: geteuid and getegid take no arguments, cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let entry = user_entry(uid);
        let name = entry
            .as_ref()
            .map(|(name, _)| name.clone())
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| uid.to_string());
        let primary = entry.as_ref().map_or(gid, |(_, gid)| *gid);
        let ids = group_ids(&name, primary).unwrap_or_else(|| vec![primary]);
        let mut groups: Vec<String> = Vec::with_capacity(ids.len());
        for id in std::iter::once(primary).chain(ids) {
            let group = group_name(id).unwrap_or_else(|| id.to_string());
            if !groups.contains(&group) {
                groups.push(group);
            }
        }
        UserIdentity { name, groups }
    }

    /// What `whoami` prints: `name (auth:SIMPLE)`, then `    groups: a, b` when there are
    /// groups (Hadoop's `User.toString` for simple authentication, HBase's layout).
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!("{} (auth:SIMPLE)", self.name)];
        if !self.groups.is_empty() {
            lines.push(format!("    groups: {}", self.groups.join(", ")));
        }
        lines
    }
}

/// Calls a reentrant libc lookup with a buffer that grows while it answers `ERANGE`.
/// `lookup(buffer)` returns libc's status code and whether an entry was found.
fn with_growing_buffer<T>(
    mut lookup: impl FnMut(&mut [libc::c_char]) -> (i32, Option<T>),
) -> Option<T> {
    let mut size = 16 * 1024;
    loop {
        let mut buffer = vec![0 as libc::c_char; size];
        match lookup(&mut buffer) {
            (libc::ERANGE, _) if size < MAX_LOOKUP_BUFFER_BYTES => size *= 2,
            (0, found) => return found,
            _ => return None,
        }
    }
}

/// The name and primary group of user `uid`.
fn user_entry(uid: libc::uid_t) -> Option<(String, libc::gid_t)> {
    with_growing_buffer(|buffer| {
        // SAFETY: passwd is a plain C struct for which all-zero bytes are a valid value.
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call: `entry` and `result` are live locals,
        // `buffer` is a live slice of the length passed; libc writes only within them.
        let status = unsafe {
            libc::getpwuid_r(
                uid,
                &mut entry,
                buffer.as_mut_ptr(),
                buffer.len(),
                &mut result,
            )
        };
        if status != 0 || result.is_null() || entry.pw_name.is_null() {
            return (status, None);
        }
        // SAFETY: on success pw_name points to a NUL-terminated string inside `buffer`,
        // which outlives this borrow.
        let name = unsafe { CStr::from_ptr(entry.pw_name) }
            .to_string_lossy()
            .into_owned();
        (0, Some((name, entry.pw_gid)))
    })
}

/// The ids of every group of user `name` (its primary group `primary` included).
fn group_ids(name: &str, primary: libc::gid_t) -> Option<Vec<libc::gid_t>> {
    let user = CString::new(name).ok()?;
    let mut count: libc::c_int = 64;
    loop {
        let capacity = usize::try_from(count).ok()?.clamp(1, MAX_GROUPS);
        let mut ids: Vec<libc::gid_t> = vec![0; capacity];
        let mut found = libc::c_int::try_from(capacity).ok()?;
        // SAFETY: `user` is a NUL-terminated string, `ids` holds `found` writable entries and
        // `found` is a live local; getgrouplist writes at most `found` ids.
        let status =
            unsafe { libc::getgrouplist(user.as_ptr(), primary, ids.as_mut_ptr(), &mut found) };
        let found_count = usize::try_from(found).ok()?;
        if status >= 0 {
            ids.truncate(found_count.min(capacity));
            return Some(ids);
        }
        // Too small: `found` now holds the count needed.
        if found_count <= capacity || capacity >= MAX_GROUPS {
            return None;
        }
        count = found;
    }
}

/// The name of group `gid`.
fn group_name(gid: libc::gid_t) -> Option<String> {
    with_growing_buffer(|buffer| {
        // SAFETY: group is a plain C struct for which all-zero bytes are a valid value.
        let mut entry: libc::group = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::group = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call: `entry` and `result` are live locals,
        // `buffer` is a live slice of the length passed; libc writes only within them.
        let status = unsafe {
            libc::getgrgid_r(
                gid,
                &mut entry,
                buffer.as_mut_ptr(),
                buffer.len(),
                &mut result,
            )
        };
        if status != 0 || result.is_null() || entry.gr_name.is_null() {
            return (status, None);
        }
        // SAFETY: on success gr_name points to a NUL-terminated string inside `buffer`,
        // which outlives this borrow.
        let name = unsafe { CStr::from_ptr(entry.gr_name) }
            .to_string_lossy()
            .into_owned();
        (0, Some(name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_user_has_a_name_and_its_primary_group_first() {
        let me = UserIdentity::current();
        assert!(!me.name.is_empty());
        assert!(!me.groups.is_empty());
        // SAFETY: geteuid and getegid take no arguments and cannot fail.
        let (uid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let gid = user_entry(uid).map_or(egid, |(_, gid)| gid);
        let primary = group_name(gid).unwrap_or_else(|| gid.to_string());
        assert_eq!(me.groups.first(), Some(&primary));
        let mut unique = me.groups.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), me.groups.len());
    }

    #[test]
    fn lines_follow_hbase() {
        assert_eq!(
            UserIdentity::new("ann", &["staff", "dev"]).lines(),
            ["ann (auth:SIMPLE)", "    groups: staff, dev"]
        );
        assert_eq!(UserIdentity::new("bob", &[]).lines(), ["bob (auth:SIMPLE)"]);
    }
}
