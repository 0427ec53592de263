//! The per-user key that signs resumable checkpoints: 32 random bytes in
//! `transcript.key` in the user's config folder (created on first use, only
//! the user may read it). A checkpoint carries an HMAC-SHA256 of its text
//! under this key; only checkpoints with a valid one are resumed.
//!
//! What must stay true: the key never leaves this file's functions except as
//! a MAC; a key file that is not exactly 64 hex digits is not used (and not
//! overwritten: the user may want to look at it); comparing MACs takes the
//! same time whatever the input (`hmac`'s `verify_slice`).

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::Write;
use std::path::{Path, PathBuf};

type HmacSha256 = Hmac<Sha256>;

/// The key file's name in the user's config folder.
pub const KEY_FILE: &str = "transcript.key";

/// A loaded signing key, bound to one workspace: a checkpoint signed for
/// one workspace does not verify in another (a shared `--log-dir` holds
/// sessions of several), so it is never listed or resumed there.
#[derive(Clone)]
pub struct SigningKey([u8; 32], Vec<u8>);

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(..)")
    }
}

/// Where this user's key lives.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "stepwise").map(|d| d.config_dir().join(KEY_FILE))
}

impl SigningKey {
    /// This user's key, created when there is none yet.
    pub fn for_user() -> Result<SigningKey, String> {
        let path = default_path().ok_or("no config folder for this user (is HOME set?)")?;
        Self::load_or_create(&path)
    }

    /// This user's key, bound to the workspace at `root` (its real path).
    pub fn for_workspace(root: &Path) -> Result<SigningKey, String> {
        Ok(Self::for_user()?.bound_to(root))
    }

    /// The same key, bound to the workspace at `root` instead.
    pub fn bound_to(mut self, root: &Path) -> SigningKey {
        let real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        self.1 = real.as_os_str().as_encoded_bytes().to_vec();
        self
    }

    /// The key in `path`, created (mode 0600) when the file does not exist.
    pub fn load_or_create(path: &Path) -> Result<SigningKey, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(text.trim())
                .ok_or_else(|| format!("{} is not a stepwise transcript key", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::create(path),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    fn parse(hex_text: &str) -> Option<SigningKey> {
        let bytes = hex::decode(hex_text).ok()?;
        Some(SigningKey(bytes.try_into().ok()?, Vec::new()))
    }

    fn create(path: &Path) -> Result<SigningKey, String> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for a key: {e}"))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path);
        match opened {
            Ok(mut file) => {
                writeln!(file, "{}", hex::encode(bytes))
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Ok(SigningKey(bytes, Vec::new()))
            }
            // Another stepwise made it first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Self::load_or_create(path),
            Err(e) => Err(format!("cannot create {}: {e}", path.display())),
        }
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC takes a key of any length: this cannot fail.
        let mut mac =
            <HmacSha256 as Mac>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!());
        // The workspace first, length-prefixed, so no text can pose as it.
        mac.update(&(self.1.len() as u64).to_le_bytes());
        mac.update(&self.1);
        mac
    }

    /// The MAC of `text`, in hex.
    pub fn sign(&self, text: &str) -> String {
        let mut mac = self.mac();
        mac.update(text.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// Whether `mac_hex` is the MAC of `text` under this key.
    pub fn verify(&self, text: &str, mac_hex: &str) -> bool {
        let Ok(expected) = hex::decode(mac_hex) else {
            return false;
        };
        let mut mac = self.mac();
        mac.update(text.as_bytes());
        mac.verify_slice(&expected).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_created_private_once_and_signs_what_it_verifies() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join(KEY_FILE);
        let key = SigningKey::load_or_create(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        let again = SigningKey::load_or_create(&path).unwrap();
        let mac = key.sign("state");
        assert!(again.verify("state", &mac));
        assert!(!again.verify("state!", &mac));
        assert!(!again.verify("state", "zz"));
        let other = SigningKey::load_or_create(&dir.path().join("other")).unwrap();
        assert!(!other.verify("state", &mac), "another user's key");
        assert_eq!(format!("{key:?}"), "SigningKey(..)");
    }

    #[test]
    fn a_damaged_key_file_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        std::fs::write(&path, "not hex").unwrap();
        assert!(SigningKey::load_or_create(&path).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not hex");
    }
}
