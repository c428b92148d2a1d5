//! API keys kept to the process itself. The binary calls
//! [`take_from_environment`] first thing in `main`, while it is the only
//! thread and before any child exists: every secret variable (a name ending
//! in `_API_KEY`, which covers the `ANTHROPIC_API_KEY` and `OPENAI_API_KEY`
//! the settings read) is copied into this module, its value is overwritten
//! with zero bytes where the kernel put it (the initial environment block,
//! which is what `/proc/PID/environ` shows, even to root), it is removed from
//! the environment (so no child inherits it), and the process is made
//! non-dumpable (so other users' tools cannot attach or read its memory).
//!
//! Invariant: once taken, a secret is in neither the environment nor the
//! initial environment block; it is reachable only through [`get`].

use std::collections::HashMap;
use std::sync::OnceLock;

static TAKEN: OnceLock<HashMap<String, String>> = OnceLock::new();

/// Whether the variable `name` holds a secret kept from children and `/proc`.
pub fn is_secret(name: &str) -> bool {
    name.to_ascii_uppercase().ends_with("_API_KEY")
}

/// A secret taken from the environment at start-up, if it was set.
pub fn get(name: &str) -> Option<String> {
    TAKEN.get()?.get(name).cloned()
}

/// Takes the secret out of one `NAME=VALUE` entry of the environment block:
/// returns name and value and overwrites the value's bytes with zeros, or
/// leaves the entry alone and returns `None` when it holds no secret. A
/// value that is not UTF-8 is wiped but not kept (no setting could use it).
pub fn scrub_entry(entry: &mut [u8]) -> Option<(String, Option<String>)> {
    let eq = entry.iter().position(|&b| b == b'=')?;
    let (name, value) = entry.split_at_mut(eq);
    let name = std::str::from_utf8(name).ok().filter(|n| is_secret(n))?;
    let value = &mut value[1..];
    let kept = std::str::from_utf8(value).ok().map(str::to_string);
    value.fill(0);
    Some((name.to_string(), kept))
}

/// Takes every secret out of the environment (see the module docs). Call it
/// once, first thing in `main`.
///
/// # Safety
///
/// No other thread may exist, nor read or change the environment, while it
/// runs: it writes through the C `environ` pointers and removes variables.
pub unsafe fn take_from_environment() {
    unsafe extern "C" {
        static mut environ: *mut *mut std::ffi::c_char;
    }
    let mut taken = HashMap::new();
    let mut names = Vec::new();
    // SAFETY: the caller guarantees no other thread touches the environment;
    // `environ` is a NULL-terminated array of NUL-terminated strings, and
    // each entry is writable memory owned by the environment (the initial
    // block on the stack, as nothing has called setenv before `main`).
    unsafe {
        let mut p = environ;
        while !p.is_null() && !(*p).is_null() {
            let s = *p;
            let len = libc::strlen(s);
            let entry = std::slice::from_raw_parts_mut(s.cast::<u8>(), len);
            if let Some((name, value)) = scrub_entry(entry) {
                if let Some(value) = value {
                    taken.insert(name.clone(), value);
                }
                names.push(name);
            }
            p = p.add(1);
        }
        for name in &names {
            std::env::remove_var(name);
        }
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    let _ = TAKEN.set(taken);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_value_is_copied_then_zeroed_in_place() {
        let mut entry = *b"ANTHROPIC_API_KEY=sk-ant-123";
        let (name, value) = scrub_entry(&mut entry).unwrap_or_default();
        assert_eq!(name, "ANTHROPIC_API_KEY");
        assert_eq!(value.as_deref(), Some("sk-ant-123"));
        assert_eq!(&entry[..18], b"ANTHROPIC_API_KEY=");
        assert!(entry[18..].iter().all(|&b| b == 0));
    }

    #[test]
    fn other_variables_are_left_alone() {
        for raw in [
            &b"PATH=/usr/bin"[..],
            b"API_KEYS=x",
            b"OPENAI_API_KEYRING=x",
            b"no equals sign",
            b"WAYPOINT_MAX_TOKENS=9",
        ] {
            let mut entry = raw.to_vec();
            assert_eq!(scrub_entry(&mut entry), None);
            assert_eq!(entry, raw);
        }
    }

    #[test]
    fn every_api_key_counts_and_a_non_utf8_one_is_wiped_not_kept() {
        assert!(is_secret("OPENAI_API_KEY") && is_secret("gemini_api_key"));
        let mut entry = b"X_API_KEY=\xff\xfe".to_vec();
        assert_eq!(scrub_entry(&mut entry), Some(("X_API_KEY".into(), None)));
        assert_eq!(entry, b"X_API_KEY=\0\0");
        let mut empty = b"X_API_KEY=".to_vec();
        assert_eq!(
            scrub_entry(&mut empty),
            Some(("X_API_KEY".into(), Some(String::new())))
        );
    }
}
