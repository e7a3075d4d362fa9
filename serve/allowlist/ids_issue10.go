package allowlist

// Layer IDs of issue 10's layers (listed in LayerIDs with the others).
const (
	LayerPrivateTmp  = "private /tmp"
	LayerProtectedRO = "protected paths read-only"
)
