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
//! unmounting them); the label never says `sandboxed` while a part is
//! missing, nor at all while the tests would run as root with real
//! capabilities (root with no namespace at all; root with namespaces but
//! no user namespace drops every capability in the run, see `linux`).

/// What this system lets a run have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offered {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: i32,
    /// A network and mount namespace can be made (with a user namespace
    /// where unprivileged).
    pub namespaces: bool,
    /// The namespaces come with a user namespace (capabilities only inside it).
    pub user_ns: bool,
    /// PID, IPC and UTS namespaces, with the run's own `/proc`.
    pub pid_ns: bool,
    /// Mounts can be made read-only as a whole (`mount_setattr`, Linux 5.12).
    pub read_only_view: bool,
    /// stepwise runs as root.
    pub root: bool,
    /// The seccomp filter refusing Unix sockets can be installed.
    pub seccomp: bool,
    /// Resource limits and the subreaper.
    pub limits: bool,
    /// stepwise can make a control group per run (see `cgroup`).
    pub run_groups: bool,
    /// An overlay can be mounted over the workspace in the run's namespace
    /// (Linux 5.11 in a user namespace), so every write lands in a layer.
    pub layer: bool,
    /// That layer and the run's temporary folders can be one tmpfs of the
    /// disk budget (an overlay's upper folder on tmpfs: Linux 6.6), so the
    /// kernel holds the budget as the run writes.
    pub disk_held: bool,
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
    /// Memory and processes are bounded for the whole run (a control
    /// group), not only per process.
    pub whole_run: bool,
    /// The run has its own PID, IPC and UTS namespaces and `/proc`: every
    /// process of it dies with it, and it can see, signal or limit nothing
    /// outside.
    pub processes: bool,
    /// Everything outside the writable folders is a read-only view, so
    /// `chmod`, `utime` and xattrs fail there too (Landlock does not check them).
    pub metadata: bool,
    /// The tests would run as root with real capabilities (root, and no
    /// namespace to drop them in): never `sandboxed`.
    pub real_root: bool,
    /// Every file the run writes, renames or deletes in the workspace lands
    /// in a layer stepwise reads afterwards (see `tools::layer`); without
    /// it, what a run changed is reconstructed by a walk with limits.
    pub layer: bool,
    /// The kernel holds the disk budget for everything the run writes but
    /// its build outputs (see `linux::overlay`); without it, the disk use
    /// is read every 50 ms.
    pub disk_held: bool,
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
            whole_run: false,
            processes: false,
            metadata: false,
            real_root: false,
            layer: false,
            disk_held: false,
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
        let layer = offered.namespaces && offered.layer && abi >= 1;
        State {
            files: abi >= FILES_ABI,
            landlock_abi: abi,
            network,
            unix_sockets: offered.seccomp,
            workspace: offered.namespaces && abi >= 1,
            limits: offered.limits,
            whole_run: offered.limits && offered.run_groups,
            processes: offered.namespaces && offered.pid_ns && abi >= 1,
            metadata: offered.namespaces && offered.read_only_view && abi >= 1,
            real_root: offered.root && !offered.user_ns && !offered.namespaces,
            layer,
            disk_held: layer && offered.disk_held,
            off: false,
        }
    }

    /// The state in a word or two: `sandboxed`, `sandbox: no network
    /// isolation`, `not sandboxed`; the first missing part names it.
    pub fn label(&self) -> String {
        if self.off || self.landlock_abi == 0 {
            return "not sandboxed".into();
        }
        if self.real_root {
            return "not sandboxed: root without user namespaces".into();
        }
        let partial = match self.network {
            _ if !self.files => Some("files partly confined"),
            Network::TcpOnly => Some("only TCP blocked"),
            Network::Open => Some("no network isolation"),
            _ if !self.unix_sockets => Some("Unix sockets open"),
            _ if !self.workspace => Some(".git writable"),
            _ if !self.processes => Some("other processes reachable"),
            _ if !self.metadata => Some("metadata writable outside"),
            _ if !self.layer => Some("no workspace layer"),
            _ => None,
        };
        match (partial, self.network) {
            (Some(what), _) => format!("sandbox: {what}"),
            (None, Network::Allowed) => "sandboxed (network allowed)".into(),
            (None, _) => "sandboxed".into(),
        }
    }

    /// Which limits bound the run as a whole, said before the first run
    /// (where memory and processes are bounded per process only, it says so).
    pub fn limits_line(&self) -> String {
        if self.off {
            return "none (the sandbox is off)".into();
        }
        if !self.limits {
            return match cfg!(unix) {
                true => "disk for the whole run only (no other limits on this system)".into(),
                false => "none on this system".into(),
            };
        }
        let line = if self.whole_run {
            "memory, processes and disk for the whole run".to_string()
        } else {
            "disk for the whole run; memory and processes per process only (no control group here)"
                .to_string()
        };
        match self.disk_held {
            true => line,
            false => format!(
                "{line}; disk use read every 50 ms (a run can write past it meanwhile: no tmpfs layer here, Linux 6.6)"
            ),
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
        if self.real_root {
            out.push(
                "a user namespace (root without user namespaces: the tests would keep root's real capabilities, e.g. mknod and chown outside the workspace)"
                    .into(),
            );
        }
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
        if !self.processes {
            out.push(
                "a PID namespace (the tests can see, signal and limit other processes, and a process that enters another namespace can outlive the run)"
                    .into(),
            );
        }
        if !self.metadata {
            out.push(
                "a read-only view outside the workspace (chmod, utime and xattrs work on files outside it; needs mount_setattr, Linux 5.12)"
                    .into(),
            );
        }
        if !self.layer {
            out.push(
                "a workspace layer (an overlay in the run's mount namespace, Linux 5.11: without it what a run writes lands in the workspace and is found afterwards by a walk with limits)"
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
            user_ns: true,
            pid_ns: true,
            read_only_view: true,
            root: false,
            seccomp: true,
            limits: true,
            run_groups: true,
            layer: true,
            disk_held: true,
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
            user_ns: false,
            pid_ns: false,
            read_only_view: false,
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
    fn limits_per_process_only_are_said_so() {
        let grouped = State::of(&offered(6), false);
        assert_eq!(
            grouped.limits_line(),
            "memory, processes and disk for the whole run"
        );
        let per_process = State::of(
            &Offered {
                run_groups: false,
                ..offered(6)
            },
            false,
        );
        assert!(
            per_process.limits_line().contains("per process only"),
            "{}",
            per_process.limits_line()
        );
        // Isolation is what the label says; limits are a line of their own.
        assert_eq!(per_process.label(), grouped.label());
        assert!(State::off().limits_line().contains("off"));
        let sampled = State::of(
            &Offered {
                disk_held: false,
                ..offered(6)
            },
            false,
        );
        assert!(sampled.limits_line().contains("read every 50 ms"));
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
                run_groups: false,
                ..offered(7)
            },
            true,
        );
        assert_eq!(state.missing(), ["resource limits and the subreaper"]);
        let state = State::of(
            &Offered {
                pid_ns: false,
                ..offered(7)
            },
            false,
        );
        assert_eq!(state.label(), "sandbox: other processes reachable");
        assert!(state.missing()[0].starts_with("a PID namespace"));
        assert_eq!(State::off().label(), "not sandboxed");
        assert!(!State::off().complete());
    }

    #[test]
    fn a_kernel_without_the_workspace_layer_is_never_called_sandboxed() {
        let state = State::of(
            &Offered {
                layer: false,
                ..offered(7)
            },
            false,
        );
        assert!(!state.layer);
        assert_eq!(state.label(), "sandbox: no workspace layer");
        assert!(!state.complete());
        assert!(state.missing()[0].starts_with("a workspace layer"));
        // The layer lives in the run's mount namespace: none without one.
        let bare = State::of(
            &Offered {
                namespaces: false,
                ..offered(7)
            },
            false,
        );
        assert!(!bare.layer);
        assert!(State::of(&offered(7), false).layer);
    }

    #[test]
    fn root_without_user_namespaces_is_sandboxed_only_with_the_other_namespaces() {
        // Namespaces made without a user namespace: the run drops every
        // capability, so root is root by its uid only.
        let real_root = Offered {
            user_ns: false,
            root: true,
            ..offered(7)
        };
        assert_eq!(State::of(&real_root, false).label(), "sandboxed");
        // No namespaces at all: nothing to drop the capabilities in.
        let bare = Offered {
            namespaces: false,
            ..real_root
        };
        let state = State::of(&bare, false);
        assert_eq!(state.label(), "not sandboxed: root without user namespaces");
        assert!(!state.complete());
        assert!(state.missing()[0].contains("root without user namespaces"));
        // The same kernel for another user is fine, and so is root with one.
        let user = State::of(
            &Offered {
                root: false,
                ..real_root
            },
            false,
        );
        assert_eq!(user.label(), "sandboxed");
        let root = State::of(
            &Offered {
                root: true,
                ..offered(7)
            },
            false,
        );
        assert_eq!(root.label(), "sandboxed");
    }
}
