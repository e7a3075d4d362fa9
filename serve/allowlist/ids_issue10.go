package allowlist

// Layer IDs added for issue 10 (kept apart from ids.go for a clean merge; append them to LayerIDs).
const (
	LayerPrivateTmp  = "private /tmp"
	LayerProtectedRO = "protected paths read-only"
)
