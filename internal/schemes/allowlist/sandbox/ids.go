package sandbox

// Layer IDs: the names Layers reports and explain's threat table matches, shared as constants
// so the two can never drift apart through a typo.
const (
	LayerPinnedExec     = "pinned exec"
	LayerCleanEnv       = "clean environment"
	LayerUnprivileged   = "unprivileged user"
	LayerUserNS         = "user namespace"
	LayerPIDNS          = "pid namespace"
	LayerNetIsolation   = "network isolation"
	LayerNetNS          = "network namespace"
	LayerIPCNS          = "ipc/uts namespaces"
	LayerLandlockFS     = "landlock: filesystem"
	LayerLandlockTrunc  = "landlock: truncate outside workspace"
	LayerLandlockTCP    = "landlock: TCP bind/connect"
	LayerLandlockScoped = "landlock: signals and abstract unix sockets scoped"
	LayerLandlockUnix   = "landlock: pathname unix sockets"
	LayerLandlockUDP    = "landlock: UDP"
	LayerSeccomp        = "seccomp"
	LayerNoNewPrivs     = "no_new_privs"
	LayerRlimits        = "rlimits"
	LayerProcessLimit   = "process limit"
	LayerCPUShare       = "cpu share"
	LayerPrivateTmp     = "private /tmp"
	LayerProtectedRO    = "protected paths read-only"
	LayerEgressProxy    = "egress proxy"
	LayerWorkspace      = "transactional workspace"
)

// LayerIDs lists every layer ID in the order Layers reports them.
var LayerIDs = []string{LayerPinnedExec, LayerCleanEnv, LayerUnprivileged, LayerUserNS, LayerPIDNS, LayerNetIsolation,
	LayerNetNS, LayerIPCNS, LayerLandlockFS, LayerLandlockTrunc, LayerLandlockTCP, LayerLandlockScoped, LayerLandlockUnix,
	LayerLandlockUDP, LayerSeccomp, LayerNoNewPrivs, LayerRlimits, LayerProcessLimit, LayerCPUShare,
	LayerPrivateTmp, LayerProtectedRO, LayerEgressProxy, LayerWorkspace}
