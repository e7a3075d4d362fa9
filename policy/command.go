package policy

// Command is one allowlisted binary, pinned by its path and sha256 (the allowlist scheme's
// commands; init pins them).
type Command struct {
	Name     string   `toml:"name" json:"name"`
	Path     string   `toml:"path" json:"path"`
	SHA256   string   `toml:"sha256" json:"sha256"`
	DenyArgs []string `toml:"deny_args,omitempty" json:"deny_args,omitempty"`
	// AllowOutsidePaths lets path-like arguments resolve outside the workspace (reads only:
	// the kernel still confines writes to the workspace).
	AllowOutsidePaths bool `toml:"allow_outside_paths,omitempty" json:"allow_outside_paths,omitempty"`
}
