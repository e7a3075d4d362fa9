package allowlist

// Layer ID of issue 14's layer (listed in LayerIDs with the others).
const LayerEgressProxy = "egress proxy"
