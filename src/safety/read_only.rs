//! Plan mode's sandbox: the session's, with nothing of the user's
//! writable. Commands read and run everything they could, and write only
//! the device files and the separate world's own private `/tmp` and
//! `/dev/shm` (emptied at each command); not the workspace, the temp
//! folder, cargo's caches or `sandbox.writable`. Where the workspace lies
//! in a temp folder it comes back inside the private one, which then is
//! not writable either. Invariant: what the read-only sandbox lets a
//! command write is never a file the user has outside it.

use std::path::PathBuf;
use std::sync::Arc;

use super::sandbox::{Confinement, DEVICE_FILES, Prepared, Sandbox};
use super::world::World;

impl Sandbox {
    /// This sandbox with nothing of the user's writable (plan mode): no
    /// workspace, temp folder, cache or `sandbox.writable` folder; only
    /// the device files and, in the separate world, the command's own
    /// private `/tmp` and `/dev/shm` (not the private temp folder the
    /// workspace lies in). Reads, the network and sockets as in this one.
    pub fn read_only(&self) -> Sandbox {
        let world = self.world.clone().map(|mut places| {
            // The workspace stays the command's folder, the rest unseen.
            places.writable.truncate(1);
            places
        });
        Sandbox {
            writable: DEVICE_FILES.iter().map(PathBuf::from).collect(),
            left_out: Vec::new(),
            network: self.network,
            world,
            sockets: self.sockets.clone(),
            prepared: Prepared::default(),
            prepared_read_only: Prepared::default(),
            prepared_narrowed: Default::default(),
            nothing_writable: true,
            narrowed: false,
        }
    }

    /// The session's confinement: plan mode's ([`Self::read_only`]) when
    /// `read_only`, else this one; each prepared at its first use.
    pub fn confinement_for(&self, read_only: bool) -> Result<Arc<Confinement>, String> {
        if !read_only {
            return self.confinement();
        }
        self.prepared_read_only
            .get_or_prepare(|| self.read_only().prepare())
    }

    /// The world's private folders commands may write: all of them,
    /// except, with nothing writable or narrowed to an item's files, a
    /// temp folder's that the workspace comes back into (writing beneath
    /// it would write the whole workspace).
    pub(super) fn private_writable<'w>(&self, world: &'w World) -> Vec<&'w PathBuf> {
        let places = self.world.as_ref();
        let ws = places.and_then(|p| p.writable.first());
        // The world's private folders stand for `places.hidden`, in order.
        let holds_ws = |i: usize| {
            let hidden = places.and_then(|p| p.hidden.get(i));
            hidden.is_some_and(|h| ws.is_some_and(|ws| ws.starts_with(h)))
        };
        world
            .private_folders()
            .iter()
            .enumerate()
            .filter(|(i, _)| !((self.nothing_writable || self.narrowed) && holds_ws(*i)))
            .map(|(_, p)| p)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn nothing_of_the_user_s_is_writable() {
        let ws = tempfile::tempdir().unwrap();
        let extra = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::for_workspace(ws.path(), &[extra.path().to_path_buf()], false);
        assert!(sandbox.allows_write(ws.path()));
        let read_only = sandbox.read_only();
        for place in [ws.path(), extra.path(), &std::env::temp_dir()] {
            assert!(!read_only.allows_write(place), "{}", place.display());
        }
        assert!(read_only.allows_write(Path::new("/dev/null")));
        assert!(read_only.nothing_writable && !sandbox.nothing_writable);
        assert_eq!(read_only.network, sandbox.network);
        // The workspace stays the command's folder in the world, alone.
        let places = read_only.world.as_ref().unwrap();
        assert_eq!(places.writable.len(), 1);
        assert_eq!(places.writable[0], ws.path().canonicalize().unwrap());
    }
}
