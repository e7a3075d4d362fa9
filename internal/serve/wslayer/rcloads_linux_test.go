package wslayer

import (
	"path/filepath"
	"testing"
)

// What an allowed .envrc loads is protected whether or not it is there and whatever its name
// looks like (attack round atk40 F11): a bare dotenv's .env, dotenv_if_exists .env.local,
// source_env_if_exists .envrc.private (every .env* name beside the .envrc), the words after
// direnv's loading verbs (watch_file, source_up's in the directories above, a path built from
// a variable by its literal start), and use nix's files. Ordinary files, and .env beside no
// .envrc, are applied.
func TestCommitFollowsEnvrcLoads(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".envrc"), "source_env_if_exists .envrc.private\ndotenv\ndotenv_if_exists .env.local\n"+
		"watch_file config/settings\nuse nix\nsource_env_if_exists \"$PWD/envs/$USER\"  # per user\n[ -f x ] && source secrets/env\n")
	write(t, filepath.Join(ws, ".env"), "A=1\n")
	write(t, filepath.Join(ws, "app", ".envrc"), "source_up_if_exists .envrc.up\ndotenv .env.production\n")
	commitJudges(t, ws, []string{".env", ".env.local", ".envrc.private", "shell.nix", "default.nix", "config/settings",
		"envs/alice", "secrets/env", "app/.env.production", "app/.env", "app/.envrc.up"},
		[]string{"notes.txt", "envs.md", "other/.env", "config/other", "app/main.py"})
}

// What a trusted mise config loads at a cd is protected whether or not it is there (attack
// round atk40 F11): the strings of its env directives (_.file, _.source, _.path, in any TOML
// spelling), a {{config_root}} path, a templated one by its literal start, and a path that
// starts with another template protects the config's directory whole. Its ordinary values
// (NODE_ENV = "production") are not paths it loads.
func TestCommitFollowsMiseLoads(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "mise.toml"), "[env]\n_.file = [\".env.shared\", \".env.{{env.USER}}\"]\n_.source = \"env.d/setup\"\n"+
		"_.path = [\n  \"{{config_root}}/tools/bin\", # ours\n  'node_modules/.bin',\n]\nNODE_ENV = \"production\"\n"+
		"[env._.source]\npath = \"scripts/activate\"\n")
	write(t, filepath.Join(ws, "sub", "mise.toml"), "[env]\n_ = { source = \"{{vars.root}}/setup\" }\n")
	commitJudges(t, ws, []string{".env.shared", ".env.alice", "env.d/setup", "tools/bin/ls", "scripts/activate", "sub/anything.sh"},
		[]string{"production/x", "notes.txt", "scripts/other", "tools/readme.md"})
}
