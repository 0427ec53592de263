//! The sandbox state of a run: a pure function ([`State::of`]) of what the
//! system offers ([`Offered`]) and whether the policy allows the network, so
//! that each combination (Landlock ABI 0–7, namespaces or not, a seccomp
//! filter or not) can be checked without that kernel.
//!
//! What must stay true: a part counts as in force only if the run really
//! gets it: files only from Landlock ABI 3 (before it, `truncate()` is not
//! checked, so a test could empty any file it can read); the workspace
//! protections (`.git` read-only, root secrets hidden, private `/dev/shm`)
//! only with a mount namespace *and* Landlock (which stops a test from
//! unmounting them); the label never says `sandboxed` while a part is missing.

/// What this system lets a run have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offered {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: i32,
    /// A network and mount namespace can be made (with a user namespace
    /// where unprivileged).
    pub namespaces: bool,
    /// The seccomp filter refusing Unix sockets can be installed.
    pub seccomp: bool,
    /// Resource limits and the subreaper.
    pub limits: bool,
}

/// The first Landlock ABI that checks `truncate()`.
pub const FILES_ABI: i32 = 3;

/// What confinement a run gets on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// Writes outside the allowed folders and reads of hidden paths are
    /// refused (Landlock ABI 3 or later).
    pub files: bool,
    /// The Landlock ABI in force (0: none), for what is missing.
    pub landlock_abi: i32,
    /// The network is cut off (a namespace with only loopback, or at least TCP refused).
    pub network: Network,
    /// `socket(AF_UNIX)` is refused (the user's D-Bus, `docker.sock`, `ssh-agent`).
    pub unix_sockets: bool,
    /// `.git` and `.stepwise` are read-only, the root's `.env` files are
    /// hidden, `/dev/shm` is private.
    pub workspace: bool,
    /// Resource limits and the subreaper apply.
    pub limits: bool,
    /// The sandbox is off by configuration.
    pub off: bool,
}

/// How the network is cut off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// A fresh network namespace with only loopback.
    Namespace,
    /// Landlock refuses every TCP connect and bind (UDP still works).
    TcpOnly,
    /// Not cut off: the configuration allows the network.
    Allowed,
    /// Not cut off: the kernel offers no way to.
    Open,
}

impl State {
    /// The sandbox is off by configuration.
    pub fn off() -> State {
        State {
            files: false,
            landlock_abi: 0,
            network: Network::Open,
            unix_sockets: false,
            workspace: false,
            limits: false,
            off: true,
        }
    }

    /// The state a run gets from `offered`, the network allowed or not.
    pub fn of(offered: &Offered, network_allowed: bool) -> State {
        let abi = offered.landlock_abi.max(0);
        let network = if network_allowed {
            Network::Allowed
        } else if offered.namespaces {
            Network::Namespace
        } else if abi >= 4 {
            Network::TcpOnly
        } else {
            Network::Open
        };
        State {
            files: abi >= FILES_ABI,
            landlock_abi: abi,
            network,
            unix_sockets: offered.seccomp,
            workspace: offered.namespaces && abi >= 1,
            limits: offered.limits,
            off: false,
        }
    }

    /// The state in a word or two: `sandboxed`, `sandbox: no network
    /// isolation`, `not sandboxed`; the first missing part names it.
    pub fn label(&self) -> String {
        if self.off || self.landlock_abi == 0 {
            return "not sandboxed".into();
        }
        let partial = match self.network {
            _ if !self.files => Some("files partly confined"),
            Network::TcpOnly => Some("only TCP blocked"),
            Network::Open => Some("no network isolation"),
            _ if !self.unix_sockets => Some("Unix sockets open"),
            _ if !self.workspace => Some(".git writable"),
            _ => None,
        };
        match (partial, self.network) {
            (Some(what), _) => format!("sandbox: {what}"),
            (None, Network::Allowed) => "sandboxed (network allowed)".into(),
            (None, _) => "sandboxed".into(),
        }
    }

    /// Everything the policy asks for is in force.
    pub fn complete(&self) -> bool {
        self.missing().is_empty()
    }

    /// What is missing, for `require`'s refusal and `auto`'s note.
    pub fn missing(&self) -> Vec<String> {
        if self.off {
            return vec!["the sandbox is off ([sandbox] mode = \"off\")".into()];
        }
        let mut out = Vec::new();
        match self.landlock_abi {
            0 => out.push("file isolation (Landlock is not available on this system)".into()),
            abi if abi < FILES_ABI => out.push(format!(
                "full file isolation (Landlock ABI {abi} does not check truncate(), which needs ABI 3, Linux 6.2)"
            )),
            _ => {}
        }
        match self.network {
            Network::TcpOnly => out.push("a network namespace (only TCP is blocked)".into()),
            Network::Open => out.push("network isolation".into()),
            Network::Namespace | Network::Allowed => {}
        }
        if !self.unix_sockets {
            out.push("Unix socket isolation (no seccomp filter on this system)".into());
        }
        if !self.workspace {
            out.push(
                "a mount namespace (.git and .stepwise stay writable, the root's .env readable)"
                    .into(),
            );
        }
        if !self.limits {
            out.push("resource limits and the subreaper".into());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(abi: i32) -> Offered {
        Offered {
            landlock_abi: abi,
            namespaces: true,
            seccomp: true,
            limits: true,
        }
    }

    #[test]
    fn files_count_as_confined_only_from_abi_3() {
        let labels: Vec<String> = (0..=7)
            .map(|abi| State::of(&offered(abi), false).label())
            .collect();
        assert_eq!(labels[0], "not sandboxed");
        for abi in [1, 2] {
            let state = State::of(&offered(abi), false);
            assert!(!state.files && !state.complete(), "ABI {abi}");
            assert_eq!(labels[abi as usize], "sandbox: files partly confined");
            let missing = state.missing().join("; ");
            assert!(
                missing.contains(&format!("ABI {abi} does not check truncate()")),
                "{missing}"
            );
        }
        for abi in 3..=7 {
            let state = State::of(&offered(abi), false);
            assert!(
                state.files && state.complete(),
                "ABI {abi}: {:?}",
                state.missing()
            );
            assert_eq!(labels[abi as usize], "sandboxed");
        }
    }

    #[test]
    fn without_namespaces_the_network_falls_back_by_abi() {
        let bare = |abi| Offered {
            namespaces: false,
            ..offered(abi)
        };
        let state = State::of(&bare(3), false);
        assert_eq!(state.network, Network::Open);
        assert_eq!(state.label(), "sandbox: no network isolation");
        assert!(!state.workspace);
        let state = State::of(&bare(4), false);
        assert_eq!(state.network, Network::TcpOnly);
        assert_eq!(state.label(), "sandbox: only TCP blocked");
        let missing = state.missing().join("; ");
        assert!(missing.contains("mount namespace"), "{missing}");
        let allowed = State::of(&bare(7), true);
        assert_eq!(allowed.network, Network::Allowed);
        assert_eq!(allowed.label(), "sandbox: .git writable");
    }

    #[test]
    fn a_missing_filter_or_limit_is_named() {
        let state = State::of(
            &Offered {
                seccomp: false,
                ..offered(7)
            },
            false,
        );
        assert_eq!(state.label(), "sandbox: Unix sockets open");
        assert!(!state.complete());
        let state = State::of(
            &Offered {
                limits: false,
                ..offered(7)
            },
            true,
        );
        assert_eq!(state.missing(), ["resource limits and the subreaper"]);
        assert_eq!(State::off().label(), "not sandboxed");
        assert!(!State::off().complete());
    }
}
